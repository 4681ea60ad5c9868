// Fuzz target for the CSV and text profile readers (nsys stats CSV, rocprofv3 CSV, rocprof v1
// results.csv, rocprofv2 text): bytes -> a temporary file -> each reader's accepts() and read().
// Bad input must end in a perflow::Error, never a crash, a hang or another exception. Built with
// clang's -fsanitize=fuzzer when PERFLOW_FUZZ=ON; every build replays
// tests/fuzz/corpus/csv_readers under ctest.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include <unistd.h>

#include "perflow/core/error.hpp"
#include "perflow/reader/profile_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The readers take a path: one scratch file per fuzzing process, removed at exit.
  struct ScratchFile {
    std::filesystem::path path;
    ~ScratchFile() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  };
  static const ScratchFile scratch{
      std::filesystem::temp_directory_path() /
      ("perflow_csv_readers_fuzz_" + std::to_string(::getpid()) + ".csv")};
  const std::filesystem::path& path = scratch.path;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const perflow::reader::FileSniff sniff{path, bytes.substr(0, 64 * 1024), false};
  for (const perflow::reader::ProfileReader& reader : perflow::reader::profile_readers()) {
    if (reader.name != "nsys-csv" && reader.name != "rocprofv3-csv" &&
        reader.name != "rocprof-v1-csv" && reader.name != "rocprofv2-text") {
      continue;
    }
    (void)reader.accepts(sniff);
    try {
      (void)reader.read(path);
    } catch (const perflow::Error&) {
      // The expected outcome for bad input.
    }
  }
  return 0;
}
