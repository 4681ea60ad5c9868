#include "perflow/parallel/data_parallel.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/collectives.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/lowering.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::parallel {
namespace {

using testing::pipeline_spec;

TEST(RingAllReduce, MatchesTheClosedForm) {
  // 2 (n - 1) latency + 2 (n - 1) / n * bytes / bandwidth.
  EXPECT_EQ(ring_all_reduce_time(1e9, 4, 5000, 100e9), 30'000 + 15'000'000);
  EXPECT_EQ(ring_all_reduce_time(3, 2, 0, 1.0), 3'000'000'000);
  EXPECT_EQ(ring_all_reduce_time(4000, 2, 0, 1e9), 4000);
  EXPECT_EQ(ring_all_reduce_time(1e6, 8, 1000, 0), 14'000);  // unlimited bandwidth
  EXPECT_EQ(ring_all_reduce_time(1e9, 1, 5000, 1e9), 0);     // one rank: nothing to reduce
  EXPECT_EQ(ring_all_reduce_time(1, 3, 0, 1e9), 2);          // 4/3 ns rounds up
  EXPECT_THROW((void)ring_all_reduce_time(1e18, 1024, 0, 1.0), ScheduleError);
}

// 1F1B, p = 2, m = 2, F = 1 us, fused BW = 2 us: device 1 finishes BW1 at 7 us, device 0
// at 9 us. Data parallelism of 2 with 4000 gradient bytes per stage over 1 GB/s: a 4 us
// all-reduce right after each device's last BW, then a 0.5 us optimizer step.
TEST(DataParallel, AllReduceAfterTheLastGradientThenTheOptimizer) {
  const EventGraph g =
      build_schedule(pipeline_spec("1f1b", 2, 2, 1), CostTable({1000, 1000, 1000}));
  EXPECT_EQ(simulator::simulate(g).metrics.makespan, 9000);

  DataParallelSpec dp;
  dp.degree = 2;
  dp.bandwidth = 1e9;
  dp.gradient_bytes = {4000, 4000};
  dp.optimizer = {500, 500};
  const EventGraph with_dp = add_data_parallel(g, dp);
  ASSERT_EQ(with_dp.lane_count(), 4u);
  EXPECT_EQ(with_dp.lane_info(LaneId{2}).name, "dp all-reduce");
  const simulator::SimulationResult r = simulator::simulate(with_dp);
  const auto reduce = [&](std::uint32_t device) {
    return r.trace.events(LaneId{2 + device}).front();
  };
  EXPECT_EQ(with_dp.kind(reduce(0)), TaskKind::AllReduce);
  EXPECT_EQ(r.trace.start_of(reduce(1)), 7000);
  EXPECT_EQ(r.trace.finish_of(reduce(1)), 11000);
  EXPECT_EQ(r.trace.start_of(reduce(0)), 9000);
  EXPECT_EQ(r.trace.finish_of(reduce(0)), 13000);
  const TaskId step0 = r.trace.events(DeviceId{0}).back();
  EXPECT_EQ(with_dp.kind(step0), TaskKind::Optimizer);
  EXPECT_EQ(with_dp.label(step0), "OPT0.0");
  EXPECT_EQ(r.trace.start_of(step0), 13000);
  EXPECT_EQ(r.metrics.makespan, 13500);
  EXPECT_EQ(r.metrics.devices[0].busy, 6500);  // 2 F + 2 BW + the optimizer step
  EXPECT_EQ(r.metrics.devices[0].communication, 4000);
}

TEST(DataParallel, DegreeOneAddsOnlyTheOptimizer) {
  const EventGraph g =
      build_schedule(pipeline_spec("1f1b", 2, 2, 1), CostTable({1000, 1000, 1000}));
  DataParallelSpec dp;
  dp.gradient_bytes = {4000, 4000};
  dp.optimizer = {500, 700};
  const EventGraph with_dp = add_data_parallel(g, dp);
  EXPECT_EQ(with_dp.lane_count(), 2u);
  EXPECT_EQ(with_dp.task_count(), g.task_count() + 2);
  const simulator::SimulationResult r = simulator::simulate(with_dp);
  EXPECT_EQ(r.trace.finish_of(r.trace.events(DeviceId{1}).back()), 7700);
  EXPECT_EQ(r.metrics.makespan, 9500);
}

// Interleaved 1F1B, 2 chunks: with overlap, each chunk's all-reduce starts when its last
// W finishes, and the first one overlaps the device's remaining backward work; without,
// every all-reduce waits for the device's last compute task. Either way OPT comes last.
TEST(DataParallel, OverlapStartsEachChunkAfterItsLastGradient) {
  PipelineSpec spec = pipeline_spec("interleaved-1f1b", 4, 8, 2);
  spec.split_backward = true;
  const EventGraph g = build_schedule(spec, CostTable({1000, 2000, 1500}));
  for (const bool overlap : {true, false}) {
    SCOPED_TRACE(overlap ? "overlap" : "no overlap");
    DataParallelSpec dp;
    dp.degree = 8;
    dp.latency = 2000;
    dp.bandwidth = 50e9;
    dp.overlap = overlap;
    dp.chunks = 2;
    dp.gradient_bytes.assign(8, 700e3);
    dp.optimizer.assign(8, 300);
    const EventGraph with_dp = add_data_parallel(g, dp);
    const simulator::SimulationResult r = simulator::simulate(with_dp);
    const TimeNs reduce_time = ring_all_reduce_time(700e3, 8, 2000, 50e9);
    EXPECT_EQ(reduce_time, 28'000 + 24'500);
    std::size_t overlapped = 0;
    for (std::uint32_t d = 0; d < 4; ++d) {
      const auto compute = r.trace.events(DeviceId{d});
      const TaskId step = compute.back();
      const TaskId last_compute = compute[compute.size() - 2];
      const auto reductions = r.trace.events(LaneId{4 + d});
      ASSERT_EQ(reductions.size(), 2u);
      TimeNs reductions_end = 0;
      for (const TaskId ar : reductions) {
        EXPECT_EQ(with_dp.duration(ar), reduce_time);
        // The chunk's last W on this device.
        TimeNs last_w = 0;
        for (const TaskId t : compute) {
          if (with_dp.kind(t) == TaskKind::W && with_dp.chunk(t) == with_dp.chunk(ar)) {
            last_w = std::max(last_w, r.trace.finish_of(t));
          }
        }
        const TimeNs released = overlap ? last_w : r.trace.finish_of(last_compute);
        EXPECT_GE(r.trace.start_of(ar), released);
        if (ar == reductions.front()) {
          EXPECT_EQ(r.trace.start_of(ar), released);
        }
        overlapped += r.trace.start_of(ar) < r.trace.finish_of(last_compute) ? 1u : 0u;
        reductions_end = std::max(reductions_end, r.trace.finish_of(ar));
      }
      EXPECT_EQ(r.trace.start_of(step), std::max(reductions_end, r.trace.finish_of(last_compute)));
      EXPECT_EQ(with_dp.duration(step), 600);  // two chunks' optimizer steps
    }
    if (overlap) {
      EXPECT_GT(overlapped, 0u);
    } else {
      EXPECT_EQ(overlapped, 0u);
    }
  }
}

TEST(DataParallel, ComposesWithLowering) {
  const EventGraph g =
      build_schedule(pipeline_spec("1f1b", 2, 2, 1), CostTable({1000, 1000, 1000}));
  DataParallelSpec dp;
  dp.degree = 2;
  dp.bandwidth = 1e9;
  dp.gradient_bytes = {4000, 4000};
  const EventGraph lowered =
      simulator::lower_communication(add_data_parallel(g, dp), simulator::SimulationOptions{});
  // Two DP lanes, then the two directed links.
  ASSERT_EQ(lowered.lane_count(), 6u);
  EXPECT_EQ(lowered.lane_info(LaneId{4}).name, "send 0>1");
  EXPECT_EQ(lowered.lane_info(LaneId{5}).name, "send 1>0");
  EXPECT_EQ(simulator::simulate(lowered).metrics.makespan, 13000);
}

TEST(DataParallel, RefusesAGraphWithoutProgramOrder) {
  EventGraphBuilder b(1);
  (void)b.add_task({TaskKind::F, DeviceId{0}, StageId{0}, 0, 0, 10});
  DataParallelSpec dp;
  dp.degree = 2;
  EXPECT_THROW((void)add_data_parallel(std::move(b).freeze(), dp), ScheduleError);
}

}  // namespace
}  // namespace perflow::parallel
