// The task table of a huge trace: 1F1B on 128 devices with about a million tasks, rendered
// as CSV and as JSON lines. Reports tasks per second and bytes per task. Run: make bench,
// or build/release/bench/perflow_task_table_bench.
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <utility>

#include "perflow/core/task_table.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace {

using namespace perflow;

struct Simulated {
  EventGraph graph;
  simulator::SimulationResult result;
};

/// One simulated 1F1B trace per size, shared by both formats.
const Simulated& trace_of(std::uint32_t stages, std::uint32_t microbatches) {
  static std::map<std::pair<std::uint32_t, std::uint32_t>, Simulated> cache;
  auto [it, inserted] = cache.try_emplace({stages, microbatches});
  if (inserted) {
    parallel::PipelineSpec spec;
    spec.schedule = "1f1b";
    spec.stages = stages;
    spec.microbatches = microbatches;
    const parallel::CostTable costs(parallel::TaskCosts{1'315'000, 2'733'000, 2'650'000, 1.0, 0.0});
    it->second.graph = parallel::build_schedule(spec, costs);
    it->second.result = simulator::simulate(it->second.graph);
  }
  return it->second;
}

void BM_TaskTable(benchmark::State& state, TaskTableFormat format) {
  const Simulated& run = trace_of(static_cast<std::uint32_t>(state.range(0)),
                                  static_cast<std::uint32_t>(state.range(1)));
  const auto tasks = static_cast<double>(run.graph.task_count());
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string out = render_task_table(run.graph, run.result.trace, format);
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["tasks"] = tasks;
  state.counters["tasks_per_s"] = benchmark::Counter(
      tasks * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["bytes_per_task"] = static_cast<double>(bytes) / tasks;
}

// {stages, microbatches}: 131k and 1.05M tasks.
void sizes(benchmark::internal::Benchmark* b) {
  b->Args({64, 1024})->Args({128, 4096})->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(BM_TaskTable, csv, TaskTableFormat::Csv)->Apply(sizes);
BENCHMARK_CAPTURE(BM_TaskTable, jsonl, TaskTableFormat::Jsonl)->Apply(sizes);

}  // namespace
