#include "perflow/core/event_graph.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/core/detail/graph_storage.hpp"
#include "perflow/core/error.hpp"

namespace perflow {
namespace {

TaskSpec spec(TaskKind kind, std::uint32_t device, std::uint32_t mb, TimeNs duration = 1) {
  return TaskSpec{kind, DeviceId{device}, StageId{device}, mb, 0, duration, 0.0};
}

TEST(EventGraph, FreezeBuildsCsrInBothDirections) {
  EventGraphBuilder b(2);
  const TaskId f0 = b.add_task(spec(TaskKind::F, 0, 0));
  const TaskId f1 = b.add_task(spec(TaskKind::F, 1, 0));
  const TaskId bw1 = b.add_task(spec(TaskKind::BW, 1, 0));
  const TaskId bw0 = b.add_task(spec(TaskKind::BW, 0, 0));
  b.add_dependence(f0, f1);
  b.add_dependence(f1, bw1);
  b.add_dependence(bw1, bw0);
  for (TaskId t : {f0, bw0, f1, bw1}) b.append_to_program(t);
  const EventGraph g = std::move(b).freeze();

  EXPECT_EQ(g.task_count(), 4u);
  EXPECT_EQ(g.edge_count(), 5u);  // 3 data + 2 order
  EXPECT_TRUE(g.has_program_order());
  EXPECT_EQ(g.label(bw1), "BW0.0");
  ASSERT_EQ(g.predecessors(bw0).size(), 2u);
  // The program-order edge comes first, then data edges in insertion order.
  EXPECT_EQ(g.predecessors(bw0)[0].task(), f0);
  EXPECT_EQ(g.predecessors(bw0)[0].kind(), EdgeKind::Order);
  EXPECT_EQ(g.predecessors(bw0)[1].task(), bw1);
  EXPECT_EQ(g.predecessors(bw0)[1].kind(), EdgeKind::Data);
  ASSERT_EQ(g.successors(f0).size(), 2u);
  EXPECT_EQ(g.successors(f0)[0].task(), bw0);
  EXPECT_EQ(g.successors(f0)[0].kind(), EdgeKind::Order);
  EXPECT_EQ(g.successors(f0)[1].task(), f1);
  const std::vector<TaskId> program0(g.program(DeviceId{0}).begin(), g.program(DeviceId{0}).end());
  EXPECT_EQ(program0, (std::vector<TaskId>{f0, bw0}));
  const std::vector<TaskId> topo(g.topological_order().begin(), g.topological_order().end());
  EXPECT_EQ(topo, (std::vector<TaskId>{f0, f1, bw1, bw0}));
}

TEST(EventGraph, ReorderedProgramsThatMakeProgressFreeze) {
  EventGraphBuilder b(2);
  const TaskId a = b.add_task(spec(TaskKind::F, 0, 0));
  const TaskId c = b.add_task(spec(TaskKind::F, 0, 1));
  const TaskId x = b.add_task(spec(TaskKind::F, 1, 1));
  const TaskId y = b.add_task(spec(TaskKind::F, 1, 0));
  b.add_dependence(a, y);
  b.add_dependence(c, x);
  for (TaskId t : {c, a, y, x}) b.append_to_program(t);  // microbatch 1 first on device 0
  const EventGraph g = std::move(b).freeze();
  const std::vector<TaskId> topo(g.topological_order().begin(), g.topological_order().end());
  EXPECT_EQ(topo, (std::vector<TaskId>{c, a, y, x}));
}

TEST(EventGraph, CycleIsReportedWithTheTasksOnIt) {
  EventGraphBuilder d(2);
  const TaskId f0 = d.add_task(spec(TaskKind::F, 0, 0));
  const TaskId b0 = d.add_task(spec(TaskKind::BW, 0, 0));
  const TaskId f0d1 = d.add_task(spec(TaskKind::F, 1, 0));
  const TaskId b0d1 = d.add_task(spec(TaskKind::BW, 1, 0));
  d.add_dependence(f0, f0d1);
  d.add_dependence(f0d1, b0d1);
  d.add_dependence(b0d1, b0);
  d.append_to_program(b0);  // device 0 wants its backward before its forward: deadlock
  d.append_to_program(f0);
  d.append_to_program(f0d1);
  d.append_to_program(b0d1);
  try {
    (void)std::move(d).freeze();
    FAIL() << "expected a CycleError";
  } catch (const CycleError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dependence cycle (the schedule deadlocks): F0.0@d1 -> BW0.0@d1 -> BW0.0@d0 -> "
              "F0.0@d0 -> F0.0@d1 (4 of 4 tasks can never start)");
    EXPECT_EQ(e.cycle().size(), 4u);
  }
}

TEST(EventGraph, BuilderRejectsBadInput) {
  EventGraphBuilder b(1);
  EXPECT_THROW((void)b.add_task(spec(TaskKind::F, 1, 0)), ScheduleError);
  EXPECT_THROW((void)b.add_task(spec(TaskKind::F, 0, 0, -5)), ScheduleError);
  const TaskId t = b.add_task(spec(TaskKind::F, 0, 0));
  EXPECT_THROW(b.add_dependence(t, t), ScheduleError);
  EXPECT_THROW(b.add_dependence(t, TaskId{7}), ScheduleError);
  b.append_to_program(t);
  EXPECT_THROW(b.append_to_program(t), ScheduleError);
}

TEST(EventGraph, PartialProgramOrderIsRejected) {
  EventGraphBuilder b(1);
  const TaskId t = b.add_task(spec(TaskKind::F, 0, 0));
  (void)b.add_task(spec(TaskKind::BW, 0, 0));
  b.append_to_program(t);
  try {
    (void)std::move(b).freeze();
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(std::string(e.what()),
              "task BW0.0 on device 0 has no place in its device's program (1 of 2 tasks have "
              "one)");
  }
}

TEST(EventGraph, GraphWithoutProgramsFreezes) {
  EventGraphBuilder b(1);
  const TaskId u = b.add_task(spec(TaskKind::F, 0, 0));
  const TaskId v = b.add_task(spec(TaskKind::BW, 0, 0));
  b.add_dependence(u, v);
  const EventGraph g = std::move(b).freeze();
  EXPECT_FALSE(g.has_program_order());
  EXPECT_TRUE(g.program(DeviceId{0}).empty());
}

// A graph as a one-pass builder hands it over: tasks on device 1 of 2, program F0 F1 W0 B0
// with ids in that order (topological), no stage, lane, chunk or successor arrays, costs by
// place. B0 waits on both forwards, W0 on F0 (not a real pipeline: it puts a backward
// successor of F0 after a W by id).
detail::GraphParts one_pass_parts() {
  detail::GraphParts g;
  g.device_count = 2;
  g.lanes = {{DeviceId{0}, "compute"}, {DeviceId{1}, "compute"}};
  const std::vector<TaskKind> kinds{TaskKind::F, TaskKind::F, TaskKind::W, TaskKind::B};
  g.tasks.resize(kinds.size());
  for (std::uint32_t t = 0; t < kinds.size(); ++t) {
    g.tasks.kind[t] = kinds[t];
    g.tasks.device[t] = DeviceId{1};
    g.tasks.microbatch[t] = t == 1 ? 1 : 0;
  }
  // Per device, F B W BW: device 1's F takes 10 and holds 2.0, its B 20 and frees 0.5, ...
  g.tasks.placed.chunks = 1;
  g.tasks.placed.duration = {1, 2, 3, 4, 10, 20, 30, 40};
  g.tasks.placed.memory_delta = {0, 0, 0, 0, 2.0, -0.5, -1.5, -2.0};
  const auto order = [](std::uint32_t t) { return Adjacent(TaskId{t}, EdgeKind::Order); };
  const auto data = [](std::uint32_t t) { return Adjacent(TaskId{t}, EdgeKind::Data); };
  g.pred = {order(0), order(1), data(0), order(2), data(0), data(1)};
  g.pred_offset = {0, 0, 1, 3, 6};
  g.program_offset = {0, 0, 4};
  g.program = {TaskId{0}, TaskId{1}, TaskId{2}, TaskId{3}};
  return g;
}

std::vector<std::pair<std::uint32_t, EdgeKind>> listed(std::span<const Adjacent> list) {
  std::vector<std::pair<std::uint32_t, EdgeKind>> out;
  for (const Adjacent& a : list) out.emplace_back(a.task().value, a.kind());
  return out;
}

TEST(EventGraph, AssembledGraphDerivesWhatItLeftOut) {
  const EventGraph g = detail::GraphAccess::assemble(one_pass_parts());
  ASSERT_EQ(g.task_count(), 4u);
  EXPECT_FALSE(g.has_communication_lanes());
  EXPECT_TRUE(g.ids_are_topological());
  // Stage and lane are the device's, per task and as columns.
  for (std::uint32_t t = 0; t < 4; ++t) {
    EXPECT_EQ(g.stage(TaskId{t}), StageId{1});
    EXPECT_EQ(g.lane(TaskId{t}), LaneId{1});
    EXPECT_EQ(g.stages()[t], StageId{1});
    EXPECT_EQ(g.lanes_of_tasks()[t], LaneId{1});
    EXPECT_EQ(g.topological_order()[t], TaskId{t});
    EXPECT_EQ(g.chunk(TaskId{t}), 0u);
    EXPECT_EQ(g.chunks()[t], 0u);
  }
  EXPECT_EQ(g.spec(TaskId{3}).lane, LaneId{1});
  EXPECT_EQ(g.label(TaskId{1}), "F1.0");
  // Costs by place: F F W B on device 1.
  ASSERT_NE(detail::GraphAccess::placed_costs(g), nullptr);
  EXPECT_EQ(std::vector<TimeNs>(g.durations().begin(), g.durations().end()),
            (std::vector<TimeNs>{10, 10, 30, 20}));
  EXPECT_EQ(std::vector<double>(g.memory_deltas().begin(), g.memory_deltas().end()),
            (std::vector<double>{2.0, 2.0, -1.5, -0.5}));
  EXPECT_EQ(g.duration(TaskId{3}), 20);
  EXPECT_EQ(g.memory_delta(TaskId{2}), -1.5);
  EXPECT_EQ(g.total_duration(), 70.0);
  // Successors: the order edge, then the backward (B3 although W2 has the lower id), then
  // the rest.
  using E = std::vector<std::pair<std::uint32_t, EdgeKind>>;
  EXPECT_EQ(listed(g.successors(TaskId{0})),
            (E{{1, EdgeKind::Order}, {3, EdgeKind::Data}, {2, EdgeKind::Data}}));
  EXPECT_EQ(listed(g.successors(TaskId{1})), (E{{2, EdgeKind::Order}, {3, EdgeKind::Data}}));
  EXPECT_EQ(listed(g.successors(TaskId{2})), (E{{3, EdgeKind::Order}}));
  EXPECT_TRUE(g.successors(TaskId{3}).empty());
  // Derived once and kept: the same memory on every call, and in copies.
  const EventGraph copy = g;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy.stages().data(), g.stages().data());
  EXPECT_EQ(copy.successors(TaskId{0}).data(), g.successors(TaskId{0}).data());
  // A builder extending the graph gets the columns written out.
  EventGraphBuilder more = EventGraphBuilder::extend(g);
  const TaskId extra = more.add_task(spec(TaskKind::F, 0, 7));
  more.append_to_program(extra);
  const EventGraph extended = std::move(more).freeze();
  EXPECT_EQ(extended.stage(TaskId{2}), StageId{1});
  EXPECT_EQ(extended.stage(extra), StageId{0});
  EXPECT_EQ(detail::GraphAccess::placed_costs(extended), nullptr);
  EXPECT_EQ(extended.duration(TaskId{2}), 30);
  EXPECT_EQ(extended.memory_delta(TaskId{3}), -0.5);
  EXPECT_EQ(extended.duration(extra), 1);
  EXPECT_EQ(extended.chunk(TaskId{1}), 0u);
  EXPECT_EQ(listed(extended.successors(TaskId{0})), listed(g.successors(TaskId{0})));
}

