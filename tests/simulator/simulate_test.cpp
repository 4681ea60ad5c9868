#include "perflow/simulator/simulate.hpp"

#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/communication.hpp"

namespace perflow::simulator {
namespace {

// Per device, in program order: the value `of` each task (ids are the builder's business).
template <class Of>
auto by_device(const EventGraph& g, Of of) {
  std::vector<std::vector<decltype(of(TaskId{0}))>> out(g.device_count());
  for (std::uint32_t d = 0; d < g.device_count(); ++d) {
    for (const TaskId t : g.program(DeviceId{d})) out[d].push_back(of(t));
  }
  return out;
}

std::vector<std::string> labels(const EventGraph& g, std::span<const TaskId> tasks) {
  std::vector<std::string> out;
  for (const TaskId t : tasks) out.push_back(fmt::format("{}@d{}", g.label(t), g.device(t).value));
  return out;
}

// GPipe, p=2, m=2, F=1us, B=1.5us, W=0.5us (fused BW 2us), 0.5us latency, by hand:
//   d0: F0 [0,1]  F1 [1,2]                      BW0 [6,8]   BW1 [8,10]
//   d1:   F0 [1.5,2.5] F1 [2.5,3.5] BW0 [3.5,5.5] BW1 [5.5,7.5]
TEST(Simulate, HandWorkedGPipeWithLatency) {
  parallel::PipelineSpec spec;
  spec.schedule = "gpipe";
  spec.stages = 2;
  spec.microbatches = 2;
  const parallel::CostTable costs(parallel::TaskCosts{1000, 1500, 500, 1.0, 0.0});
  const EventGraph g = parallel::build_schedule(spec, costs);
  const SimulationResult r = simulate(g, SimulationOptions{500});

  // Programs: d0 F0 F1 BW0 BW1, d1 F0 F1 BW0 BW1.
  using Times = std::vector<std::vector<TimeNs>>;
  EXPECT_EQ(by_device(g, [&](TaskId t) { return r.trace.start_of(t); }),
            (Times{{0, 1000, 6000, 8000}, {1500, 2500, 3500, 5500}}));
  EXPECT_EQ(by_device(g, [&](TaskId t) { return r.trace.finish_of(t); }),
            (Times{{1000, 2000, 8000, 10000}, {2500, 3500, 5500, 7500}}));
  EXPECT_EQ(r.metrics.makespan, 10000);
  EXPECT_EQ(r.metrics.total_work, 12000);
  EXPECT_EQ(r.metrics.dependency_bound, 7000);
  EXPECT_DOUBLE_EQ(r.metrics.bubble_ratio, 0.4);
  ASSERT_EQ(r.metrics.devices.size(), 2u);
  EXPECT_EQ(r.metrics.devices[1].first_start, 1500);
  EXPECT_EQ(r.metrics.devices[1].last_finish, 7500);
  EXPECT_EQ(r.metrics.devices[1].span_bubble(), 0);
  EXPECT_EQ(r.metrics.devices[0].span_bubble(), 4000);
  EXPECT_EQ(r.metrics.devices[0].peak_memory, 2.0);
  // Binding chain; at BW1@d0 both BW0@d0 (program order) and BW1@d1 arrive at 8us: the
  // one on the lower lane (BW0@d0) wins.
  EXPECT_EQ(labels(g, r.metrics.critical_path),
            (std::vector<std::string>{"F0.0@d0", "F1.0@d0", "F1.0@d1", "BW0.0@d1", "BW0.0@d0",
                                      "BW1.0@d0"}));
}

// Greedy mode ignores GPipe's program order. p=2, m=2, F=1us, BW=2us, by hand:
//   d0: F0 [0,1]  F1 [1,2]                 BW0 [4,6]        BW1 [7,9]
//   d1:      F0 [1,2]  BW0 [2,4]  F1 [4,5]  BW1 [5,7]
// At t=2 device 1 has F1 and BW0 ready and takes the backward first.
TEST(Simulate, GreedyModePrefersBackwardWork) {
  parallel::PipelineSpec spec;
  spec.schedule = "gpipe";
  spec.stages = 2;
  spec.microbatches = 2;
  const EventGraph g = parallel::build_schedule(
      spec, parallel::CostTable(parallel::TaskCosts{1000, 1500, 500, 1.0, 0.0}));
  const SimulationResult r = simulate(g, SimulationOptions{0, SimulationMode::Greedy});
  EXPECT_EQ(labels(g, r.trace.events(DeviceId{1})),
            (std::vector<std::string>{"F0.0@d1", "BW0.0@d1", "F1.0@d1", "BW1.0@d1"}));
  // Per device in GPipe's program order (F0 F1 BW0 BW1), not the order greedy ran them.
  EXPECT_EQ(by_device(g, [&](TaskId t) { return r.trace.start_of(t); }),
            (std::vector<std::vector<TimeNs>>{{0, 1000, 4000, 7000}, {1000, 4000, 2000, 5000}}));
  EXPECT_EQ(r.metrics.makespan, 9000);
  EXPECT_EQ(r.metrics.devices[1].peak_memory, 1.0);  // 1F1B-like, not GPipe's 2
}

TEST(Simulate, GreedyModeRunsGraphsWithoutProgramOrder) {
  EventGraphBuilder b(2);
  const auto task = [&](TaskKind kind, std::uint32_t device, TimeNs duration) {
    return b.add_task(TaskSpec{kind, DeviceId{device}, StageId{device}, 0, 0, duration, 0.0});
  };
  const TaskId f0 = task(TaskKind::F, 0, 100);
  const TaskId f1 = task(TaskKind::F, 1, 100);
  const TaskId w0 = task(TaskKind::W, 0, 50);  // independent filler on device 0
  const TaskId bw1 = task(TaskKind::BW, 1, 300);
  b.add_dependence(f0, f1);
  b.add_dependence(f1, bw1);
  const EventGraph g = std::move(b).freeze();
  const SimulationResult r = simulate(g, SimulationOptions{25, SimulationMode::Greedy});
  // Device 0 prefers F over W at t=0; F1 waits for F0 plus 25ns of latency.
  EXPECT_EQ(r.trace.start, (BigVector<TimeNs>{0, 125, 100, 225}));
  EXPECT_EQ(r.metrics.makespan, 525);
  EXPECT_EQ(r.metrics.critical_path, (std::vector<TaskId>{f0, f1, bw1}));
  (void)w0;
}

// A task released part-way through its predecessor (TaskSpec::release_share), by hand:
//   d0 compute: A [0,1000]  C [1000,1400]
//   d0 link:    X (share 0.25) [250,850]  Y (share 0.5, after X on the lane) [850,1050]
// Ordered and greedy agree; the critical path and the dependency bound follow the release.
TEST(Simulate, ReleaseSharePartWayThroughAPredecessor) {
  EventGraphBuilder b(1);
  const LaneId link = b.add_lane(DeviceId{0}, "dp all-reduce");
  const TaskId a = b.add_task(TaskSpec{TaskKind::BW, DeviceId{0}, StageId{0}, 0, 0, 1000, 0.0});
  const TaskId c = b.add_task(TaskSpec{TaskKind::F, DeviceId{0}, StageId{0}, 1, 0, 400, 0.0});
  TaskSpec x{TaskKind::AllReduce, DeviceId{0}, StageId{0}, 0, 0, 600, 0.0, link};
  x.release_share = 0.25;
  TaskSpec y = x;
  y.duration = 200;
  y.release_share = 0.5;
  const TaskId tx = b.add_task(x);
  const TaskId ty = b.add_task(y);
  b.add_dependence(a, tx);
  b.add_dependence(a, ty);
  for (const TaskId t : {a, c, tx, ty}) b.append_to_program(t);
  const EventGraph g = std::move(b).freeze();
  EXPECT_EQ(g.release_share(tx), 0.25);
  EXPECT_EQ(g.release_share(a), 1.0);
  for (const SimulationMode mode : {SimulationMode::Ordered, SimulationMode::Greedy}) {
    SCOPED_TRACE(mode == SimulationMode::Ordered ? "ordered" : "greedy");
    const SimulationResult r = simulate(g, SimulationOptions{0, mode});
    EXPECT_EQ(r.trace.start, (BigVector<TimeNs>{0, 1000, 250, 850}));
    EXPECT_EQ(r.metrics.makespan, 1400);
    EXPECT_EQ(r.metrics.devices[0].communication, 800);
  }
  const SimulationResult r = simulate(g);
  EXPECT_EQ(r.metrics.dependency_bound, 1000);  // A then C; X ends at 850, Y at 700 alone
  // A spec's share must be a share.
  EventGraphBuilder bad(1);
  TaskSpec wrong{TaskKind::F, DeviceId{0}, StageId{0}, 0, 0, 10, 0.0};
  wrong.release_share = 1.5;
  EXPECT_THROW((void)bad.add_task(wrong), ScheduleError);
}

// Transfers pay latency + bytes / bandwidth on the link between the devices' nodes.
TEST(Simulate, LinkLatencyBandwidthAndNodes) {
  EXPECT_EQ(CommunicationCost::transfer(Link{2000, 400e9}, 1000, 64e6), 1000 + 2000 + 160'000);
  EXPECT_EQ(CommunicationCost::transfer(Link{5000, 12.5e9}, 0, 64e6), 5000 + 5'120'000);
  EXPECT_EQ(CommunicationCost::transfer(Link{5000, 0}, 0, 64e6), 5000);  // unlimited bandwidth
  EXPECT_EQ(CommunicationCost::transfer(Link{0, 3e9}, 0, 1), 1);         // rounded up to 1 ns

  // GPipe p=4, m=1, 1us per task, devices 0-1 and 2-3 in two nodes; stage s sends
  // (s + 1) MB. F0: d0 [0,1]; to d1 intra 1MB: 1us + 1MB/1GB/s = 1ms... keep numbers small:
  // intra 100ns + bytes/1e12 B/s, inter 1000ns + bytes/1e11 B/s.
  parallel::PipelineSpec spec;
  spec.schedule = "gpipe";
  spec.stages = 4;
  spec.microbatches = 1;
  const EventGraph g = parallel::build_schedule(
      spec, parallel::CostTable(parallel::TaskCosts{1000, 500, 500, 1, 0}));
  SimulationOptions options;
  options.devices_per_node = 2;
  options.intra_node = Link{100, 1e12};
  options.inter_node = Link{1000, 1e11};
  options.boundary_bytes = {1e6, 2e6, 3e6, 4e6};
  const SimulationResult r = simulate(g, options);
  // Forward: d0->d1 intra 100 + 1000 = 1100; d1->d2 inter 1000 + 20000 = 21000; d2->d3 intra
  // 100 + 3000 = 3100. F starts: 0, 2100, 24100, 28200; BW on d3 [29200, 30200].
  // Backward carries the gradient of the receiver's boundary: d3->d2 3100, d2->d1 21000,
  // d1->d0 1100: BW on d2 [33300, 34300], d1 [55300, 56300], d0 [57400, 58400].
  EXPECT_EQ(by_device(g, [&](TaskId t) { return r.trace.start_of(t); }),
            (std::vector<std::vector<TimeNs>>{
                {0, 57400}, {2100, 55300}, {24100, 33300}, {28200, 29200}}));
  EXPECT_EQ(r.metrics.makespan, 58400);
  EXPECT_EQ(r.metrics.dependency_bound, 58400);
}

// Found in review: times beyond int64 nanoseconds were UB or silently wrong.
TEST(Simulate, TimesBeyondTheRangeAreErrors) {
  EXPECT_THROW((void)CommunicationCost::transfer(Link{0, 1.0}, 0, 1e18), ScheduleError);
  EXPECT_THROW((void)CommunicationCost::transfer(Link{0, 1e-300}, 0, 1e9), ScheduleError);
  parallel::PipelineSpec spec;
  spec.schedule = "1f1b";
  spec.stages = 2;
  spec.microbatches = 16;
  const TimeNs huge = 500'000'000 * kNsPerS;  // 500 million seconds per task
  const EventGraph g = parallel::build_schedule(
      spec, parallel::CostTable(parallel::TaskCosts{huge, huge, huge, 1, 0}));
  try {
    (void)simulate(g);
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(std::string(e.what()),
              "the simulated step could last up to 4.8e+19 ns, beyond the simulator's range (4e18 "
              "ns, about 127 years): check the units of the costs and the network");
  }
  EXPECT_THROW((void)simulate(g, SimulationOptions{0, SimulationMode::Greedy}), ScheduleError);
}

TEST(Simulate, EmptyGraph) {
  const EventGraph g = EventGraphBuilder(3).freeze();
  const SimulationResult r = simulate(g);
  EXPECT_EQ(r.metrics.makespan, 0);
  EXPECT_EQ(r.metrics.devices.size(), 3u);
  EXPECT_EQ(r.metrics.bubble_ratio, 0.0);
  EXPECT_TRUE(r.metrics.critical_path.empty());
}

TEST(Simulate, OrderedModeNeedsProgramOrder) {
  EventGraphBuilder b(1);
  (void)b.add_task(TaskSpec{TaskKind::F, DeviceId{0}, StageId{0}, 0, 0, 5, 1.0});
  const EventGraph g = std::move(b).freeze();
  try {
    (void)simulate(g);
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(std::string(e.what()),
              "ordered simulation needs every task in its device's program order; this graph "
              "has none (simulate it in greedy mode)");
  }
  EXPECT_EQ(simulate(g, SimulationOptions{0, SimulationMode::Greedy}).metrics.makespan, 5);
}

TEST(Simulate, MemoryPeakFollowsExecutionOrderWithPartialFrees) {
  parallel::PipelineSpec spec;
  spec.schedule = "1f1b";
  spec.stages = 2;
  spec.microbatches = 4;
  spec.split_backward = true;
  // d0 runs F0 F1 B0 W0 F2 B1 W1 F3 B2 W2 B3 W3: +2 +2 -1.5 -0.5 +2 ... peak 4.
  const parallel::CostTable costs(parallel::TaskCosts{1, 1, 1, 2.0, 0.75});
  const SimulationResult r = simulate(parallel::build_schedule(spec, costs));
  EXPECT_EQ(r.metrics.devices[0].peak_memory, 4.0);
  EXPECT_EQ(r.metrics.devices[1].peak_memory, 2.0);
}

}  // namespace
}  // namespace perflow::simulator
