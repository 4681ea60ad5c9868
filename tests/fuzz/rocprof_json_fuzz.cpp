// Fuzz target for the rocprofv3 JSON reader: bytes -> a scratch file -> its accepts() and
// read() (the reader takes a path: it decompresses gzip and parses the whole text with
// simdjson, so there are no chunk boundaries to vary). Bad input must end in a perflow::Error,
// never a crash, a hang or another exception; a trace that is read must keep the reader's
// promises (reader_fuzz.hpp). Built with clang's -fsanitize=fuzzer when PERFLOW_FUZZ=ON;
// every build replays tests/fuzz/corpus/rocprof_json under ctest.
#include <cstddef>
#include <cstdint>

#include "reader_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return perflow::reader::fuzz::run_readers(data, size, "rocprof_json_fuzz", ".json",
                                            {"rocprofv3-json"});
}
