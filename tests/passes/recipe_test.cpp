#include "perflow/passes/recipe.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/expert_parallel.hpp"
#include "perflow/parallel/offload.hpp"
#include "perflow/parallel/recompute.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/lowering.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::passes {
namespace {

using testing::pipeline_spec;

std::string refusal(const std::vector<Pass>& passes) {
  try {
    (void)Recipe(passes);
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Recipe, RefusesAPassOutOfTheCanonicalOrder) {
  EXPECT_EQ(refusal({Recompute{}, AllToAll{}}),
            "pass recipe: all-to-all cannot come after recompute (the order is overlap-pairs, "
            "all-to-all, recompute, data-parallel, fsdp, offload, iterations, "
            "lower-communication, blocking-transfers)");
  EXPECT_EQ(refusal({Offload{}, DataParallel{}}),
            "pass recipe: data-parallel cannot come after offload (the order is overlap-pairs, "
            "all-to-all, recompute, data-parallel, fsdp, offload, iterations, "
            "lower-communication, blocking-transfers)");
  EXPECT_EQ(refusal({Fsdp{}, DataParallel{}}),
            "pass recipe: data-parallel cannot come after fsdp (the order is overlap-pairs, "
            "all-to-all, recompute, data-parallel, fsdp, offload, iterations, "
            "lower-communication, blocking-transfers)");
  EXPECT_EQ(refusal({DataParallel{}, Fsdp{}, Offload{}}), "accepted");
  EXPECT_EQ(refusal({Recompute{}, Recompute{}}), "pass recipe: recompute is asked for twice");
  EXPECT_EQ(refusal({LowerCommunication{}, BlockingTransfers{}}),
            "pass recipe: lower-communication and blocking-transfers cannot both run (each "
            "lowers every transfer)");
  EXPECT_EQ(refusal({OverlapPairs{}}),
            "pass recipe: overlap-pairs needs the plan the graph was built from");
  EXPECT_EQ(refusal({AllToAll{}, Recompute{}, DataParallel{}, Offload{}, Iterations{},
                     LowerCommunication{}}),
            "accepted");
  // A refused pass leaves the recipe as it was.
  Recipe recipe;
  recipe.then(Offload{});
  EXPECT_THROW(recipe.then(Recompute{}), ScheduleError);
  ASSERT_EQ(recipe.passes().size(), 1u);
  EXPECT_EQ(pass_name(recipe.passes()[0]), "offload");
}

bool same_graph(const EventGraph& a, const EventGraph& b) {
  if (a.task_count() != b.task_count() || a.edge_count() != b.edge_count() ||
      a.lane_count() != b.lane_count()) {
    return false;
  }
  const auto same = [](std::span<const Adjacent> x, std::span<const Adjacent> y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](Adjacent p, Adjacent q) {
      return p.task() == q.task() && p.kind() == q.kind();
    });
  };
  for (std::uint32_t t = 0; t < a.task_count(); ++t) {
    const TaskId id{t};
    const TaskSpec x = a.spec(id);
    const TaskSpec y = b.spec(id);
    if (x.kind != y.kind || x.device != y.device || x.stage != y.stage ||
        x.microbatch != y.microbatch || x.chunk != y.chunk || x.duration != y.duration ||
        x.memory_delta != y.memory_delta || x.lane != y.lane || x.iteration != y.iteration ||
        x.paired != y.paired || !same(a.predecessors(id), b.predecessors(id)) ||
        !same(a.successors(id), b.successors(id))) {
      return false;
    }
  }
  for (std::uint32_t l = 0; l < a.lane_count(); ++l) {
    const auto p = a.program(LaneId{l});
    const auto q = b.program(LaneId{l});
    if (!std::equal(p.begin(), p.end(), q.begin(), q.end())) return false;
  }
  return true;
}

std::size_t count_kind(const EventGraph& g, TaskKind kind) {
  return static_cast<std::size_t>(std::count(g.kinds().begin(), g.kinds().end(), kind));
}