TEST(EventGraph, AssembleRefusesCostsByPlaceOfTheWrongShape) {
  detail::GraphParts short_table = one_pass_parts();
  short_table.tasks.placed.duration.pop_back();
  short_table.tasks.placed.memory_delta.pop_back();
  EXPECT_THROW((void)detail::GraphAccess::assemble(std::move(short_table)), std::invalid_argument);
  // Two chunks per device need the chunk column.
  detail::GraphParts two_chunks = one_pass_parts();
  two_chunks.tasks.placed.chunks = 2;
  two_chunks.tasks.placed.duration.resize(16, 0);
  two_chunks.tasks.placed.memory_delta.resize(16, 0.0);
  EXPECT_THROW((void)detail::GraphAccess::assemble(two_chunks), std::invalid_argument);
  two_chunks.tasks.chunk.assign(4, 0);
  EXPECT_EQ(detail::GraphAccess::assemble(std::move(two_chunks)).duration(TaskId{3}), 0);
}

TEST(EventGraph, DerivedArraysAreTheSameFromThreadsAtOnce) {
  const EventGraph g = detail::GraphAccess::assemble(one_pass_parts());
  constexpr std::size_t kThreads = 8;
  std::vector<const Adjacent*> successors(kThreads);
  std::vector<const StageId*> stages(kThreads);
  std::vector<const LaneId*> lanes(kThreads);
  std::vector<const TaskId*> orders(kThreads);
  std::vector<const TimeNs*> durations(kThreads);
  std::vector<const double*> memory_deltas(kThreads);
  std::vector<const std::uint32_t*> chunks(kThreads);
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        successors[i] = g.successors(TaskId{0}).data();
        stages[i] = g.stages().data();
        lanes[i] = g.lanes_of_tasks().data();
        orders[i] = g.topological_order().data();
        durations[i] = g.durations().data();
        memory_deltas[i] = g.memory_deltas().data();
        chunks[i] = g.chunks().data();
      });
    }
  }
  for (std::size_t i = 1; i < kThreads; ++i) {
    EXPECT_EQ(successors[i], successors[0]);
    EXPECT_EQ(stages[i], stages[0]);
    EXPECT_EQ(lanes[i], lanes[0]);
    EXPECT_EQ(orders[i], orders[0]);
    EXPECT_EQ(durations[i], durations[0]);
    EXPECT_EQ(memory_deltas[i], memory_deltas[0]);
    EXPECT_EQ(chunks[i], chunks[0]);
  }
  EXPECT_EQ(durations[0][3], 20);
  EXPECT_EQ(g.successors(TaskId{0}).size(), 3u);
}

TEST(EventGraph, FreezeKeepsNoLaneColumnWithoutCommunicationLanes) {
  EventGraphBuilder b(2);
  const TaskId f = b.add_task(spec(TaskKind::F, 1, 0));
  b.append_to_program(f);
  const EventGraph plain = EventGraphBuilder(b).freeze();
  EXPECT_FALSE(plain.has_communication_lanes());
  EXPECT_EQ(plain.lane(f), LaneId{1});
  ASSERT_EQ(plain.lanes_of_tasks().size(), 1u);
  EXPECT_EQ(plain.lanes_of_tasks()[0], LaneId{1});

  const LaneId send = b.add_lane(DeviceId{1}, "send 1>0");
  TaskSpec s = spec(TaskKind::Send, 1, 0);
  s.lane = send;
  const TaskId t = b.add_task(s);
  b.append_to_program(t);
  const EventGraph with_send = std::move(b).freeze();
  EXPECT_TRUE(with_send.has_communication_lanes());
  EXPECT_EQ(with_send.lane(f), LaneId{1});
  EXPECT_EQ(with_send.lane(t), send);
}

}  // namespace
}  // namespace perflow
