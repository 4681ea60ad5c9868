// Fuzz target for the SQLite profile readers (Nsight Systems export, rocprof v1 results.db):
// bytes -> a temporary file -> each reader's accepts() and read(). Bad input must end in a
// perflow::Error, never a crash, a hang or another exception; a trace that is read must keep
// the readers' promises (start <= end, names interned). Built with clang's -fsanitize=fuzzer
// when PERFLOW_FUZZ=ON; every build replays tests/fuzz/corpus/sqlite_readers under ctest.
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

// SQLite's companion files: a stale one would make the next input's outcome depend on this one.
void remove_with_companions(const std::filesystem::path& path) {
  std::error_code ignored;
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) {
    std::filesystem::remove(path.string() + suffix, ignored);
  }
}

void check(const perflow::reader::KernelTrace& trace) {
  const auto named = [&](std::uint32_t name) { return name < trace.names.size(); };
  for (const auto& op : trace.ops) {
    if (op.end < op.start || !named(op.name)) std::abort();
  }
  for (const auto& launch : trace.launches) {
    if (launch.end < launch.start) std::abort();
  }
  for (const auto& range : trace.ranges) {
    if (range.end < range.start || !named(range.name)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The readers take a path: one scratch file per fuzzing process, removed at exit.
  struct ScratchFile {
    std::filesystem::path path;
    ~ScratchFile() { remove_with_companions(path); }
  };
  static const ScratchFile scratch{
      std::filesystem::temp_directory_path() /
      ("perflow_sqlite_readers_fuzz_" + std::to_string(::getpid()) + ".sqlite")};
  const std::filesystem::path& path = scratch.path;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  remove_with_companions(path);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const perflow::reader::FileSniff sniff{path, bytes.substr(0, 64 * 1024), false};
  for (const perflow::reader::ProfileReader& reader : perflow::reader::profile_readers()) {
    if (reader.name != "nsys-sqlite" && reader.name != "rocprof-v1-db") continue;
    (void)reader.accepts(sniff);
    try {
      check(reader.read(path));
    } catch (const perflow::Error&) {
      // The expected outcome for bad input.
    }
  }
  return 0;
}
