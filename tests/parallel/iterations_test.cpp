#include "perflow/parallel/iterations.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/task_table.hpp"
#include "perflow/parallel/data_parallel.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::parallel {
namespace {

using testing::pipeline_spec;

EventGraph repeated(const EventGraph& g, std::uint32_t count, bool sync) {
  return repeat_iterations(g, IterationSpec{count, sync});
}

// Synchronous steps with no optimizer cost: every iteration is the first one again, shifted
// by its makespan, so N iterations take exactly N times one.
TEST(Iterations, SynchronousIterationsTakeExactlyNTimesOne) {
  const CostTable costs({1000, 1200, 800});
  for (const auto& [name, chunks] : {std::pair<std::string, std::uint32_t>{"1f1b", 1},
                                     {"gpipe", 1},
                                     {"zb-h1", 1},
                                     {"interleaved-1f1b", 2},
                                     {"zbv", 2}}) {
    SCOPED_TRACE(name);
    const EventGraph one = build_schedule(pipeline_spec(name, 4, 8, chunks), costs);
    const simulator::Metrics single = simulator::simulate(one).metrics;
    EXPECT_EQ(single.iteration_time, single.makespan);
    EXPECT_EQ(single.iteration_finish, std::vector<TimeNs>{single.makespan});
    for (const std::uint32_t n : {2u, 3u}) {
      const EventGraph g = repeated(one, n, true);
      EXPECT_EQ(g.task_count(), n * one.task_count() + (n - 1));  // and a SYNC per boundary
      const simulator::Metrics m = simulator::simulate(g).metrics;
      EXPECT_EQ(m.makespan, n * single.makespan);
      EXPECT_EQ(m.iteration_time, single.makespan);
      ASSERT_EQ(m.iteration_finish.size(), n);
      for (std::uint32_t k = 0; k < n; ++k)
        EXPECT_EQ(m.iteration_finish[k], (k + 1) * single.makespan);
      EXPECT_EQ(m.total_work, n * single.total_work);
      for (const auto& d : m.devices)
        EXPECT_EQ(d.peak_memory, single.devices[d.device.value].peak_memory);
    }
  }
}

// With an optimizer step the synchronous period is one iteration with its step: the barrier
// waits for the slowest device's step.
TEST(Iterations, SynchronousPeriodIncludesTheSlowestOptimizerStep) {
  const EventGraph one = build_schedule(pipeline_spec("1f1b", 2, 2), CostTable({1000, 1000, 1000}));
  DataParallelSpec dp;
  dp.optimizer = {500, 700};
  const EventGraph stepped = add_data_parallel(one, dp);
  // Device 1 ends at 7000 + 700, device 0 at 9000 + 500.
  EXPECT_EQ(simulator::simulate(stepped).metrics.makespan, 9500);
  const simulator::Metrics m = simulator::simulate(repeated(stepped, 3, true)).metrics;
  EXPECT_EQ(m.iteration_finish, (std::vector<TimeNs>{9500, 19000, 28500}));
  EXPECT_EQ(m.iteration_time, 9500);
}

// Asynchronous steps: device 1 starts its next F as soon as its own step is done, but still
// waits for device 0's F of the next iteration; device 0 waits for nothing of device 1's.
// 1F1B p=2 m=2, F=1, BW=2: device 0 runs F0 F1 [0,2], BW0 [5,7], BW1 [7,9]... (see below).
TEST(Iterations, AsynchronousDevicesGoOnAfterTheirOwnStep) {
  const EventGraph one = build_schedule(pipeline_spec("1f1b", 2, 2), CostTable({1000, 1000, 1000}));
  const EventGraph g = repeated(one, 2, false);
  EXPECT_EQ(g.lane_count(), 2u);  // no sync lane
  const simulator::SimulationResult r = simulator::simulate(g);
  // Iteration 0 alone: device 0 F0 [0,1] F1 [1,2] BW0 [4,6] BW1 [7,9] (us); device 1 F0
  // [1,2] BW0 [2,4] F1 [4,5] BW1 [5,7]. Iteration 1's F0 on device 0 starts at 9 (its own
  // end), reaches device 1 at 10, whose F0 runs [10,11] even though device 1 was free at 7.
  const auto start_of = [&](std::uint32_t device, std::size_t index) {
    return r.trace.start_of(r.trace.events(DeviceId{device})[index]);
  };
  EXPECT_EQ(start_of(0, 4), 9000);
  EXPECT_EQ(g.label(r.trace.events(DeviceId{0})[4]), "F0.0@1");
  EXPECT_EQ(start_of(1, 4), 10000);
  EXPECT_EQ(r.metrics.iteration_finish, (std::vector<TimeNs>{9000, 18000}));
  EXPECT_EQ(r.metrics.iteration_time, 9000);
}

// The distributed optimizer's parameters gathered under the next forward
// (DataParallel.BucketsAreReducedAsTheBackwardProducesThem has iteration 0, which ends with
// OPT [4000,4500]): iteration 1's gathers wait for that step, [4500,4750] [4750,5125]
// [5125,5500]; its F waits for the first, [4750,5750]; BW [5750,7750]; the reduce-scatters
// released at 6500, 7250, 7750 run [6500,7250] [7250,8000] [8000,8500]; OPT [8500,9000].
TEST(Iterations, GatheredParametersAreTheStepBefores) {
  const EventGraph one = build_schedule(pipeline_spec("1f1b", 1, 1), CostTable({1000, 1000, 1000}));
  DataParallelSpec dp = testing::hand_worked_buckets();
  dp.sharded = true;
  dp.overlap_param_gather = true;
  const EventGraph g = repeated(add_data_parallel(one, dp), 2, false);
  const simulator::SimulationResult r = simulator::simulate(g);
  std::vector<TimeNs> starts;
  for (const TaskId t : r.trace.events(LaneId{1})) {
    if (g.iteration(t) == 1) starts.push_back(r.trace.start_of(t));
  }
  EXPECT_EQ(starts, (std::vector<TimeNs>{4500, 4750, 5125, 6500, 7250, 8000}));
  EXPECT_EQ(r.metrics.iteration_finish, (std::vector<TimeNs>{4500, 9000}));
  EXPECT_EQ(r.metrics.iteration_time, 4500);
}

// Asynchronous ZeroBubble: the steady-state period is the longest span of one device's
// iteration (first start to last end, its optimizer step included), not the makespan of one
// iteration run from an empty pipeline. ZB-H2 with F = B = W keeps no bubble in the steady
// state: the period is m (F + B + W) plus the step.
TEST(Iterations, AsynchronousZeroBubblePeriodIsTheLongestDeviceSpan) {
  for (const std::string name : {"zb-h1", "zb-h2", "zb", "1f1b"}) {
    for (const TaskCosts& c : {TaskCosts{1000, 1000, 1000}, TaskCosts{1500, 1700, 900},
                               TaskCosts{1000, 2000, 2000}, TaskCosts{2000, 1000, 500}}) {
      SCOPED_TRACE(name + " F " + std::to_string(c.forward) + " B " + std::to_string(c.backward));
      DataParallelSpec dp;
      dp.optimizer.assign(4, 500);
      const EventGraph one =
          add_data_parallel(build_schedule(pipeline_spec(name, 4, 8), CostTable(c)), dp);
      const simulator::Metrics single = simulator::simulate(one).metrics;
      TimeNs longest = 0;
      for (const auto& d : single.devices) longest = std::max(longest, d.span());
      const simulator::Metrics m = simulator::simulate(repeated(one, 5, false)).metrics;
      EXPECT_EQ(m.iteration_time, longest);
      EXPECT_LE(m.iteration_time, single.makespan);
      if (name == "zb-h2" && c.forward == c.backward && c.backward == c.weight) {
        EXPECT_EQ(m.iteration_time, 8 * 3 * 1000 + 500);
        EXPECT_LT(m.iteration_time, single.makespan);
      }
    }
  }
}

TEST(Iterations, TasksCarryTheirIteration) {
  const EventGraph one = build_schedule(pipeline_spec("1f1b", 2, 2), CostTable({1000, 1000, 1000}));
  EXPECT_FALSE(one.has_iterations());
  EXPECT_EQ(one.label(TaskId{0}), "F0.0");
  const EventGraph g = repeated(one, 3, true);
  ASSERT_TRUE(g.has_iterations());
  const auto n = static_cast<std::uint32_t>(one.task_count());
  for (std::uint32_t k = 0; k < 3; ++k) {
    for (std::uint32_t t = 0; t < n; ++t) {
      const TaskId copy{k * n + t};
      EXPECT_EQ(g.iteration(copy), k);
      EXPECT_EQ(g.label(copy), one.label(TaskId{t}) + "@" + std::to_string(k));
      EXPECT_EQ(g.duration(copy), one.duration(TaskId{t}));
      EXPECT_EQ(g.device(copy), one.device(TaskId{t}));
    }
  }
  // The barriers: one SYNC per boundary on device 0's lane "iteration sync".
  ASSERT_EQ(g.lane_count(), 3u);
  EXPECT_EQ(g.lane_info(LaneId{2}).name, "iteration sync");
  const auto syncs = g.program(LaneId{2});
  ASSERT_EQ(syncs.size(), 2u);
  EXPECT_EQ(g.kind(syncs[0]), TaskKind::Sync);
  EXPECT_EQ(g.label(syncs[1]), "SYNC0.0@1");
  // The task table's iteration column.
  const simulator::SimulationResult r = simulator::simulate(g);
  const std::string table = render_task_table(g, r.trace, TaskTableFormat::Csv);
  EXPECT_NE(table.find("0,compute,F,0,0,0,2,"), std::string::npos) << table;
}

TEST(Iterations, RefusesWhatItCannotRepeat) {
  const EventGraph one = build_schedule(pipeline_spec("1f1b", 2, 2), CostTable({1000, 1000, 1000}));
  EXPECT_THROW((void)repeated(one, 0, true), ScheduleError);
  EXPECT_THROW((void)repeated(repeated(one, 2, true), 2, true), ScheduleError);
  EventGraphBuilder bare(1);
  (void)bare.add_task({TaskKind::F, DeviceId{0}, StageId{0}, 0, 0, 5});
  EXPECT_THROW((void)repeated(std::move(bare).freeze(), 2, true), ScheduleError);
  // One iteration: the graph as it was.
  EXPECT_EQ(repeated(one, 1, true).task_count(), one.task_count());
  EXPECT_FALSE(repeated(one, 1, true).has_iterations());
}

}  // namespace
}  // namespace perflow::parallel
