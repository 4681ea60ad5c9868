// Build + freeze + simulate throughput of pipeline schedules, in tasks per second.
// Sizes from the foundation issue: 1F1B at p=64, m=1024 (131k tasks) and p=128, m=4096
// (1M tasks). Run: make bench (Release), or build/release/bench/perflow_bench.
#include <benchmark/benchmark.h>

#include <string_view>

#include "perflow/parallel/data_parallel.hpp"
#include "perflow/parallel/expert_parallel.hpp"
#include "perflow/parallel/offload.hpp"
#include "perflow/parallel/pipeline.hpp"
#include "perflow/parallel/recompute.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/passes/recipe.hpp"
#include "perflow/simulator/lowering.hpp"
#include "perflow/simulator/simulate.hpp"

namespace {

using namespace perflow;

parallel::PipelineSpec spec_of(const benchmark::State& state, const char* schedule) {
  parallel::PipelineSpec spec;
  spec.schedule = schedule;
  spec.stages = static_cast<std::uint32_t>(state.range(0));
  spec.microbatches = static_cast<std::uint32_t>(state.range(1));
  return spec;
}

const parallel::CostTable kCosts(parallel::TaskCosts{1'315'000, 2'733'000, 2'650'000, 1.0, 0.0});

void report_tasks(benchmark::State& state, std::size_t tasks) {
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["tasks_per_s"] =
      benchmark::Counter(static_cast<double>(tasks) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

// Plan the schedule, build the graph and freeze it.
void BM_Build(benchmark::State& state, const char* schedule) {
  const auto spec = spec_of(state, schedule);
  std::size_t tasks = 0;
  for (auto _ : state) {
    const EventGraph graph = parallel::build_schedule(spec, kCosts);
    tasks = graph.task_count();
    benchmark::DoNotOptimize(graph.edge_count());
  }
  report_tasks(state, tasks);
}

// The phases of BM_EndToEnd one by one: planning the schedule, building and freezing the
// graph from the plan, the ordered pass alone, and the metrics of its trace.
void BM_Plan(benchmark::State& state, const char* schedule) {
  const auto spec = spec_of(state, schedule);
  std::size_t tasks = 0;
  for (auto _ : state) {
    const parallel::PipelinePlan plan = parallel::plan_schedule(spec, kCosts);
    tasks = 0;
    for (const auto& program : plan.programs) tasks += program.size();
    benchmark::DoNotOptimize(plan.programs.data());
  }
  report_tasks(state, tasks);
}

void BM_GraphFromPlan(benchmark::State& state, const char* schedule) {
  const parallel::PipelinePlan plan = parallel::plan_schedule(spec_of(state, schedule), kCosts);
  std::size_t tasks = 0;
  for (auto _ : state) {
    const EventGraph graph = parallel::build_pipeline_graph(plan, kCosts);
    tasks = graph.task_count();
    benchmark::DoNotOptimize(graph.edge_count());
  }
  report_tasks(state, tasks);
}

void BM_OrderedPass(benchmark::State& state, const char* schedule) {
  const EventGraph graph = parallel::build_schedule(spec_of(state, schedule), kCosts);
  for (auto _ : state) {
    const Trace trace = simulator::simulate_ordered(graph, simulator::SimulationOptions{1000});
    benchmark::DoNotOptimize(trace.finish.data());
  }
  report_tasks(state, graph.task_count());
}

void BM_Metrics(benchmark::State& state, const char* schedule) {
  const EventGraph graph = parallel::build_schedule(spec_of(state, schedule), kCosts);
  const simulator::SimulationOptions options{1000};
  const Trace trace = simulator::simulate_ordered(graph, options);
  for (auto _ : state) {
    const simulator::Metrics metrics = simulator::compute_metrics(graph, trace, options);
    benchmark::DoNotOptimize(metrics.makespan);
  }
  report_tasks(state, graph.task_count());
}

// Simulate a prebuilt graph (trace + metrics): what a sweep over costs pays per point.
void BM_Simulate(benchmark::State& state, const char* schedule) {
  const EventGraph graph = parallel::build_schedule(spec_of(state, schedule), kCosts);
  for (auto _ : state) {
    const auto result = simulator::simulate(graph, simulator::SimulationOptions{1000});
    benchmark::DoNotOptimize(result.metrics.makespan);
  }
  report_tasks(state, graph.task_count());
}

// End to end: build + freeze + simulate.
void BM_EndToEnd(benchmark::State& state, const char* schedule) {
  const auto spec = spec_of(state, schedule);
  std::size_t tasks = 0;
  for (auto _ : state) {
    const EventGraph graph = parallel::build_schedule(spec, kCosts);
    const auto result = simulator::simulate(graph, simulator::SimulationOptions{1000});
    tasks = graph.task_count();
    benchmark::DoNotOptimize(result.metrics.makespan);
  }
  report_tasks(state, tasks);
}

// Communication as work: add data parallelism (an all-reduce per device and an optimizer
// step), lower every transfer to a SEND on its link lane, then simulate. Reported per task
// of the pipeline as built (the lowered graph has about 1.3x as many).
void BM_LoweredDataParallel(benchmark::State& state, const char* schedule) {
  const EventGraph graph = parallel::build_schedule(spec_of(state, schedule), kCosts);
  simulator::SimulationOptions options(1000);
  options.intra_node = simulator::Link{2000, 50e9};
  options.boundary_bytes.assign(static_cast<std::size_t>(state.range(0)), 64e6);
  parallel::DataParallelSpec dp;
  dp.degree = 8;
  dp.bandwidth = 25e9;
  dp.gradient_bytes.assign(static_cast<std::size_t>(state.range(0)), 1e9);
  dp.optimizer.assign(static_cast<std::size_t>(state.range(0)), 3'000'000);
  std::size_t lowered_tasks = 0;
  for (auto _ : state) {
    const EventGraph lowered =
        simulator::lower_communication(parallel::add_data_parallel(graph, dp), options);
    const auto result = simulator::simulate(lowered, options);
    lowered_tasks = lowered.task_count();
    benchmark::DoNotOptimize(result.metrics.makespan);
  }
  report_tasks(state, graph.task_count());
  state.counters["lowered_tasks"] = static_cast<double>(lowered_tasks);
}

// Making it fit: full recomputation (an R before each BW) and every eligible activation
// offloaded (a copy out and back on each device's host link), then simulate. Reported per
// task of the pipeline as built (the extended graph has about 2.3x as many).
void BM_RecomputeOffload(benchmark::State& state, const char* schedule) {
  parallel::TaskCosts costs = kCosts.uniform();
  costs.recompute = true;
  costs.recompute_forward = costs.forward;
  costs.recompute_activation = 0.1;
  const parallel::CostTable table(costs);
  const EventGraph graph = parallel::build_schedule(spec_of(state, schedule), table);
  parallel::OffloadSpec offload;
  const auto stages = static_cast<std::size_t>(state.range(0));
  offload.ratio.assign(stages, 1.0);
  offload.host_link.assign(stages, parallel::HostLink{2000, 50e9});
  std::size_t extended_tasks = 0;
  for (auto _ : state) {
    const EventGraph extended =
        parallel::add_offload(parallel::add_recompute(graph, table), offload);
    const auto result = simulator::simulate(extended);
    extended_tasks = extended.task_count();
    benchmark::DoNotOptimize(result.metrics.makespan);
  }
  report_tasks(state, graph.task_count());
  state.counters["extended_tasks"] = static_cast<double>(extended_tasks);
}

// Expert parallelism on DualPipe: every F and backward has an all-to-all, the reference's
// forward-backward pairs run as units (overlap_pairs) and the rest get A2A tasks
// (add_all_to_all), then simulate. The plan is made once; reported per task of the pipeline
// as built.
void BM_ExpertParallel(benchmark::State& state, const char* schedule) {
  parallel::TaskCosts costs = kCosts.uniform();
  costs.all_to_all = 900'000;
  const parallel::CostTable table(costs);
  parallel::PipelineSpec spec = spec_of(state, schedule);
  spec.chunks = 2;
  const parallel::PipelinePlan plan = parallel::plan_schedule(spec, table);
  std::size_t tasks = 0;
  std::size_t extended_tasks = 0;
  for (auto _ : state) {
    const EventGraph graph = parallel::build_pipeline_graph(plan, table);
    const EventGraph extended =
        parallel::add_all_to_all(parallel::overlap_pairs(graph, plan, table), table);
    const auto result = simulator::simulate(extended);
    tasks = graph.task_count();
    extended_tasks = extended.task_count();
    benchmark::DoNotOptimize(result.metrics.makespan);
  }
  report_tasks(state, tasks);
  state.counters["extended_tasks"] = static_cast<double>(extended_tasks);
}

// The passes against the plain run, each end to end (plan, build, passes, simulate), as a
// config runs them (study applies the same recipe): 1F1B plain and with full recomputation
// plus half of the activations offloaded; DualPipe (2 chunks) plain and with an all-to-all
// on every F and backward (the pairs run as units, the rest get A2A tasks). Reported per
// task of the pipeline as built.
enum class Passes { None, RecomputeOffload, AllToAll, Fsdp };

void BM_PassesEndToEnd(benchmark::State& state, const char* schedule, Passes which) {
  parallel::TaskCosts costs = kCosts.uniform();
  parallel::PipelineSpec spec = spec_of(state, schedule);
  const auto stages = static_cast<std::size_t>(state.range(0));
  parallel::OffloadSpec offload;
  if (which == Passes::RecomputeOffload) {
    costs.recompute = true;
    costs.recompute_forward = costs.forward;
    costs.recompute_activation = 0.1;
    offload.ratio.assign(stages, 0.5);
    offload.host_link.assign(stages, parallel::HostLink{2000, 50e9});
  }
  if (std::string_view(schedule) == "dualpipe") {
    spec.chunks = 2;
    costs.all_to_all = 900'000;  // in the costs either way; only the passes run it
  }
  // FSDP: every F and BW gathers 2 units (the first, then the other), each BW
  // reduce-scatters both.
  parallel::FsdpSpec fsdp;
  fsdp.units.assign(stages, 2);
  fsdp.gather.assign(stages, 200'000);
  fsdp.reduce.assign(stages, 300'000);
  const parallel::CostTable table(costs);
  std::size_t tasks = 0;
  std::size_t extended_tasks = 0;
  for (auto _ : state) {
    const parallel::PipelinePlan plan = parallel::plan_schedule(spec, table);
    EventGraph graph = parallel::build_pipeline_graph(plan, table);
    tasks = graph.task_count();
    passes::Recipe recipe;
    if (which == Passes::RecomputeOffload) {
      recipe.then(passes::Recompute{table}).then(passes::Offload{offload});
    } else if (which == Passes::AllToAll) {
      recipe.then(passes::OverlapPairs{&plan, table}).then(passes::AllToAll{table});
    } else if (which == Passes::Fsdp) {
      recipe.then(passes::Fsdp{fsdp});
    }
    graph = passes::apply(std::move(graph), recipe);
    const auto result = simulator::simulate(graph, simulator::SimulationOptions{1000});
    extended_tasks = graph.task_count();
    benchmark::DoNotOptimize(result.metrics.makespan);
  }
  report_tasks(state, tasks);
  state.counters["extended_tasks"] = static_cast<double>(extended_tasks);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->Args({64, 1024})->Args({128, 4096})->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(BM_Build, 1f1b, "1f1b")->Apply(sizes);
BENCHMARK_CAPTURE(BM_Plan, 1f1b, "1f1b")->Apply(sizes);
BENCHMARK_CAPTURE(BM_GraphFromPlan, 1f1b, "1f1b")->Apply(sizes);
BENCHMARK_CAPTURE(BM_OrderedPass, 1f1b, "1f1b")->Apply(sizes);
BENCHMARK_CAPTURE(BM_Metrics, 1f1b, "1f1b")->Apply(sizes);
BENCHMARK_CAPTURE(BM_Simulate, 1f1b, "1f1b")->Apply(sizes);
BENCHMARK_CAPTURE(BM_EndToEnd, 1f1b, "1f1b")->Apply(sizes);
BENCHMARK_CAPTURE(BM_EndToEnd, gpipe, "gpipe")->Apply(sizes);
BENCHMARK_CAPTURE(BM_LoweredDataParallel, 1f1b, "1f1b")->Apply(sizes);
BENCHMARK_CAPTURE(BM_RecomputeOffload, 1f1b, "1f1b")->Apply(sizes);
BENCHMARK_CAPTURE(BM_ExpertParallel, dualpipe, "dualpipe")->Apply(sizes);
BENCHMARK_CAPTURE(BM_PassesEndToEnd, 1f1b_plain, "1f1b", Passes::None)->Apply(sizes);
BENCHMARK_CAPTURE(BM_PassesEndToEnd, 1f1b_recompute_offload_half, "1f1b", Passes::RecomputeOffload)
    ->Apply(sizes);
BENCHMARK_CAPTURE(BM_PassesEndToEnd, 1f1b_fsdp_two_units, "1f1b", Passes::Fsdp)->Apply(sizes);
BENCHMARK_CAPTURE(BM_PassesEndToEnd, dualpipe_plain, "dualpipe", Passes::None)->Apply(sizes);
BENCHMARK_CAPTURE(BM_PassesEndToEnd, dualpipe_all_to_all, "dualpipe", Passes::AllToAll)
    ->Apply(sizes);

}  // namespace
