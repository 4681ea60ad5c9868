#include "detail/byte_source.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/format.h>
#include <zlib.h>

#include "perflow/reader/profile_error.hpp"

namespace perflow::reader::detail {

namespace {
constexpr unsigned kGzBufferBytes = 1U << 20;  // zlib's default 8 KiB costs syscalls
}

GzFileSource::GzFileSource(const std::filesystem::path& path) : name_(path.string()) {
  errno = 0;
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    throw ProfileError(name_, "",
                       fmt::format("cannot open the file: {}",
                                   errno != 0 ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(file_, kGzBufferBytes);
}

GzFileSource::~GzFileSource() { gzclose(file_); }

std::size_t GzFileSource::read(std::span<char> out) {
  if (done_ || out.empty()) return 0;
  const auto want = static_cast<unsigned>(std::min<std::size_t>(out.size(), INT_MAX));
  const int n = gzread(file_, out.data(), want);
  if (n > 0) {
    offset_ += static_cast<std::uint64_t>(n);
    return static_cast<std::size_t>(n);
  }
  // gzread reports a truncated stream as a plain end (0) with Z_BUF_ERROR set, so both a
  // short read and an error have to ask gzerror.
  int code = Z_OK;
  const char* message = gzerror(file_, &code);
  done_ = true;
  const std::string where = fmt::format("byte {}", offset_);
  // gzerror prefixes the path, which ProfileError already names.
  std::string_view reason = message;
  if (reason.starts_with(name_ + ": ")) reason.remove_prefix(name_.size() + 2);
  if (code == Z_BUF_ERROR) {
    throw ProfileError(name_, where,
                       "expected the rest of the gzip stream, found a truncated file (the byte "
                       "offset counts decompressed bytes)");
  }
  if (code != Z_OK || n < 0) {
    throw ProfileError(
        name_, where,
        fmt::format("expected a valid gzip stream, found damaged data ({}; the "
                    "byte offset counts decompressed bytes)",
                    code == Z_ERRNO ? std::string_view(std::strerror(errno)) : reason));
  }
  return 0;
}

std::size_t MemorySource::read(std::span<char> out) {
  const std::size_t n = std::min(out.size(), bytes_.size());
  if (n == 0) return 0;
  std::memcpy(out.data(), bytes_.data(), n);
  bytes_.remove_prefix(n);
  offset_ += n;
  return n;
}

}  // namespace perflow::reader::detail
