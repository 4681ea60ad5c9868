// Fuzz target for the CSV and text profile readers (nsys stats CSV, rocprofv3 CSV, rocprof v1
// results.csv, rocprofv2 text): bytes -> a scratch file -> each reader's accepts() and read().
// Bad input must end in a perflow::Error, never a crash, a hang or another exception; a trace
// that is read must keep the readers' promises (reader_fuzz.hpp). Built with clang's
// -fsanitize=fuzzer when PERFLOW_FUZZ=ON; every build replays tests/fuzz/corpus/csv_readers
// under ctest.
#include <cstddef>
#include <cstdint>

#include "reader_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return perflow::reader::fuzz::run_readers(
      data, size, "csv_readers_fuzz", ".csv",
      {"nsys-csv", "rocprofv3-csv", "rocprof-v1-csv", "rocprofv2-text"});
}
