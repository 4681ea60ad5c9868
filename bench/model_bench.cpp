// Deriving a config from /model (parse, split the layers, price every operator of every
// (stage, chunk)) against simulating the graph it gives: the derivation should be noise.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>

#include "perflow/core/json_cursor.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

namespace {

nlohmann::json example(const char* name) {
  return perflow::read_json_file(std::string(PERFLOW_SOURCE_DIR "/examples/") + name);
}

void BM_DeriveConfig(benchmark::State& state, const char* name) {
  const nlohmann::json doc = example(name);
  for (auto _ : state) {
    perflow::study::Config config = perflow::study::parse_config(doc, name);
    benchmark::DoNotOptimize(config);
  }
}

void BM_BuildAndSimulate(benchmark::State& state, const char* name) {
  const perflow::study::Config config = perflow::study::parse_config(example(name), name);
  for (auto _ : state) {
    const perflow::EventGraph graph = perflow::study::build_graph(config);
    benchmark::DoNotOptimize(perflow::study::simulate(config, graph));
  }
}

}  // namespace

BENCHMARK_CAPTURE(BM_DeriveConfig, gpt3_175b_a100, "gpt3_175b_a100.json")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_BuildAndSimulate, gpt3_175b_a100, "gpt3_175b_a100.json")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_DeriveConfig, llama3_70b_h100_a100, "llama3_70b_h100_a100.json")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_BuildAndSimulate, llama3_70b_h100_a100, "llama3_70b_h100_a100.json")
    ->Unit(benchmark::kMicrosecond);
