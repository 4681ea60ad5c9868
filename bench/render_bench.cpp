// Rendering a huge trace: 1F1B on 128 devices with about a million tasks, drawn as an SVG
// and a PNG timeline (density aggregation merges the sub-point boxes), and written as a
// Chrome trace. Reports the time and the output's size in bytes. Run: make bench, or
// build/release/bench/perflow_render_bench.
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <tuple>

#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/visualizer/chrome_trace.hpp"
#include "perflow/visualizer/timeline.hpp"

namespace {

using namespace perflow;

struct Simulated {
  EventGraph graph;
  simulator::SimulationResult result;
};

/// One simulated trace per size, shared by every benchmark of that size.
const Simulated& trace_of(std::uint32_t stages, std::uint32_t microbatches, bool split) {
  static std::map<std::tuple<std::uint32_t, std::uint32_t, bool>, Simulated> cache;
  auto [it, inserted] = cache.try_emplace({stages, microbatches, split});
  if (inserted) {
    parallel::PipelineSpec spec;
    spec.schedule = "1f1b";
    spec.stages = stages;
    spec.microbatches = microbatches;
    spec.split_backward = split;
    const parallel::CostTable costs(parallel::TaskCosts{1'315'000, 2'733'000, 2'650'000, 1.0, 0.5});
    it->second.graph = parallel::build_schedule(spec, costs);
    it->second.result = simulator::simulate(it->second.graph);
  }
  return it->second;
}

void report(benchmark::State& state, const Simulated& run, std::size_t bytes) {
  state.counters["tasks"] = static_cast<double>(run.graph.task_count());
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["bytes_per_task"] =
      static_cast<double>(bytes) / static_cast<double>(run.graph.task_count());
}

void BM_Timeline(benchmark::State& state, visualizer::ImageFormat format, bool memory_chart) {
  const Simulated& run = trace_of(static_cast<std::uint32_t>(state.range(0)),
                                  static_cast<std::uint32_t>(state.range(1)), state.range(2) != 0);
  visualizer::TimelineOptions options;
  options.title = "1F1B";
  options.memory_chart = memory_chart;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string out = visualizer::render_timeline(run.graph, run.result.trace,
                                                        run.result.metrics, options, format);
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  report(state, run, bytes);
}

void BM_ChromeTrace(benchmark::State& state) {
  const Simulated& run = trace_of(static_cast<std::uint32_t>(state.range(0)),
                                  static_cast<std::uint32_t>(state.range(1)), state.range(2) != 0);
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string out = visualizer::render_chrome_trace(run.graph, run.result.trace);
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  report(state, run, bytes);
}

// {stages, microbatches, split backward}: 0.79M tasks (split) and 1.05M tasks (fused).
void sizes(benchmark::internal::Benchmark* b) {
  b->Args({128, 2048, 1})->Args({128, 4096, 0})->Unit(benchmark::kMillisecond)->Iterations(3);
}

BENCHMARK_CAPTURE(BM_Timeline, svg, visualizer::ImageFormat::Svg, false)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Timeline, png, visualizer::ImageFormat::Png, false)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Timeline, pdf, visualizer::ImageFormat::Pdf, false)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Timeline, svg_memory_chart, visualizer::ImageFormat::Svg, true)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Timeline, png_memory_chart, visualizer::ImageFormat::Png, true)->Apply(sizes);
BENCHMARK(BM_ChromeTrace)->Apply(sizes);

}  // namespace
