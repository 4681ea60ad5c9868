#include "perflow/passes/recipe.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/expert_parallel.hpp"
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
            "all-to-all, recompute, data-parallel, offload, iterations, lower-communication, "
            "blocking-transfers)");
  EXPECT_EQ(refusal({Offload{}, DataParallel{}}),
            "pass recipe: data-parallel cannot come after offload (the order is overlap-pairs, "
            "all-to-all, recompute, data-parallel, offload, iterations, lower-communication, "
            "blocking-transfers)");
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
