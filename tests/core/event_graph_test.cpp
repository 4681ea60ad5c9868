#include "perflow/core/event_graph.hpp"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace perflow