// Every pass but the pairs and the blocking transfers, on 1F1B: the recipe's graph is the
// one the passes give called one after the other, and its simulation theirs.
TEST(Recipe, AppliesThePassesInOrder) {
  parallel::TaskCosts costs{1000, 2000, 1500, 100.0, 0.0};
  costs.recompute = true;
  costs.recompute_forward = 1000;
  costs.recompute_activation = 10.0;  // what an F keeps, and offloading copies
  const parallel::CostTable table(costs);
  const EventGraph pipeline = parallel::build_schedule(pipeline_spec("1f1b", 4, 8), table);
  parallel::DataParallelSpec dp;
  dp.degree = 4;
  dp.bandwidth = 1e9;
  dp.gradient_bytes.assign(4, 1e6);
  dp.optimizer.assign(4, 500);
  parallel::OffloadSpec offload;
  offload.ratio.assign(4, 0.5);
  offload.host_link.assign(4, parallel::HostLink{10, 1e9});
  simulator::SimulationOptions options(50);
  options.intra_node = simulator::Link{20, 1e10};
  options.boundary_bytes.assign(4, 1e5);

  const EventGraph chained = simulator::lower_communication(
      parallel::repeat_iterations(
          parallel::add_offload(
              parallel::add_data_parallel(parallel::add_recompute(pipeline, table), dp), offload),
          {2, true}),
      options);
  const EventGraph applied =
      apply(pipeline, Recipe({Recompute{table}, DataParallel{dp}, Offload{offload},
                              Iterations{{2, true}}, LowerCommunication{options}}));
  EXPECT_TRUE(same_graph(applied, chained));
  // Per iteration: 32 backwards, an R before each, an all-reduce and an optimizer step per
  // device; one barrier between the two.
  EXPECT_EQ(count_kind(applied, TaskKind::R), 64u);
  EXPECT_EQ(count_kind(applied, TaskKind::B) + count_kind(applied, TaskKind::BW), 64u);
  EXPECT_EQ(count_kind(applied, TaskKind::AllReduce), 8u);
  EXPECT_EQ(count_kind(applied, TaskKind::Optimizer), 8u);
  EXPECT_EQ(count_kind(applied, TaskKind::Sync), 1u);
  EXPECT_EQ(count_kind(applied, TaskKind::D2H), count_kind(applied, TaskKind::H2D));
  EXPECT_GT(count_kind(applied, TaskKind::D2H), 0u);
  EXPECT_EQ(simulator::simulate(applied, options).metrics.makespan,
            simulator::simulate(chained, options).metrics.makespan);
}

