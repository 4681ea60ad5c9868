// GraphExtension gives the graph a builder gives for the same tasks, dependences and
// programs (EventGraphBuilder::extend plus the same calls), edge lists in the same order,
// with a topological order of its own (checked to be one).
#include "perflow/core/detail/graph_extension.hpp"

#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"

namespace perflow {
namespace {

using detail::GraphExtension;

TaskSpec spec(TaskKind kind, std::uint32_t device, std::uint32_t mb, TimeNs duration = 1) {
  return TaskSpec{kind, DeviceId{device}, StageId{device}, mb, 0, duration, 0.0};
}

std::vector<TaskId> ids(std::span<const TaskId> span) { return {span.begin(), span.end()}; }

// F0 -> F1 -> B1 -> B0 on two devices, programs F0 B0 and F1 B1.
EventGraph two_stage() {
  EventGraphBuilder b(2);
  const TaskId f0 = b.add_task(spec(TaskKind::F, 0, 0, 2));
  const TaskId f1 = b.add_task(spec(TaskKind::F, 1, 0, 2));
  const TaskId b1 = b.add_task(spec(TaskKind::B, 1, 0, 3));
  const TaskId b0 = b.add_task(spec(TaskKind::B, 0, 0, 3));
  b.add_dependence(f0, f1);
  b.add_dependence(f1, b1);
  b.add_dependence(b1, b0);
  for (const TaskId t : {f0, b0, f1, b1}) b.append_to_program(t);
  return std::move(b).freeze();
}

TEST(GraphExtension, InsertsRewritesAndAppends) {
  GraphExtension x(two_stage());
  const LaneId copies = x.add_lane(DeviceId{0}, "to host");
  // An R before B0 taking over its dependence on B1, and a copy after F0 on a new lane.
  const TaskId r = x.add_task(spec(TaskKind::R, 0, 0, 5));
  TaskSpec copy = spec(TaskKind::D2H, 0, 0, 7);
  copy.lane = copies;
  const TaskId d2h = x.add_task(copy);
  x.insert_before(TaskId{3}, r);
  x.append_to_program(d2h);
  x.add_dependence(r, TaskId{3});
  x.add_dependence(TaskId{0}, d2h);
  x.set_duration(TaskId{1}, 4);
  const EventGraph g =
      std::move(x).freeze([&](TaskId, TaskId v, auto&& emit) { emit(v == TaskId{3} ? r : v); });

  ASSERT_EQ(g.task_count(), 6u);
  EXPECT_EQ(r, TaskId{4});
  EXPECT_EQ(d2h, TaskId{5});
  EXPECT_EQ(g.lane_count(), 3u);
  EXPECT_EQ(g.lane_info(LaneId{2}).name, "to host");
  EXPECT_EQ(ids(g.program(DeviceId{0})), (std::vector<TaskId>{TaskId{0}, r, TaskId{3}}));
  EXPECT_EQ(ids(g.program(LaneId{2})), (std::vector<TaskId>{d2h}));
  EXPECT_EQ(g.duration(TaskId{1}), 4);
  EXPECT_EQ(g.duration(r), 5);
  EXPECT_EQ(g.lane(d2h), copies);
  EXPECT_EQ(g.lane(r), LaneId{0});
  // B0: its program predecessor is now R, then R's data edge.
  ASSERT_EQ(g.predecessors(TaskId{3}).size(), 2u);
  EXPECT_EQ(g.predecessors(TaskId{3})[0].task(), r);
  EXPECT_EQ(g.predecessors(TaskId{3})[0].kind(), EdgeKind::Order);
  EXPECT_EQ(g.predecessors(TaskId{3})[1].task(), r);
  EXPECT_EQ(g.predecessors(TaskId{3})[1].kind(), EdgeKind::Data);
  // R: after F0 in the program, and B1's result.
  ASSERT_EQ(g.predecessors(r).size(), 2u);
  EXPECT_EQ(g.predecessors(r)[0].task(), TaskId{0});
  EXPECT_EQ(g.predecessors(r)[1].task(), TaskId{2});
  // F0: program successor R, its data successor F1, then the added copy.
  ASSERT_EQ(g.successors(TaskId{0}).size(), 3u);
  EXPECT_EQ(g.successors(TaskId{0})[0].task(), r);
  EXPECT_EQ(g.successors(TaskId{0})[0].kind(), EdgeKind::Order);
  EXPECT_EQ(g.successors(TaskId{0})[1].task(), TaskId{1});
  EXPECT_EQ(g.successors(TaskId{0})[2].task(), d2h);
  EXPECT_EQ(g.edge_count(), 8u);  // 3 order + 5 data
  // The base's order (0, 1, 2, 3), each added task after its last predecessor in it.
  EXPECT_EQ(ids(g.topological_order()),
            (std::vector<TaskId>{TaskId{0}, d2h, TaskId{1}, TaskId{2}, r, TaskId{3}}));
}

TEST(GraphExtension, RefusesWhatABuilderRefuses) {
  GraphExtension x(two_stage());
  EXPECT_THROW((void)x.add_lane(DeviceId{2}, "ep a2a"), ScheduleError);
  EXPECT_THROW((void)x.add_task(spec(TaskKind::R, 2, 0)), ScheduleError);
  EXPECT_THROW((void)x.add_task(spec(TaskKind::R, 0, 0, -1)), ScheduleError);
  TaskSpec elsewhere = spec(TaskKind::R, 0, 0);
  elsewhere.lane = LaneId{1};  // device 1's compute lane
  EXPECT_THROW((void)x.add_task(elsewhere), ScheduleError);
  EXPECT_THROW(x.add_dependence(TaskId{0}, TaskId{9}), ScheduleError);
  EXPECT_THROW(x.add_dependence(TaskId{1}, TaskId{1}), ScheduleError);
}

TEST(GraphExtension, ReportsACycleAsABuilderDoes) {
  GraphExtension x(two_stage());
  x.add_dependence(TaskId{3}, TaskId{0});  // B0 -> F0 closes a loop
  try {
    (void)std::move(x).freeze();
    FAIL() << "no CycleError";
  } catch (const CycleError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dependence cycle (the schedule deadlocks): B0.0@d0 -> F0.0@d0 -> B0.0@d0 (4 of 4 "
              "tasks can never start)");
  }
}

// A dependence the rewrite adds between base tasks against the base's order (1 -> 0 here,
// the base's order being its ids): the order is sorted again, and is one.
TEST(GraphExtension, SortsAgainWhenARewrittenDependenceGoesBackwards) {
  EventGraphBuilder b(2);
  const TaskId f1 = b.add_task(spec(TaskKind::F, 1, 0));
  const TaskId f0 = b.add_task(spec(TaskKind::F, 0, 0));
  const TaskId b0 = b.add_task(spec(TaskKind::B, 0, 0));
  b.add_dependence(f0, b0);
  for (const TaskId t : {f0, b0, f1}) b.append_to_program(t);
  GraphExtension x(std::move(b).freeze());
  const EventGraph g = std::move(x).freeze([&](TaskId, TaskId v, auto&& emit) {
    emit(v);
    if (v == b0) emit(f1);  // F0 feeds F1 too
  });
  ASSERT_EQ(g.predecessors(f1).size(), 1u);
  EXPECT_EQ(g.predecessors(f1)[0].task(), f0);
  EXPECT_FALSE(g.ids_are_topological());
  // Kahn's order from F0 (the one task without predecessors): its successors in list order.
  EXPECT_EQ(ids(g.topological_order()), (std::vector<TaskId>{f0, b0, f1}));
}

// An added task feeding one added before it (offloading's copy back into the R that
// recomputation added first): the added tasks are placed in their own topological order,
// each right before the base task after its last predecessor, not sorted again by Kahn.
TEST(GraphExtension, PlacesAnAddedTaskBeforeAnEarlierAddedConsumer) {
  GraphExtension x(two_stage());
  const LaneId copies = x.add_lane(DeviceId{0}, "from host");
  const TaskId r = x.add_task(spec(TaskKind::R, 0, 0, 5));  // before B0
  TaskSpec copy = spec(TaskKind::H2D, 0, 0, 7);
  copy.lane = copies;
  const TaskId h2d = x.add_task(copy);  // after F0, into R
  x.insert_before(TaskId{3}, r);
  x.append_to_program(h2d);
  x.add_dependence(r, TaskId{3});
  x.add_dependence(TaskId{0}, h2d);
  x.add_dependence(h2d, r);
  const EventGraph g =
      std::move(x).freeze([&](TaskId, TaskId v, auto&& emit) { emit(v == TaskId{3} ? r : v); });
  EXPECT_FALSE(g.ids_are_topological());
  // Base order F0 F1 B1 B0; the copy right after F0, R right after B1 (its last base
  // predecessor), before B0. Kahn's order by id would put the copy after F1.
  EXPECT_EQ(ids(g.topological_order()),
            (std::vector<TaskId>{TaskId{0}, h2d, TaskId{1}, TaskId{2}, r, TaskId{3}}));
}

// Two added tasks feeding each other: the cycle is reported as the builder reports it.
TEST(GraphExtension, ReportsACycleAmongAddedTasks) {
  GraphExtension x(two_stage());
  const TaskId a = x.add_task(spec(TaskKind::R, 0, 0, 5));
  const TaskId c = x.add_task(spec(TaskKind::R, 0, 1, 5));
  x.insert_before(TaskId{3}, a);
  x.insert_before(TaskId{3}, c);
  x.add_dependence(c, a);
  x.add_dependence(a, c);
  EXPECT_THROW((void)std::move(x).freeze(), CycleError);
}

// Insertions made while walking the programs in order (as recomputation makes them) and in
// any other order give the same programs.
TEST(GraphExtension, InsertsInProgramOrderOrNot) {
  const auto extend = [](bool walk_order) {
    GraphExtension x(two_stage());
    // Before B0 (device 0) and F1 (device 1), two before B1.
    const TaskId r0 = x.add_task(spec(TaskKind::R, 0, 0));
    const TaskId r1 = x.add_task(spec(TaskKind::R, 1, 0));
    const TaskId r2 = x.add_task(spec(TaskKind::R, 1, 1));
    const TaskId r3 = x.add_task(spec(TaskKind::R, 1, 2));
    if (walk_order) {
      x.insert_before(TaskId{3}, r0);
      x.insert_before(TaskId{1}, r1);
      x.insert_before(TaskId{2}, r2);
      x.insert_before(TaskId{2}, r3);
    } else {
      x.insert_before(TaskId{2}, r2);
      x.insert_before(TaskId{1}, r1);
      x.insert_before(TaskId{3}, r0);
      x.insert_before(TaskId{2}, r3);
    }
    return std::move(x).freeze();
  };
  for (const bool walk_order : {true, false}) {
    const EventGraph g = extend(walk_order);
    EXPECT_EQ(ids(g.program(DeviceId{0})), (std::vector<TaskId>{TaskId{0}, TaskId{4}, TaskId{3}}));
    EXPECT_EQ(ids(g.program(DeviceId{1})),
              (std::vector<TaskId>{TaskId{5}, TaskId{1}, TaskId{6}, TaskId{7}, TaskId{2}}));
    // Each R right before the base task after which it may start (R1 before all: it
    // follows nothing), R2 and R3 by id.
    EXPECT_EQ(ids(g.topological_order()),
              (std::vector<TaskId>{TaskId{5}, TaskId{0}, TaskId{4}, TaskId{1}, TaskId{6}, TaskId{7},
                                   TaskId{2}, TaskId{3}}));
  }
  // An insertion on another lane than its anchor's is refused either way.
  GraphExtension x(two_stage());
  const TaskId r = x.add_task(spec(TaskKind::R, 1, 0));
  x.insert_before(TaskId{0}, r);
  EXPECT_THROW((void)std::move(x).freeze(), std::logic_error);
}

// Seeded random extensions of a random layered graph: the extension's graph equals the one
// a builder makes from the same calls, list for list.
TEST(GraphExtension, EqualsTheBuildersGraph) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::mt19937 rng(seed);
    const auto pick = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
    const std::uint32_t devices = 3;
    const std::uint32_t base_n = 30 + pick(20);
    EventGraphBuilder b(devices);
    std::vector<TaskSpec> specs;
    for (std::uint32_t t = 0; t < base_n; ++t) {
      specs.push_back(spec(TaskKind::F, pick(devices), t, 1 + pick(9)));
      (void)b.add_task(specs.back());
    }
    std::vector<std::pair<TaskId, TaskId>> base_edges;
    for (std::uint32_t v = 1; v < base_n; ++v) {
      for (int k = 0; k < 2; ++k) {
        const TaskId from{pick(v)};
        b.add_dependence(from, TaskId{v});
      }
    }
    for (std::uint32_t t = 0; t < base_n; ++t) b.append_to_program(TaskId{t});
    const EventGraph base = std::move(b).freeze();

