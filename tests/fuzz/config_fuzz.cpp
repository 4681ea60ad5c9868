// Fuzz target for the config path: JSON text -> parse_config -> build_graph -> simulate.
// Bad input must end in a perflow::Error (what the CLI reports as a usage error), never a
// crash, a hang or another exception. Built with clang's -fsanitize=fuzzer when
// PERFLOW_FUZZ=ON; every build replays tests/fuzz/corpus/config under ctest.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "perflow/core/error.hpp"
#include "perflow/core/json_cursor.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto document = perflow::parse_json_text(text, "fuzz.json");
    const perflow::study::Config config = perflow::study::parse_config(document, "fuzz.json");
    // Valid but huge pipelines are legal input; keep each run fast.
    const std::uint64_t tasks = std::uint64_t{config.pipeline.stages} *
                                config.pipeline.microbatches * config.pipeline.chunks;
    if (tasks > 20'000) return 0;
    const perflow::EventGraph graph = perflow::study::build_graph(config);
    (void)perflow::study::simulate(config, graph);
  } catch (const perflow::Error&) {
    // The expected outcome for bad input.
  }
  return 0;
}