// Recomputation right before offloading: one extension, frozen once, giving the graph the
// two passes give one after the other (ids, lanes, programs, edge lists, simulation), on
// schedules with one and two chunks, DualPipe's pairs, by ratio and against a budget.
TEST(Recipe, RecomputesAndOffloadsInOneExtension) {
  struct Case {
    const char* schedule;
    std::uint32_t chunks;
    bool budget;
  };
  for (const Case& c :
       {Case{"1f1b", 1, false}, Case{"1f1b", 1, true}, Case{"interleaved-1f1b", 2, false},
        Case{"zbv", 2, true}, Case{"dualpipe", 2, false}, Case{"dualpipe", 2, true}}) {
    SCOPED_TRACE(::testing::Message() << c.schedule << (c.budget ? " budget" : " ratio"));
    parallel::TaskCosts costs{1000, 2000, 1500, 100.0, 0.0};
    costs.recompute = true;
    costs.recompute_forward = 1000;
    costs.recompute_activation = 10.0;
    costs.all_to_all = 300;  // DualPipe's pairs
    const parallel::CostTable table(costs);
    const parallel::PipelinePlan plan =
        parallel::plan_schedule(pipeline_spec(c.schedule, 4, 8, c.chunks), table);
    EventGraph pipeline = parallel::build_pipeline_graph(plan, table);
    if (parallel::overlaps_pairs(plan, table)) {
      pipeline = parallel::overlap_pairs(std::move(pipeline), plan, table);
    }
    parallel::OffloadSpec offload;
    offload.chunks = c.chunks;
    offload.host_link.assign(4, parallel::HostLink{10, 1e9});
    if (c.budget) {
      offload.budget.assign(4, 25.0);
    } else {
      offload.ratio.assign(4 * c.chunks, 0.5);
    }
    const EventGraph chained =
        parallel::add_offload(parallel::add_recompute(pipeline, table), offload);
    const EventGraph applied = apply(pipeline, Recipe({Recompute{table}, Offload{offload}}));
    EXPECT_TRUE(same_graph(applied, chained));
    EXPECT_EQ(count_kind(applied, TaskKind::R),
              count_kind(applied, TaskKind::B) + count_kind(applied, TaskKind::BW));
    EXPECT_EQ(count_kind(applied, TaskKind::D2H), count_kind(applied, TaskKind::H2D));
    EXPECT_GT(count_kind(applied, TaskKind::D2H), 0u);
    // Its order is one: every task once, after its predecessors.
    std::vector<std::uint32_t> rank(applied.task_count(), ~0u);
    const auto order = applied.topological_order();
    ASSERT_EQ(order.size(), applied.task_count());
    for (std::uint32_t i = 0; i < order.size(); ++i) rank[order[i].value] = i;
    for (std::uint32_t t = 0; t < applied.task_count(); ++t) {
      ASSERT_NE(rank[t], ~0u);
      for (const Adjacent& p : applied.predecessors(TaskId{t})) {
        EXPECT_LT(rank[p.task().value], rank[t]);
      }
    }
    const auto a = simulator::simulate(applied);
    const auto b = simulator::simulate(chained);
    EXPECT_EQ(a.trace.start, b.trace.start);
    EXPECT_EQ(a.trace.finish, b.trace.finish);
    EXPECT_EQ(a.metrics.critical_path, b.metrics.critical_path);
    for (std::size_t d = 0; d < a.metrics.devices.size(); ++d) {
      EXPECT_EQ(a.metrics.devices[d].peak_memory, b.metrics.devices[d].peak_memory);
      EXPECT_EQ(a.metrics.devices[d].host_copy, b.metrics.devices[d].host_copy);
      EXPECT_EQ(a.metrics.devices[d].recompute, b.metrics.devices[d].recompute);
    }
  }
}

// DualPipe with an all-to-all on every task: pairs first, then the A2As of the rest.
TEST(Recipe, RunsOverlappedPairsBeforeTheAllToAlls) {
  parallel::TaskCosts costs{1000, 2000, 1500, 100.0, 0.0};
  costs.all_to_all = 300;
  const parallel::CostTable table(costs);
  const parallel::PipelinePlan plan =
      parallel::plan_schedule(pipeline_spec("dualpipe", 4, 8, 2), table);
  const EventGraph pipeline = parallel::build_pipeline_graph(plan, table);
  const EventGraph chained =
      parallel::add_all_to_all(parallel::overlap_pairs(pipeline, plan, table), table);
  const EventGraph applied = apply(pipeline, Recipe({OverlapPairs{&plan, table}, AllToAll{table}}));
  EXPECT_TRUE(same_graph(applied, chained));
  EXPECT_GT(parallel::overlapped_pair_count(applied), 0u);
  // Every F, B and W-less backward outside a pair has its A2A.
  std::size_t unpaired = 0;
  for (std::uint32_t t = 0; t < applied.task_count(); ++t) {
    const TaskKind kind = applied.kind(TaskId{t});
    const bool compute = kind == TaskKind::F || kind == TaskKind::B || kind == TaskKind::BW;
    unpaired += compute && !applied.pair_partner(TaskId{t}).valid() ? 1u : 0u;
  }
  EXPECT_EQ(count_kind(applied, TaskKind::A2A), unpaired);
}

}  // namespace
}  // namespace perflow::passes