    // The calls: per base task maybe an inserted task before it taking over its data
    // dependences (as recomputation does), a few tasks on a new lane, some dependences.
    GraphExtension x{EventGraph(base)};
    EventGraphBuilder ref = EventGraphBuilder::with_lanes_of(base);
    const LaneId lane = x.add_lane(DeviceId{1}, "side");
    (void)ref.add_lane(DeviceId{1}, "side");
    for (std::uint32_t t = 0; t < base_n; ++t) (void)ref.add_task(base.spec(TaskId{t}));
    std::vector<TaskId> before(base_n);
    std::vector<TaskId> side;
    std::vector<std::pair<TaskId, TaskId>> added_edges;
    for (std::uint32_t t = 0; t < base_n; ++t) {
      if (pick(3) == 0) {
        TaskSpec s = base.spec(TaskId{t});
        s.kind = TaskKind::R;
        before[t] = x.add_task(s);
        EXPECT_EQ(ref.add_task(s), before[t]);
        x.insert_before(TaskId{t}, before[t]);
        added_edges.emplace_back(before[t], TaskId{t});
      }
      if (pick(5) == 0) {
        TaskSpec s = spec(TaskKind::D2H, 1, t, 2);
        s.lane = lane;
        const TaskId c = x.add_task(s);
        EXPECT_EQ(ref.add_task(s), c);
        side.push_back(c);
        x.append_to_program(c);
        added_edges.emplace_back(TaskId{t}, c);
      }
    }
    for (const auto& [from, to] : added_edges) x.add_dependence(from, to);
    const auto rewrite = [&](TaskId, TaskId v, auto&& emit) {
      emit(before[v.value].valid() ? before[v.value] : v);
    };
    // The builder's edges in the same global order.
    for (std::uint32_t u = 0; u < base_n; ++u) {
      for (const Adjacent& s : base.successors(TaskId{u})) {
        if (s.kind() != EdgeKind::Data) continue;
        rewrite(TaskId{u}, s.task(), [&](TaskId w) { ref.add_dependence(TaskId{u}, w); });
      }
    }
    for (const auto& [from, to] : added_edges) ref.add_dependence(from, to);
    for (std::uint32_t l = 0; l < base.lane_count(); ++l) {
      for (const TaskId t : base.program(LaneId{l})) {
        if (before[t.value].valid()) ref.append_to_program(before[t.value]);
        ref.append_to_program(t);
      }
    }
    for (const TaskId c : side) ref.append_to_program(c);
    const EventGraph want = std::move(ref).freeze();
    const EventGraph got = std::move(x).freeze(rewrite);

