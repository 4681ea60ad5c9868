#include "detail/decompressed_file.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <zlib.h>

#include "perflow/reader/profile_error.hpp"

namespace perflow::reader::detail {

namespace {

// The expected size of the content, so the buffer is allocated once: gzip's trailer holds the
// uncompressed size modulo 2^32 (a hint only), a plain file's size is exact.
std::size_t size_hint(const std::filesystem::path& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) return 0;
  std::array<unsigned char, 4> bytes{};
  if (std::fread(bytes.data(), 1, 2, file.get()) != 2) return 0;
  const bool gzip = bytes[0] == 0x1f && bytes[1] == 0x8b;
  if (std::fseek(file.get(), gzip ? -4 : 0, SEEK_END) != 0) return 0;
  if (!gzip) return static_cast<std::size_t>(std::max(0L, std::ftell(file.get())));
  const long compressed = std::ftell(file.get()) + 4;
  if (std::fread(bytes.data(), 1, 4, file.get()) != 4) return 0;
  const std::size_t trailer = std::size_t{bytes[0]} | std::size_t{bytes[1]} << 8U |
                              std::size_t{bytes[2]} << 16U | std::size_t{bytes[3]} << 24U;
  // A cut-off file ends in arbitrary bytes: trust the trailer only up to a plausible ratio.
  return std::min(trailer, 64 * static_cast<std::size_t>(std::max(0L, compressed)));
}

}  // namespace

DecompressedFile read_decompressed(const std::filesystem::path& path, std::size_t padding) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), &gzclose);
  if (!file) throw ProfileError(path.string(), "", "expected a readable file, found none");
  gzbuffer(file.get(), 256 * 1024);
  DecompressedFile out;
  // One byte more than the hint, so the end of the stream is seen without growing.
  out.bytes.resize(size_hint(path) + 1);
  while (true) {
    if (out.size == out.bytes.size()) out.bytes.resize(2 * out.bytes.size());
    const auto want =
        static_cast<unsigned>(std::min<std::size_t>(out.bytes.size() - out.size, 1U << 30U));
    const int n = gzread(file.get(), out.bytes.data() + out.size, want);
    if (n > 0) out.size += static_cast<std::size_t>(n);
    int code = Z_OK;
    const char* reason = gzerror(file.get(), &code);
    // A cut-off stream ends with Z_BUF_ERROR ("unexpected end of file") rather than n < 0.
    if (n < 0 || (code != Z_OK && code != Z_STREAM_END)) {
      // zlib prefixes its reason with the path ("path: unexpected end of file").
      std::string_view why = reason != nullptr && *reason != '\0' ? reason : "a damaged stream";
      const std::string prefix = path.string() + ": ";
      if (why.starts_with(prefix)) why.remove_prefix(prefix.size());
      throw ProfileError(path.string(), fmt::format("byte {}", out.size),
                         fmt::format("expected the rest of the gzip stream, found {}", why));
    }
    if (n == 0) break;
  }
  out.bytes.resize(out.size + padding);
  std::fill(out.bytes.begin() + static_cast<std::ptrdiff_t>(out.size), out.bytes.end(), '\0');
  return out;
}

}  // namespace perflow::reader::detail
