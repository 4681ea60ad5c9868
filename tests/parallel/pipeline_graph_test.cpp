// build_pipeline_graph writes the compressed graph in one pass, numbering tasks in a
// topological order. These tests hold it to the plain construction through
// EventGraphBuilder, written out here from the documented dependence rules.
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "perflow/parallel/pipeline.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::parallel {
namespace {

// The reference: tasks device-major in program order, then the dependences of each
// (microbatch, position) in order: F after the previous position's F, B after the next
// position's B, B after its F, W after its B.
EventGraph reference_graph(const PipelinePlan& plan, const CostTable& costs) {
  const PipelineLayout layout(plan.shape, plan.stages, plan.chunks, plan.microbatches);
  std::map<std::tuple<std::uint32_t, std::uint32_t, int>, TaskId> at;  // (mb, pos, slot)
  EventGraphBuilder builder(plan.stages);
  for (std::uint32_t d = 0; d < plan.stages; ++d) {
    for (const Step& step : plan.programs[d]) {
      const TaskCosts& c = costs.at(StageId{d}, step.chunk);
      const TaskId id =
          builder.add_task(TaskSpec{step.kind, DeviceId{d}, StageId{d}, step.microbatch, step.chunk,
                                    c.duration(step.kind), c.memory_delta(step.kind)});
      builder.append_to_program(id);
      const int slot = step.kind == TaskKind::F ? 0 : step.kind == TaskKind::W ? 2 : 1;
      at[{step.microbatch, layout.position(step.microbatch, d, step.chunk), slot}] = id;
    }
  }
  for (std::uint32_t mb = 0; mb < plan.microbatches; ++mb) {
    for (std::uint32_t pos = 0; pos < layout.positions(); ++pos) {
      if (pos > 0) builder.add_dependence(at.at({mb, pos - 1, 0}), at.at({mb, pos, 0}));
      if (pos + 1 < layout.positions()) {
        builder.add_dependence(at.at({mb, pos + 1, 1}), at.at({mb, pos, 1}));
      }
      builder.add_dependence(at.at({mb, pos, 0}), at.at({mb, pos, 1}));
      if (const auto w = at.find({mb, pos, 2}); w != at.end()) {
        builder.add_dependence(at.at({mb, pos, 1}), w->second);
      }
    }
  }
  return std::move(builder).freeze();
}

// A task named by what it is, so graphs that number tasks differently compare equal.
std::string name(const EventGraph& g, TaskId t) {
  return fmt::format("{}@d{}", g.label(t), g.device(t).value);
}

std::vector<std::string> names(const EventGraph& g, std::span<const Adjacent> list) {
  std::vector<std::string> out;
  for (const Adjacent& a : list) {
    out.push_back(
        fmt::format("{}{}", a.kind() == EdgeKind::Order ? "order " : "", name(g, a.task())));
  }
  return out;
}

void expect_same_graph(const EventGraph& built, const EventGraph& reference,
                       const std::string& what) {
  ASSERT_EQ(built.task_count(), reference.task_count()) << what;
  ASSERT_EQ(built.edge_count(), reference.edge_count()) << what;
  ASSERT_EQ(built.lane_count(), reference.lane_count()) << what;
  EXPECT_TRUE(built.ids_are_topological()) << what;
  for (std::uint32_t d = 0; d < reference.device_count(); ++d) {
    const auto a = built.program(DeviceId{d});
    const auto b = reference.program(DeviceId{d});
    ASSERT_EQ(a.size(), b.size()) << what << " device " << d;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string where = fmt::format("{}: {}", what, name(reference, b[i]));
      ASSERT_EQ(name(built, a[i]), name(reference, b[i])) << where;
      EXPECT_EQ(built.kind(a[i]), reference.kind(b[i])) << where;
      EXPECT_EQ(built.stage(a[i]), reference.stage(b[i])) << where;
      EXPECT_EQ(built.lane(a[i]), reference.lane(b[i])) << where;
      EXPECT_EQ(built.stages()[a[i].value], reference.stage(b[i])) << where;
      EXPECT_EQ(built.lanes_of_tasks()[a[i].value], reference.lane(b[i])) << where;
      EXPECT_EQ(built.chunk(a[i]), reference.chunk(b[i])) << where;
      EXPECT_EQ(built.chunks()[a[i].value], reference.chunk(b[i])) << where;
      EXPECT_EQ(built.durations()[a[i].value], reference.duration(b[i])) << where;
      EXPECT_EQ(built.memory_deltas()[a[i].value], reference.memory_delta(b[i])) << where;
      EXPECT_EQ(built.duration(a[i]), reference.duration(b[i])) << where;
      EXPECT_EQ(built.memory_delta(a[i]), reference.memory_delta(b[i])) << where;
      EXPECT_EQ(names(built, built.predecessors(a[i])),
                names(reference, reference.predecessors(b[i])))
          << where;
      EXPECT_EQ(names(built, built.successors(a[i])), names(reference, reference.successors(b[i])))
          << where;
      for (const Adjacent& p : built.predecessors(a[i])) {
        EXPECT_LT(p.task(), a[i]) << where << ": ids are not topological";
      }
    }
  }
  EXPECT_EQ(built.total_duration(), reference.total_duration()) << what;
  const auto topo = built.topological_order();
  for (std::uint32_t t = 0; t < built.task_count(); ++t) EXPECT_EQ(topo[t], TaskId{t}) << what;
}

