#include "perflow/reader/profile_reader.hpp"

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <zlib.h>

#include "detail/readers.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/reader/profile_error.hpp"

namespace perflow::reader {

namespace {

constexpr std::size_t kSniffBytes = 64 * 1024;

bool is_gzip(const std::filesystem::path& path) {
  std::array<unsigned char, 2> magic{};
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) return false;
  return std::fread(magic.data(), 1, 2, file.get()) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

// The first bytes of the content; gzread passes plain files through unchanged. A damaged
// gzip stream yields whatever decompressed before the damage; the reader reports it.
std::string read_head(const std::filesystem::path& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw ProfileError(path.string(), "", "cannot open the file");
  std::string head(kSniffBytes, '\0');
  const int n = gzread(file, head.data(), static_cast<unsigned>(head.size()));
  gzclose(file);
  head.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return head;
}

// Files users mistake for profiles: execution traces hold the host op graph, not GPU times.
std::string not_a_profile(std::string_view head) {
  if (head.substr(0, 32).find("\x0a\x06schema") != std::string_view::npos) {
    return "found a Chakra execution trace (protobuf: a dependency graph with integer-us "
           "durations, no devices or streams), not a GPU profile; give the PyTorch profiler "
           "(Kineto) trace it was converted from";
  }
  const std::size_t open = head.find_first_not_of(" \t\r\n");
  if (open != std::string_view::npos && head[open] == '{' &&
      head.find("\"nodes\"") != std::string_view::npos &&
      head.find("\"schema\"") != std::string_view::npos &&
      head.find("\"traceEvents\"") == std::string_view::npos) {
    return "found a PyTorch execution trace (ExecutionTraceObserver: the host op graph, no "
           "GPU times), not a GPU profile; give the PyTorch profiler (Kineto) trace of the "
           "same run";
  }
  return {};
}

}  // namespace

std::span<const ProfileReader> profile_readers() {
  static const std::vector<ProfileReader> kReaders = detail::builtin_readers();
  return kReaders;
}

KernelTrace read_profile(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    const std::string kind = file_kind(path);
    throw ProfileError(path.string(), "",
                       "expected a profile file, found " + (kind.empty() ? "no such file" : kind));
  }
  const std::string head = read_head(path);
  const FileSniff sniff{path, head, is_gzip(path)};
  std::string known;
  for (const ProfileReader& reader : profile_readers()) {
    if (reader.accepts(sniff)) return reader.read(path);
    known += fmt::format("{}{} ({})", known.empty() ? "" : ", ", reader.name, reader.description);
  }
  if (head.empty()) {
    throw ProfileError(path.string(), "", "expected a profile, found an empty file");
  }
  if (const std::string other = not_a_profile(head); !other.empty()) {
    throw ProfileError(path.string(), "", "expected a profile, " + other);
  }
  throw ProfileError(path.string(), "",
                     "not a profile format PerFlow reads; known formats: " + known);
}

}  // namespace perflow::reader
