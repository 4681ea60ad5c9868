#include "perflow/parallel/fsdp.hpp"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/data_parallel.hpp"
#include "perflow/parallel/recompute.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::parallel {
namespace {

using testing::pipeline_spec;
using Span = std::pair<TimeNs, TimeNs>;

// One stage, 2 microbatches, F = 1000, fused BW = 2000: F0 BW0 F1 BW1 on one device,
// 4 units (250 ns of F each), then a 500 ns optimizer step.
EventGraph one_stage_with_step() {
  const EventGraph g =
      build_schedule(pipeline_spec("1f1b", 1, 2, 1), CostTable({1000, 1000, 1000}));
  DataParallelSpec step;
  step.optimizer = {500};
  return add_data_parallel(g, step);
}

FsdpSpec four_units(TimeNs gather, TimeNs reduce, bool reshard = true) {
  FsdpSpec spec;
  spec.reshard_after_forward = reshard;
  spec.units = {4};
  spec.gather = {gather};
  spec.reduce = {reduce};
  return spec;
}

std::vector<Span> lane_spans(const EventGraph& g, const simulator::SimulationResult& r,
                             std::string_view lane) {
  std::vector<Span> out;
  for (std::uint32_t l = g.device_count(); l < g.lane_count(); ++l) {
    if (g.lane_info(LaneId{l}).name != lane) continue;
    for (const TaskId t : r.trace.events(LaneId{l})) {
      out.emplace_back(r.trace.start_of(t), r.trace.finish_of(t));
    }
  }
  return out;
}

std::vector<Span> compute_spans(const simulator::SimulationResult& r) {
  std::vector<Span> out;
  for (const TaskId t : r.trace.events(DeviceId{0})) {
    out.emplace_back(r.trace.start_of(t), r.trace.finish_of(t));
  }
  return out;
}

// Gathers (100 ns a unit) faster than the compute (250 ns a unit of F, 500 of BW):
//   AG(F0) first unit 0-100, F0 100-1100, the other three 100-400 (issued at F0's start).
//   AG(BW0) first unit issued when F0 begins its last unit (100 + 3/4 x 1000 = 850):
//   850-950; BW0 1100-3100; the rest 1100-1400. Its reduce-scatters (50 each) released at
//   each quarter of BW0: 1600, 2100, 2600, 3100.
//   AG(F1) at 1100 + 3/4 x 2000 = 2600: 2600-2700; F1 3100-4100, rest 3100-3400.
//   AG(BW1) at 3100 + 750 = 3850: 3850-3950; BW1 4100-6100, rest 4100-4400; reductions
//   4600, 5100, 5600, 6100 (the last ends 6150); the optimizer waits for it: 6150-6650.
TEST(Fsdp, GathersPrefetchedOneUnitAheadAndReductionsAsTheBackwardProducesThem) {
  const EventGraph g = add_fsdp(one_stage_with_step(), four_units(100, 50));
  ASSERT_EQ(g.lane_count(), 3u);
  EXPECT_EQ(g.lane_info(LaneId{1}).name, "fsdp all-gather");
  EXPECT_EQ(g.lane_info(LaneId{2}).name, "fsdp reduce-scatter");
  EXPECT_EQ(g.task_count(), 5u + 8u + 8u);  // F F BW BW OPT, 2 gathers per pass, 4 + 4
  const simulator::SimulationResult r = simulator::simulate(g);
  EXPECT_EQ(
      compute_spans(r),
      (std::vector<Span>{{100, 1100}, {1100, 3100}, {3100, 4100}, {4100, 6100}, {6150, 6650}}));
  EXPECT_EQ(lane_spans(g, r, "fsdp all-gather"), (std::vector<Span>{{0, 100},
                                                                    {100, 400},
                                                                    {850, 950},
                                                                    {1100, 1400},
                                                                    {2600, 2700},
                                                                    {3100, 3400},
                                                                    {3850, 3950},
                                                                    {4100, 4400}}));
  EXPECT_EQ(lane_spans(g, r, "fsdp reduce-scatter"), (std::vector<Span>{{1600, 1650},
                                                                        {2100, 2150},
                                                                        {2600, 2650},
                                                                        {3100, 3150},
                                                                        {4600, 4650},
                                                                        {5100, 5150},
                                                                        {5600, 5650},
                                                                        {6100, 6150}}));
  EXPECT_EQ(r.metrics.makespan, 6650);
  for (const TaskId t : r.trace.events(LaneId{1})) EXPECT_EQ(g.kind(t), TaskKind::AllGather);
  for (const TaskId t : r.trace.events(LaneId{2})) EXPECT_EQ(g.kind(t), TaskKind::ReduceScatter);
}

// Gathers (400 ns a unit) slower than F's units (250): the lane falls behind and the
// compute waits for it at the next task's first gather.
//   AG(F0) 0-400, F0 400-1400, the rest 400-1600. AG(BW0) released at 400 + 750 = 1150 but
//   the lane is busy until 1600: 1600-2000; BW0 2000-4000; rest 2000-3200.
//   AG(F1) released at 2000 + 1500 = 3500: 3500-3900; F1 4000-5000; rest 4000-5200.
//   AG(BW1) released at 4750, lane free at 5200: 5200-5600; BW1 5600-7600; rest 5600-6800.
//   Reductions of BW1 released at 6100 ... 7600: the last 7600-7650; OPT 7650-8150.
TEST(Fsdp, SlowGathersHoldTheComputeBack) {
  const EventGraph g = add_fsdp(one_stage_with_step(), four_units(400, 50));
  const simulator::SimulationResult r = simulator::simulate(g);
  EXPECT_EQ(
      compute_spans(r),
      (std::vector<Span>{{400, 1400}, {2000, 4000}, {4000, 5000}, {5600, 7600}, {7650, 8150}}));
  EXPECT_EQ(lane_spans(g, r, "fsdp all-gather"), (std::vector<Span>{{0, 400},
                                                                    {400, 1600},
                                                                    {1600, 2000},
                                                                    {2000, 3200},
                                                                    {3500, 3900},
                                                                    {4000, 5200},
                                                                    {5200, 5600},
                                                                    {5600, 6800}}));
  EXPECT_EQ(r.metrics.makespan, 8150);
}

// Without resharding after the forward (torchtitan with pipelining): one gather before the
// first F, kept for the step; one reduction after the last backward.
//   AG 0-100, F0 100-1100 (rest 100-400), BW0 1100-3100, F1 3100-4100, BW1 4100-6100;
//   reductions 4600 ... 6100, the last 6100-6150; OPT 6150-6650.
TEST(Fsdp, WithoutReshardingGathersOnceAndReducesOnce) {
  const EventGraph g = add_fsdp(one_stage_with_step(), four_units(100, 50, false));
  EXPECT_EQ(g.task_count(), 5u + 2u + 4u);
  const simulator::SimulationResult r = simulator::simulate(g);
  EXPECT_EQ(
      compute_spans(r),
      (std::vector<Span>{{100, 1100}, {1100, 3100}, {3100, 4100}, {4100, 6100}, {6150, 6650}}));
  EXPECT_EQ(lane_spans(g, r, "fsdp all-gather"), (std::vector<Span>{{0, 100}, {100, 400}}));
  EXPECT_EQ(lane_spans(g, r, "fsdp reduce-scatter"),
            (std::vector<Span>{{4600, 4650}, {5100, 5150}, {5600, 5650}, {6100, 6150}}));
}

// Gathered once a step with slow gathers (400 ns a unit): the device waits for the last unit
// before it goes on.
//   AG 0-400, F0 400-1400, the rest 400-1600; BW0 waits for it: 1600-3600; F1 3600-4600,
//   BW1 4600-6600; reductions released at 5100, 5600, 6100, 6600; OPT 6650-7150.
TEST(Fsdp, GatheredOnceTheNextTaskWaitsForEveryUnit) {
  const EventGraph g = add_fsdp(one_stage_with_step(), four_units(400, 50, false));
  const simulator::SimulationResult r = simulator::simulate(g);
  EXPECT_EQ(
      compute_spans(r),
      (std::vector<Span>{{400, 1400}, {1600, 3600}, {3600, 4600}, {4600, 6600}, {6650, 7150}}));
  EXPECT_EQ(lane_spans(g, r, "fsdp reduce-scatter"),
            (std::vector<Span>{{5100, 5150}, {5600, 5650}, {6100, 6150}, {6600, 6650}}));
}

// With recomputation the backward's gather comes before the R that reruns its forward
// (which needs the parameters), and the backward after it gathers nothing more.
TEST(Fsdp, TheBackwardsGatherPrecedesItsRecomputation) {
  TaskCosts c{1000, 1000, 1000};
  c.activation = 10;
  c.recompute = true;
  c.recompute_forward = 500;
  c.recompute_activation = 2;
  const CostTable costs(c);
  const EventGraph g = add_recompute(build_schedule(pipeline_spec("1f1b", 1, 2, 1), costs), costs);
  const EventGraph with = add_fsdp(g, four_units(100, 50));
  EXPECT_EQ(with.task_count(), g.task_count() + 8u + 8u);
  for (const TaskId t : with.program(DeviceId{0})) {
    if (with.kind(t) != TaskKind::R && with.kind(t) != TaskKind::F) continue;
    // Each F and each R waits for its first unit's gather.
    bool gathered = false;
    for (const Adjacent& p : with.predecessors(t)) {
      gathered = gathered || with.kind(p.task()) == TaskKind::AllGather;
    }
    EXPECT_TRUE(gathered) << with.label(t);
  }
  // A BW gathers nothing of its own: it waits only for the rest of its R's gather (3 units).
  for (const TaskId t : with.program(DeviceId{0})) {
    if (with.kind(t) != TaskKind::BW) continue;
    for (const Adjacent& p : with.predecessors(t)) {
      if (with.kind(p.task()) != TaskKind::AllGather) continue;
      EXPECT_EQ(with.duration(p.task()), 300) << with.label(t);
      ASSERT_EQ(with.predecessors(p.task()).size(), 2u);  // the lane's order and its R
    }
  }
}

TEST(Fsdp, NoUnitsLeavesTheGraphAsItIs) {
  const EventGraph g = one_stage_with_step();
  const EventGraph with = add_fsdp(g, FsdpSpec{});
  EXPECT_EQ(with.task_count(), g.task_count());
  EXPECT_EQ(with.lane_count(), g.lane_count());
}

TEST(Fsdp, EveryDeviceOfAPipelineGathersItsOwnStage) {
  // 2 stages with 3 and 2 units: each device's lanes carry its own stage's collectives.
  const EventGraph g =
      build_schedule(pipeline_spec("1f1b", 2, 2, 1), CostTable({1000, 1000, 1000}));
  FsdpSpec spec;
  spec.units = {3, 2};
  spec.gather = {10, 20};
  spec.reduce = {5, 5};
  const EventGraph with = add_fsdp(g, spec);
  EXPECT_EQ(with.lane_count(), 6u);
  // Device 0: 4 passes x 2 gathers + 2 BW x 3 reductions; device 1: 8 + 2 x 2.
  EXPECT_EQ(with.task_count(), g.task_count() + 14u + 12u);
  const simulator::SimulationResult r = simulator::simulate(with);
  for (const TaskId t : r.trace.events(LaneId{2})) {
    EXPECT_EQ(with.stage(t).value, 0u);
    EXPECT_TRUE(with.duration(t) == 10 || with.duration(t) == 20) << with.label(t);
  }
  for (const TaskId t : r.trace.events(LaneId{4})) {
    EXPECT_EQ(with.stage(t).value, 1u);
    EXPECT_EQ(with.duration(t), 20) << with.label(t);  // 2 units: one each
  }
}

}  // namespace
}  // namespace perflow::parallel
