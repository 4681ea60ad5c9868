// Search end to end: a 70B model on 1,024 GPUs (issue 15's realistic search), every default
// of the space (schedules, depths, tensor parallelism, micro-batches, chunks, recompute and,
// on the mixed cluster, placements and layer splits): enumerate, prune, simulate, rank.
#include <benchmark/benchmark.h>

#include <string>

#include "perflow/explore/search.hpp"

namespace {

perflow::explore::Search llama70b_search(const std::string& gpus,
                                         const std::vector<std::string>& order) {
  const nlohmann::json document = nlohmann::json::parse(R"({
    "base": {"model": {"preset": "llama3-70b"},
             "training": {"global_batch_size": 1024, "precision": "bf16",
                          "sequence_parallel": true, "distributed_optimizer": true}},
    "cluster": {"gpus": )" + gpus + R"(, "devices_per_node": 8},
    "top": 10
  })");
  return perflow::explore::parse_search(document, order, "bench.json");
}

void run(benchmark::State& state, const perflow::explore::Search& search) {
  perflow::explore::SearchOptions options;
  options.jobs = static_cast<unsigned>(state.range(0));
  perflow::explore::SearchCounts counts;
  for (auto _ : state) {
    const perflow::explore::SearchResult result = perflow::explore::run_search(search, options);
    counts = result.counts;
    benchmark::DoNotOptimize(result.best.data());
  }
  state.counters["considered"] = static_cast<double>(counts.considered);
  state.counters["simulated"] = static_cast<double>(counts.simulated);
  state.counters["simulated/s"] = benchmark::Counter(
      static_cast<double>(counts.simulated) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

void BM_SearchLlama70b1024H100(benchmark::State& state) {
  run(state, llama70b_search(R"({"H100": {"preset": "h100-sxm", "count": 1024}})", {"H100"}));
}
BENCHMARK(BM_SearchLlama70b1024H100)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SearchLlama70b512H100512A100(benchmark::State& state) {
  run(state, llama70b_search(R"({"H100": {"preset": "h100-sxm", "count": 512},
                                  "A100": {"preset": "a100-80gb", "count": 512}})",
                             {"H100", "A100"}));
}
BENCHMARK(BM_SearchLlama70b512H100512A100)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
