#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/iterations.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/lowering.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::simulator {
namespace {

using testing::order_string;

EventGraph one_f_one_b(std::uint32_t stages, std::uint32_t microbatches) {
  return parallel::build_schedule(testing::pipeline_spec("1f1b", stages, microbatches),
                                  parallel::CostTable({1000, 1000, 1000}));
}

// One microbatch over two stages, 100 ns per transfer: the transfers sit on both compute
// lanes, the step is unchanged (nothing else could run meanwhile), and each lane is blocked
// exactly two transfer times.
TEST(BlockingTransfers, TwoStagesOneMicrobatchAddTheTransferOnBothLanes) {
  const SimulationOptions options(100);
  const EventGraph async = one_f_one_b(2, 1);
  const SimulationResult a = simulate(async, options);
  EXPECT_EQ(a.metrics.makespan, 6200);  // F [0,1] F [1.1,2.1] BW [2.1,4.1] BW [4.2,6.2] us

  const EventGraph g = lower_blocking_transfers(async, options);
  const SimulationResult r = simulate(g, options);
  EXPECT_EQ(order_string(g, r.trace, 0), "F0.0 SEND0.0 RECV0.0 BW0.0");
  EXPECT_EQ(order_string(g, r.trace, 1), "RECV0.0 F0.0 BW0.0 SEND0.0");
  const auto at = [&](std::uint32_t device, std::size_t i) {
    const TaskId t = r.trace.events(DeviceId{device})[i];
    return std::pair{r.trace.start_of(t), r.trace.finish_of(t)};
  };
  EXPECT_EQ(at(0, 1), (std::pair<TimeNs, TimeNs>{1000, 1100}));  // SEND after F0
  EXPECT_EQ(at(1, 0), (std::pair<TimeNs, TimeNs>{1000, 1100}));  // its RECV, at the same time
  EXPECT_EQ(at(1, 1), (std::pair<TimeNs, TimeNs>{1100, 2100}));
  EXPECT_EQ(at(1, 3), (std::pair<TimeNs, TimeNs>{4100, 4200}));
  EXPECT_EQ(at(0, 2), (std::pair<TimeNs, TimeNs>{4100, 4200}));
  EXPECT_EQ(r.metrics.makespan, 6200);
  for (const DeviceMetrics& d : r.metrics.devices) {
    EXPECT_EQ(d.blocked, 200);
    EXPECT_EQ(d.busy, a.metrics.devices[d.device.value].busy);
  }
}

// Two microbatches: device 1's second receive waits behind its own send, and device 0's
// forwards are delayed by their sends. Hand-simulated (us): device 0 F0 [0,1] S [1,1.1]
// F1 [1.1,2.1] S [2.1,2.2] R [4.1,4.2] BW0 [4.2,6.2] R [7.3,7.4] BW1 [7.4,9.4]; device 1
// R [1,1.1] F0 [1.1,2.1] BW0 [2.1,4.1] S [4.1,4.2] R [4.2,4.3] F1 [4.3,5.3] BW1 [5.3,7.3]
// S [7.3,7.4]. Asynchronous transfers finish at 9.2.
TEST(BlockingTransfers, TwoMicrobatchesHandSimulated) {
  const SimulationOptions options(100);
  const EventGraph async = one_f_one_b(2, 2);
  EXPECT_EQ(simulate(async, options).metrics.makespan, 9200);
  const EventGraph g = lower_blocking_transfers(async, options);
  const SimulationResult r = simulate(g, options);
  EXPECT_EQ(r.metrics.makespan, 9400);
  std::vector<TimeNs> starts;
  for (const TaskId t : r.trace.events(DeviceId{1})) starts.push_back(r.trace.start_of(t));
  EXPECT_EQ(starts, (std::vector<TimeNs>{1000, 1100, 2100, 4100, 4200, 4300, 5300, 7300}));
  starts.clear();
  for (const TaskId t : r.trace.events(DeviceId{0})) starts.push_back(r.trace.start_of(t));
  EXPECT_EQ(starts, (std::vector<TimeNs>{0, 1000, 1100, 2100, 4100, 4200, 7300, 7400}));
  EXPECT_EQ(r.metrics.devices[0].blocked, 400);
  EXPECT_EQ(r.metrics.devices[1].blocked, 400);
}

// A transfer lasts its latency and bytes: 2000 bytes at 1 GB/s plus 100 ns.
TEST(BlockingTransfers, TransferTimeIsLatencyAndBytes) {
  SimulationOptions options;
  options.intra_node = Link{100, 1e9};
  options.boundary_bytes = {2000, 2000};
  const EventGraph g = lower_blocking_transfers(one_f_one_b(2, 1), options);
  for (std::uint32_t t = 0; t < g.task_count(); ++t) {
    const TaskKind kind = g.kind(TaskId{t});
    if (kind == TaskKind::Send || kind == TaskKind::Recv) {
      EXPECT_EQ(g.duration(TaskId{t}), 2100);
    }
  }
  // Of every schedule's data edges that cross devices, none is left.
  for (std::uint32_t t = 0; t < g.task_count(); ++t) {
    for (const Adjacent& s : g.successors(TaskId{t})) {
      if (s.kind() != EdgeKind::Data || g.device(s.task()) == g.device(TaskId{t})) continue;
      EXPECT_EQ(g.kind(s.task()), TaskKind::Recv);
    }
  }
}

// Iterations first, then blocking transfers: the barrier's dependences are not transfers.
TEST(BlockingTransfers, BarriersAreNotTransfers) {
  const SimulationOptions options(100);
  const EventGraph one = lower_blocking_transfers(one_f_one_b(2, 2), options);
  const EventGraph two =
      lower_blocking_transfers(parallel::repeat_iterations(one_f_one_b(2, 2), {2, true}), options);
  const Metrics m = simulate(two, options).metrics;
  EXPECT_EQ(m.makespan, 2 * simulate(one, options).metrics.makespan);
  EXPECT_THROW((void)lower_blocking_transfers(one, options), ScheduleError);  // already lowered
}

}  // namespace
}  // namespace perflow::simulator