TEST(PipelineGraph, OnePassBuildEqualsTheBuilderForEverySchedule) {
  CostTable costs(TaskCosts{10, 20, 30, 1.0, 0.25});
  costs.set(StageId{1}, 0, TaskCosts{11, 21, 31, 2.0, 0.5});
  int built = 0;
  for (const auto& info : builtin_schedules().all()) {
    if (info.name == "custom") continue;
    for (const std::uint32_t p : {1u, 2u, 3u, 4u, 6u}) {
      for (const std::uint32_t m : {1u, 2u, 4u, 5u, 8u, 12u}) {
        for (const std::uint32_t chunks : {1u, 2u, 3u}) {
          for (const bool split : {false, true}) {
            PipelineSpec spec;
            spec.schedule = info.name;
            spec.stages = p;
            spec.microbatches = m;
            spec.chunks = chunks;
            spec.split_backward = split;
            PipelinePlan plan;
            try {
              plan = plan_schedule(spec, costs);
            } catch (const ScheduleError&) {
              continue;  // sizes this schedule refuses
            }
            const std::string what =
                fmt::format("{} p={} m={} chunks={} split={}", info.name, p, m, chunks, split);
            expect_same_graph(build_pipeline_graph(plan, costs), reference_graph(plan, costs),
                              what);
            ++built;
          }
        }
      }
    }
  }
  EXPECT_GT(built, 300);  // the grid reaches every schedule family
}

TEST(PipelineGraph, DeadlockAndNegativeCostReadAsTheBuilderReportsThem) {
  PipelinePlan plan;
  plan.stages = 2;
  plan.microbatches = 2;
  // Device 1 runs microbatch 1 before 0 while device 0 waits for its backward of 0.
  plan.programs = {
      {{TaskKind::F, 0, 0}, {TaskKind::BW, 0, 0}, {TaskKind::F, 1, 0}, {TaskKind::BW, 1, 0}},
      {{TaskKind::F, 1, 0}, {TaskKind::BW, 1, 0}, {TaskKind::F, 0, 0}, {TaskKind::BW, 0, 0}}};
  try {
    (void)build_pipeline_graph(plan, CostTable(TaskCosts{1, 1, 1, 1, 0}));
    FAIL();
  } catch (const CycleError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dependence cycle (the schedule deadlocks): F1.0@d0 -> F1.0@d1 -> BW1.0@d1 -> "
              "F0.0@d1 -> BW0.0@d1 -> BW0.0@d0 -> F1.0@d0 (7 of 8 tasks can never start)");
  }
  plan.programs = {
      {{TaskKind::F, 0, 0}, {TaskKind::BW, 0, 0}, {TaskKind::F, 1, 0}, {TaskKind::BW, 1, 0}},
      {{TaskKind::F, 0, 0}, {TaskKind::BW, 0, 0}, {TaskKind::F, 1, 0}, {TaskKind::BW, 1, 0}}};
  try {
    (void)build_pipeline_graph(plan, CostTable(TaskCosts{1, -5, 1, 1, 0}));
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(std::string(e.what()), "task BW0.0 has a negative duration (-4 ns)");
  }
}

}  // namespace
}  // namespace perflow::parallel
