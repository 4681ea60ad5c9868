// Fuzz target for the rocprofv3 JSON reader: bytes -> a temporary file -> its accepts() and
// read() (the reader takes a path: it decompresses gzip and parses the whole text with
// simdjson, so there are no chunk boundaries to vary). Bad input must end in a perflow::Error,
// never a crash, a hang or another exception; a trace that is read must keep the reader's
// promises (start <= end, names interned). Built with clang's -fsanitize=fuzzer when
// PERFLOW_FUZZ=ON; every build replays tests/fuzz/corpus/rocprof_json under ctest.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include <unistd.h>

#include "perflow/core/error.hpp"
#include "perflow/reader/profile_reader.hpp"

namespace {

void check(const perflow::reader::KernelTrace& trace) {
  const auto named = [&](std::uint32_t name) { return name < trace.names.size(); };
  for (const auto& op : trace.ops) {
    if (op.end < op.start || op.start < 0 || !named(op.name)) std::abort();
  }
  for (const auto& launch : trace.launches) {
    if (launch.end < launch.start || launch.start < 0) std::abort();
  }
  for (const auto& range : trace.ranges) {
    if (range.end < range.start || range.start < 0 || !named(range.name)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One scratch file per fuzzing process, removed at exit.
  struct ScratchFile {
    std::filesystem::path path;
    ~ScratchFile() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  };
  static const ScratchFile scratch{
      std::filesystem::temp_directory_path() /
      ("perflow_rocprof_json_fuzz_" + std::to_string(::getpid()) + ".json")};
  const std::filesystem::path& path = scratch.path;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const bool gzip = bytes.starts_with("\x1f\x8b");
  const perflow::reader::FileSniff sniff{path, bytes.substr(0, 64 * 1024), gzip};
  for (const perflow::reader::ProfileReader& reader : perflow::reader::profile_readers()) {
    if (reader.name != "rocprofv3-json") continue;
    (void)reader.accepts(sniff);
    try {
      check(reader.read(path));
    } catch (const perflow::Error&) {
      // The expected outcome for bad input.
    }
  }
  return 0;
}
