#include "perflow/parallel/data_parallel.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

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

// One stage, one microbatch: F [0,1000], BW [1000,3000]. 4000 gradient bytes in buckets of
// 1500 over 2 ranks at 1 GB/s (a ring all-reduce of b bytes takes b ns; a reduce-scatter or an
// all-gather b / 2). By hand:
//   buckets 1500, 1500, 1000 bytes, produced after 0.375, 0.75 and all of BW:
//   released at 1750, 2500, 3000.
//   all-reduce:     [1750,3250] [3250,4750] [4750,5750], OPT [5750,6250]
//   reduce-scatter: [1750,2500] [2500,3250] [3250,3750], OPT [3750,4250], then the
//                   2000 parameter bytes gathered in the buckets' shares (750, 750, 500
//                   bytes): [4250,4625] [4625,5000] [5000,5250]
//   gathered under the forward instead: the first layers' bucket (500 bytes) [0,250] holds
//                   F to [250,1250], then [250,625] [625,1000]; BW [1250,3250]; the
//                   reduce-scatters released at 2000, 2750, 3250: [2000,2750] [2750,3500]
//                   [3500,4000], OPT [4000,4500]
TEST(DataParallel, BucketsAreReducedAsTheBackwardProducesThem) {
  const EventGraph g =
      build_schedule(pipeline_spec("1f1b", 1, 1, 1), CostTable({1000, 1000, 1000}));
  DataParallelSpec dp = testing::hand_worked_buckets();
  const auto spans = [](const EventGraph& graph, const simulator::SimulationResult& r,
                        LaneId lane) {
    std::vector<std::pair<std::string, std::pair<TimeNs, TimeNs>>> out;
    for (const TaskId t : r.trace.events(lane)) {
      out.push_back(
          {std::string(to_string(graph.kind(t))), {r.trace.start_of(t), r.trace.finish_of(t)}});
    }
    return out;
  };
  using Spans = std::vector<std::pair<std::string, std::pair<TimeNs, TimeNs>>>;
  {
    const EventGraph with_dp = add_data_parallel(g, dp);
    EXPECT_EQ(with_dp.task_count(), g.task_count() + 3 + 1);  // a task per bucket, OPT
    const simulator::SimulationResult r = simulator::simulate(with_dp);
    EXPECT_EQ(spans(with_dp, r, LaneId{1}), (Spans{{"ALLREDUCE", {1750, 3250}},
                                                   {"ALLREDUCE", {3250, 4750}},
                                                   {"ALLREDUCE", {4750, 5750}}}));
    EXPECT_EQ(r.metrics.makespan, 6250);
    // Under BW: 1250 of the first bucket's 1500; the rest waits in the open.
    const std::vector<DataParallelTime> time = data_parallel_time(with_dp, r.trace);
    ASSERT_EQ(time.size(), 1u);
    EXPECT_EQ(time[0].total, 4000);
    EXPECT_EQ(time[0].exposed, 2750);
    EXPECT_EQ(time[0].hidden(), 1250);
    // Greedy simulation releases the buckets at the same points.
    EXPECT_EQ(simulator::simulate(with_dp, {0, simulator::SimulationMode::Greedy}).metrics.makespan,
              6250);
  }
  {
    dp.overlap = false;  // one all-reduce after the backward: [3000,7000], OPT [7000,7500]
    const simulator::SimulationResult r = simulator::simulate(add_data_parallel(g, dp));
    EXPECT_EQ(r.metrics.makespan, 7500);
    dp.overlap = true;
  }
  dp.sharded = true;
  {
    const EventGraph with_dp = add_data_parallel(g, dp);
    EXPECT_EQ(with_dp.lane_info(LaneId{1}).name, "dp collectives");
    const simulator::SimulationResult r = simulator::simulate(with_dp);
    EXPECT_EQ(spans(with_dp, r, LaneId{1}), (Spans{{"REDUCESCATTER", {1750, 2500}},
                                                   {"REDUCESCATTER", {2500, 3250}},
                                                   {"REDUCESCATTER", {3250, 3750}},
                                                   {"ALLGATHER", {4250, 4625}},
                                                   {"ALLGATHER", {4625, 5000}},
                                                   {"ALLGATHER", {5000, 5250}}}));
    EXPECT_EQ(r.metrics.makespan, 5250);
  }
  dp.overlap_param_gather = true;
  {
    const EventGraph with_dp = add_data_parallel(g, dp);
    const simulator::SimulationResult r = simulator::simulate(with_dp);
    EXPECT_EQ(spans(with_dp, r, LaneId{1}), (Spans{{"ALLGATHER", {0, 250}},
                                                   {"ALLGATHER", {250, 625}},
                                                   {"ALLGATHER", {625, 1000}},
                                                   {"REDUCESCATTER", {2000, 2750}},
                                                   {"REDUCESCATTER", {2750, 3500}},
                                                   {"REDUCESCATTER", {3500, 4000}}}));
    EXPECT_EQ(r.trace.start_of(r.trace.events(DeviceId{0}).front()), 250);
    EXPECT_EQ(r.metrics.makespan, 4500);
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
