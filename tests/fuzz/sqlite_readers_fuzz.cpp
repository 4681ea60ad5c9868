// Fuzz target for the SQLite profile readers (Nsight Systems export, rocprof v1 results.db, rocpd):
// bytes -> a scratch file -> each reader's accepts() and read(). Bad input must end in a
// perflow::Error, never a crash, a hang or another exception; a trace that is read must keep
// the readers' promises (reader_fuzz.hpp). Built with clang's -fsanitize=fuzzer when
// PERFLOW_FUZZ=ON; every build replays tests/fuzz/corpus/sqlite_readers under ctest.
#include <cstddef>
#include <cstdint>

#include "reader_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return perflow::reader::fuzz::run_readers(data, size, "sqlite_readers_fuzz", ".sqlite",
                                            {"nsys-sqlite", "rocprof-v1-db", "rocpd"});
}
