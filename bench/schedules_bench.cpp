// Every registered schedule at about a million tasks: "plan" is the schedule alone (what
// an automatic scheduler such as zb spends deciding the order), "end to end" is plan +
// build + freeze + simulate. Also every schedule's plan on a wide pipeline, 4096 stages x 8
// microbatches (197k tasks at two chunks), where a planner whose cost grows with stages
// squared stands out. Registered from the schedule registry, so a new schedule is
// benchmarked without touching this file. Run: make bench.
#include <benchmark/benchmark.h>

#include <string>

#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace {

using namespace perflow;

const parallel::CostTable kCosts(parallel::TaskCosts{1'315'000, 2'733'000, 2'650'000, 1.0, 0.0});

// p devices, v = the first chunk count the schedule accepts, m = microbatches(v).
std::optional<parallel::PipelineSpec> accepted_spec(const parallel::ScheduleInfo& info,
                                                    std::uint32_t p,
                                                    std::uint32_t (*microbatches)(std::uint32_t)) {
  for (std::uint32_t v = 1; v <= 2; ++v) {
    parallel::PipelineSpec spec;
    spec.schedule = info.name;
    spec.stages = p;
    spec.chunks = v;
    spec.microbatches = microbatches(v);
    try {
      (void)parallel::plan_schedule(spec, kCosts);
      return spec;
    } catch (const ScheduleError&) {
    }
  }
  return std::nullopt;
}

void BM_Plan(benchmark::State& state, parallel::PipelineSpec spec) {
  std::size_t steps = 0;
  for (auto _ : state) {
    const parallel::PipelinePlan plan = parallel::plan_schedule(spec, kCosts);
    steps = 0;
    for (const auto& program : plan.programs) steps += program.size();
    benchmark::DoNotOptimize(steps);
  }
  state.counters["tasks"] = static_cast<double>(steps);
}

void BM_ScheduleEndToEnd(benchmark::State& state, parallel::PipelineSpec spec) {
  std::size_t tasks = 0;
  for (auto _ : state) {
    const EventGraph graph = parallel::build_schedule(spec, kCosts);
    const auto result = simulator::simulate(graph, simulator::SimulationOptions{1000});
    tasks = graph.task_count();
    benchmark::DoNotOptimize(result.metrics.makespan);
  }
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["tasks_per_s"] =
      benchmark::Counter(static_cast<double>(tasks) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

std::string size_name(const parallel::PipelineSpec& spec) {
  return "/p" + std::to_string(spec.stages) + "/m" + std::to_string(spec.microbatches) + "/v" +
         std::to_string(spec.chunks);
}

}  // namespace

int main(int argc, char** argv) {
  for (const auto& info : parallel::builtin_schedules().all()) {
    // About 1M tasks: p = 128, m = 4096 / v.
    const auto spec = accepted_spec(info, 128, [](std::uint32_t v) { return 4096 / v; });
    if (!spec) continue;  // e.g. custom: needs a user order
    benchmark::RegisterBenchmark(("BM_Plan/" + info.name + size_name(*spec)).c_str(), BM_Plan,
                                 *spec)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_ScheduleEndToEnd/" + info.name + size_name(*spec)).c_str(),
                                 BM_ScheduleEndToEnd, *spec)
        ->Unit(benchmark::kMillisecond);
  }
  for (const auto& info : parallel::builtin_schedules().all()) {
    // Wide: p = 4096, m = 8.
    const auto spec = accepted_spec(info, 4096, [](std::uint32_t) { return 8u; });
    if (!spec) continue;
    benchmark::RegisterBenchmark(("BM_PlanWide/" + info.name + size_name(*spec)).c_str(), BM_Plan,
                                 *spec)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