    ASSERT_EQ(got.task_count(), want.task_count());
    ASSERT_EQ(got.lane_count(), want.lane_count());
    ASSERT_EQ(got.edge_count(), want.edge_count());
    const auto same = [](std::span<const Adjacent> p, std::span<const Adjacent> q) {
      return std::equal(p.begin(), p.end(), q.begin(), q.end(),
                        [](const Adjacent& e1, const Adjacent& e2) {
                          return e1.task() == e2.task() && e1.kind() == e2.kind();
                        });
    };
    std::vector<std::uint32_t> rank(got.task_count());
    for (std::uint32_t i = 0; i < got.task_count(); ++i) {
      rank[got.topological_order()[i].value] = i;
    }
    for (std::uint32_t t = 0; t < got.task_count(); ++t) {
      const TaskId id{t};
      EXPECT_EQ(got.label(id), want.label(id));
      EXPECT_EQ(got.device(id), want.device(id));
      EXPECT_EQ(got.lane(id), want.lane(id));
      EXPECT_EQ(got.duration(id), want.duration(id));
      EXPECT_TRUE(same(got.predecessors(id), want.predecessors(id))) << "task " << t;
      EXPECT_TRUE(same(got.successors(id), want.successors(id))) << "task " << t;
      for (const Adjacent& p : got.predecessors(id)) EXPECT_LT(rank[p.task().value], rank[t]);
    }
    for (std::uint32_t l = 0; l < got.lane_count(); ++l) {
      EXPECT_EQ(ids(got.program(LaneId{l})), ids(want.program(LaneId{l})));
    }
  }
}

}  // namespace
}  // namespace perflow
