#include "perflow/simulator/lowering.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/iterations.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::simulator {
namespace {

using testing::pipeline_spec;

// Device 0 runs F0, F1 (1 us each); device 1 runs their consumers (1 us each). Each
// activation is 2000 bytes over a 1 GB/s link with 100 ns latency: 2 us on the wire.
struct TwoDevices {
  EventGraph graph;
  SimulationOptions options;
};

TwoDevices two_devices() {
  EventGraphBuilder b(2);
  const TaskId f0 = b.add_task({TaskKind::F, DeviceId{0}, StageId{0}, 0, 0, 1000});
  const TaskId f1 = b.add_task({TaskKind::F, DeviceId{0}, StageId{0}, 1, 0, 1000});
  const TaskId g0 = b.add_task({TaskKind::F, DeviceId{1}, StageId{1}, 0, 0, 1000});
  const TaskId g1 = b.add_task({TaskKind::F, DeviceId{1}, StageId{1}, 1, 0, 1000});
  b.add_dependence(f0, g0);
  b.add_dependence(f1, g1);
  for (const TaskId t : {f0, f1, g0, g1}) b.append_to_program(t);
  SimulationOptions options;
  options.intra_node = Link{100, 1e9};
  options.boundary_bytes = {2000, 2000};
  return {std::move(b).freeze(), options};
}

TEST(Lowering, TransfersOnOneLinkRunOneAtATime) {
  const auto [graph, options] = two_devices();
  // Unlowered: both transfers overlap freely: g0 at 1000 + 2100, g1 at max(4100, 2000 + 2100).
  const SimulationResult plain = simulate(graph, options);
  EXPECT_EQ(plain.trace.start_of(TaskId{2}), 3100);
  EXPECT_EQ(plain.trace.start_of(TaskId{3}), 4100);
  EXPECT_EQ(plain.metrics.makespan, 5100);

  const EventGraph lowered = lower_communication(graph, options);
  ASSERT_EQ(lowered.task_count(), 6u);
  ASSERT_EQ(lowered.lane_count(), 3u);
  EXPECT_EQ(lowered.lane_info(LaneId{2}).name, "send 0>1");
  EXPECT_EQ(lowered.lane_info(LaneId{2}).device, DeviceId{0});
  const SimulationResult r = simulate(lowered, options);
  // SEND0 [1000, 3000]; SEND1 waits for the link: [3000, 5000]; each consumer 100 ns later.
  EXPECT_EQ(lowered.kind(TaskId{4}), TaskKind::Send);
  EXPECT_EQ(lowered.label(TaskId{4}), "SEND0.0");
  EXPECT_EQ(r.trace.start_of(TaskId{4}), 1000);
  EXPECT_EQ(r.trace.finish_of(TaskId{4}), 3000);
  EXPECT_EQ(r.trace.start_of(TaskId{5}), 3000);
  EXPECT_EQ(r.trace.finish_of(TaskId{5}), 5000);
  EXPECT_EQ(r.trace.start_of(TaskId{2}), 3100);
  EXPECT_EQ(r.trace.start_of(TaskId{3}), 5100);
  EXPECT_EQ(r.metrics.makespan, 6100);
  // Compute overlaps communication: F1 runs on device 0 while SEND0 is on the link.
  EXPECT_EQ(r.trace.start_of(TaskId{1}), 1000);
  EXPECT_EQ(r.metrics.devices[0].busy, 2000);
  EXPECT_EQ(r.metrics.devices[0].communication, 4000);
}

TEST(Lowering, GreedyModeSerializesTheLinkToo) {
  auto [graph, options] = two_devices();
  options.mode = SimulationMode::Greedy;
  const SimulationResult r = simulate(lower_communication(graph, options), options);
  EXPECT_EQ(r.trace.finish_of(TaskId{5}), 5000);
  EXPECT_EQ(r.metrics.makespan, 6100);
}

TEST(Lowering, LoweringTwiceChangesNothing) {
  const auto [graph, options] = two_devices();
  const EventGraph once = lower_communication(graph, options);
  const EventGraph twice = lower_communication(once, options);
  EXPECT_EQ(twice.task_count(), once.task_count());
  EXPECT_EQ(twice.lane_count(), once.lane_count());
  EXPECT_EQ(simulate(twice, options).metrics.makespan, 6100);
}

TEST(Lowering, InterNodeLinksUseTheirOwnBandwidth) {
  auto [graph, options] = two_devices();
  options.devices_per_node = 1;  // devices 0 and 1 on different nodes
  options.inter_node = Link{500, 0.5e9};
  const SimulationResult r = simulate(lower_communication(graph, options), options);
  // 2000 bytes at 0.5 GB/s: 4 us per transfer; SEND1 waits for SEND0 (ends at 5000).
  EXPECT_EQ(r.trace.finish_of(TaskId{4}), 5000);
  EXPECT_EQ(r.trace.finish_of(TaskId{5}), 9000);
  EXPECT_EQ(r.trace.start_of(TaskId{3}), 9500);
}

// Every schedule: with latency only, lowering changes no start time; with bytes, it can
// only delay (a transfer waits for its link), and every link's transfers never overlap.
TEST(Lowering, EverySchedulePropertiesOverAGrid) {
  for (const parallel::ScheduleInfo& info : parallel::builtin_schedules().all()) {
    if (info.name == "custom") continue;
    for (std::uint32_t p = 2; p <= 4; ++p) {
      for (const std::uint32_t m : {4u, 8u}) {
        for (std::uint32_t v = 1; v <= 2; ++v) {
          const parallel::PipelineSpec spec = pipeline_spec(info.name, p, m, v);
          EventGraph g;
          try {
            g = parallel::build_schedule(spec, parallel::CostTable({1000, 2000, 1500, 1.0, 0.5}));
          } catch (const ScheduleError&) {
            continue;
          }
          SCOPED_TRACE(fmt::format("{} p={} m={} v={}", info.name, p, m, v));
          SimulationOptions latency_only;
          latency_only.p2p_latency = 300;
          const SimulationResult plain = simulate(g, latency_only);
          const SimulationResult lowered =
              simulate(lower_communication(g, latency_only), latency_only);
          for (std::uint32_t t = 0; t < g.task_count(); ++t) {
            ASSERT_EQ(lowered.trace.start[t], plain.trace.start[t]) << g.label(TaskId{t});
          }
          EXPECT_EQ(lowered.metrics.makespan, plain.metrics.makespan);

          SimulationOptions with_bytes = latency_only;
          with_bytes.intra_node = Link{200, 1e9};
          with_bytes.boundary_bytes.assign(p, 1500.0);  // 1.5 us per transfer
          const SimulationResult slow = simulate(g, with_bytes);
          const EventGraph lg = lower_communication(g, with_bytes);
          const SimulationResult contended = simulate(lg, with_bytes);
          for (std::uint32_t t = 0; t < g.task_count(); ++t) {
            ASSERT_GE(contended.trace.start[t], slow.trace.start[t]) << g.label(TaskId{t});
          }
          for (std::uint32_t l = lg.device_count(); l < lg.lane_count(); ++l) {
            const auto events = contended.trace.events(LaneId{l});
            for (std::size_t i = 1; i < events.size(); ++i) {
              ASSERT_GE(contended.trace.start_of(events[i]),
                        contended.trace.finish_of(events[i - 1]));
            }
          }
        }
      }
    }
  }
}

// Synchronous iterations, then lowering: the barrier's dependences move no data, so they
// get no SEND (which would queue behind the next iteration's transfers on the link and
// deadlock) and no latency; two iterations take exactly twice one, and each SEND carries
// its producer's iteration.
TEST(Lowering, BarriersOfIterationsAreNotTransfers) {
  SimulationOptions options(10'000);
  options.intra_node = Link{200, 1e9};
  options.boundary_bytes.assign(4, 1500.0);
  const EventGraph one = parallel::build_schedule(pipeline_spec("1f1b", 4, 8, 1),
                                                  parallel::CostTable({1000, 1000, 1000}));
  const EventGraph lowered_one = lower_communication(one, options);
  const EventGraph lowered_two =
      lower_communication(parallel::repeat_iterations(one, {2, true}), options);
  EXPECT_EQ(lowered_two.lane_count(), lowered_one.lane_count() + 1);  // + iteration sync
  const Metrics m = simulate(lowered_two, options).metrics;
  EXPECT_EQ(m.makespan, 2 * simulate(lowered_one, options).metrics.makespan);
  std::size_t sends[2] = {0, 0};
  for (std::uint32_t t = 0; t < lowered_two.task_count(); ++t) {
    if (lowered_two.kind(TaskId{t}) == TaskKind::Send) ++sends[lowered_two.iteration(TaskId{t})];
  }
  std::size_t sends_one = 0;
  for (std::uint32_t t = 0; t < lowered_one.task_count(); ++t) {
    sends_one += lowered_one.kind(TaskId{t}) == TaskKind::Send ? 1u : 0u;
  }
  EXPECT_EQ(sends[0], sends_one);
  EXPECT_EQ(sends[1], sends_one);
}

}  // namespace
}  // namespace perflow::simulator
