#include <random>
#include <string>

#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::parallel {
namespace {

using perflow::testing::order_string;

using perflow::testing::Simulated;

Simulated run(const std::string& schedule, std::uint32_t p, std::uint32_t m, TaskCosts costs,
              bool split = false) {
  PipelineSpec spec;
  spec.schedule = schedule;
  spec.stages = p;
  spec.microbatches = m;
  spec.split_backward = split;
  Simulated r{build_schedule(spec, CostTable(costs)), {}};
  r.result = simulator::simulate(r.graph);
  return r;
}

TEST(OneFOneB, MegatronProgramOrder) {
  const Simulated r = run("1f1b", 4, 8, TaskCosts{1000, 1000, 1000, 1.0, 0.0});
  EXPECT_EQ(order_string(r.graph, r.result.trace, 0),
            "F0.0 F1.0 F2.0 F3.0 BW0.0 F4.0 BW1.0 F5.0 BW2.0 F6.0 BW3.0 F7.0 BW4.0 BW5.0 BW6.0 "
            "BW7.0");
  EXPECT_EQ(order_string(r.graph, r.result.trace, 3),
            "F0.0 BW0.0 F1.0 BW1.0 F2.0 BW2.0 F3.0 BW3.0 F4.0 BW4.0 F5.0 BW5.0 F6.0 BW6.0 F7.0 "
            "BW7.0");
}

TEST(OneFOneB, FewerMicrobatchesThanStages) {
  const Simulated r = run("1f1b", 4, 2, TaskCosts{1000, 1000, 1000, 1.0, 0.0});
  EXPECT_EQ(order_string(r.graph, r.result.trace, 0), "F0.0 F1.0 BW0.0 BW1.0");
  EXPECT_EQ(order_string(r.graph, r.result.trace, 2), "F0.0 F1.0 BW0.0 BW1.0");
  EXPECT_EQ(order_string(r.graph, r.result.trace, 3), "F0.0 BW0.0 F1.0 BW1.0");
}

TEST(OneFOneB, SplitBackwardRunsBThenW) {
  const Simulated r = run("1f1b", 2, 3, TaskCosts{1000, 1000, 1000, 1.0, 0.0}, true);
  EXPECT_EQ(order_string(r.graph, r.result.trace, 0),
            "F0.0 F1.0 B0.0 W0.0 F2.0 B1.0 W1.0 B2.0 W2.0");
  EXPECT_EQ(order_string(r.graph, r.result.trace, 1),
            "F0.0 B0.0 W0.0 F1.0 B1.0 W1.0 F2.0 B2.0 W2.0");
}

TEST(GPipe, AllForwardsThenAllBackwards) {
  const Simulated r = run("gpipe", 3, 4, TaskCosts{1000, 1000, 1000, 1.0, 0.0});
  for (std::uint32_t d = 0; d < 3; ++d) {
    EXPECT_EQ(order_string(r.graph, r.result.trace, d),
              "F0.0 F1.0 F2.0 F3.0 BW0.0 BW1.0 BW2.0 BW3.0");
  }
}

// Closed forms (uniform costs, no latency): makespan (m+p-1)(F+B+W); peak activations m
// for GPipe and min(p-d, m) for 1F1B on device d. Checked over a grid with random costs.
TEST(ClosedForms, MakespanAndPeakMemoryOverAGrid) {
  const std::uint32_t seed = 20261122;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<TimeNs> cost(1, 5000);
  for (std::uint32_t p = 1; p <= 9; ++p) {
    for (std::uint32_t m = 1; m <= 20; m += (m < 6 ? 1 : 5)) {
      const TaskCosts c{cost(rng), cost(rng), cost(rng), 3.0, 0.0};
      const TimeNs expected = (m + p - 1) * (c.forward + c.backward + c.weight);
      for (const char* schedule : {"gpipe", "1f1b"}) {
        SCOPED_TRACE(fmt::format("seed={} {} p={} m={} F={} B={} W={}", seed, schedule, p, m,
                                 c.forward, c.backward, c.weight));
        const Simulated r = run(schedule, p, m, c);
        EXPECT_EQ(r.result.metrics.makespan, expected);
        for (std::uint32_t d = 0; d < p; ++d) {
          const double held = std::string(schedule) == "gpipe" ? m : std::min(p - d, m);
          EXPECT_EQ(r.result.metrics.devices[d].peak_memory, 3.0 * held) << "device " << d;
          EXPECT_EQ(r.result.metrics.devices[d].busy, m * (c.forward + c.backward + c.weight));
        }
      }
    }
  }
}

TEST(ScheduleRegistry, UnknownNameListsValidNamesAndClosestMatch) {
  try {
    (void)builtin_schedules().get("1f1bb");
    FAIL();
  } catch (const UnknownNameError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown schedule '1f1bb'; did you mean '1f1b'? (valid: gpipe, 1f1b, eager-1f1b, "
              "interleaved-1f1b, looped-bfs, zb-h1, zb-h2, zb, zbv, zbv-auto, 1f1b-v, v-half, "
              "v-min, dualpipe, dualpipev, custom)");
  }
}

TEST(ScheduleRegistry, EveryScheduleHasADescriptionAndConstraints) {
  for (const ScheduleInfo& s : builtin_schedules().all()) {
    EXPECT_FALSE(s.description.empty()) << s.name;
    EXPECT_FALSE(s.constraints.empty()) << s.name;
    EXPECT_NE(s.plan, nullptr) << s.name;
  }
  ScheduleRegistry copy;
  register_builtin_schedules(copy);
  EXPECT_THROW(register_builtin_schedules(copy), std::invalid_argument);
}

// The shape known before planning is the shape every plan has.
TEST(ScheduleRegistry, ShapeBeforePlanningIsThePlansShape) {
  for (const auto& info : builtin_schedules().all()) {
    if (info.name == "custom") continue;
    for (const std::uint32_t chunks : {1u, 2u, 3u}) {
      PipelineSpec spec;
      spec.schedule = info.name;
      spec.stages = 4;
      spec.microbatches = 8;
      spec.chunks = chunks;
      PipelinePlan plan;
      try {
        plan = plan_schedule(spec, CostTable({10, 20, 30, 1.0, 0.0}));
      } catch (const ScheduleError&) {
        continue;  // sizes this schedule refuses
      }
      EXPECT_EQ(plan.shape, schedule_shape(spec)) << info.name << " chunks " << chunks;
    }
  }
}

TEST(ScheduleRegistry, RefusedSizesNameTheField) {
  PipelineSpec spec;
  spec.schedule = "1f1b";
  spec.chunks = 2;
  try {
    (void)build_schedule(spec, CostTable(TaskCosts{1, 1, 1, 1, 0}));
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.field(), "chunks");
    EXPECT_EQ(std::string(e.what()), "1f1b needs exactly 1 chunk per stage, got 2");
  }
  spec.chunks = 1;
  spec.microbatches = 0;
  try {
    (void)build_schedule(spec, CostTable(TaskCosts{1, 1, 1, 1, 0}));
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.field(), "microbatches");
  }
}

TEST(PipelineGraph, RejectsIncompleteAndRepeatedPlans) {
  PipelinePlan plan;
  plan.stages = 2;
  plan.microbatches = 1;
  plan.programs = {{{TaskKind::F, 0, 0}, {TaskKind::BW, 0, 0}}, {{TaskKind::F, 0, 0}}};
  const CostTable costs(TaskCosts{1, 1, 1, 1, 0});
  try {
    (void)build_pipeline_graph(plan, costs);
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(std::string(e.what()), "BW0.0 is missing from the program of device 1");
  }
  plan.programs[1] = {{TaskKind::F, 0, 0}, {TaskKind::BW, 0, 0}, {TaskKind::F, 0, 0}};
  try {
    (void)build_pipeline_graph(plan, costs);
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(std::string(e.what()), "F0.0 on device 1: appears more than once");
  }
  plan.programs[1] = {{TaskKind::BW, 0, 0}, {TaskKind::F, 0, 0}};  // backward first: deadlock
  EXPECT_THROW((void)build_pipeline_graph(plan, costs), CycleError);
}

TEST(CostTable, OverridesFallBackToUniform) {
  CostTable table(TaskCosts{10, 20, 30, 1, 0});
  table.set(StageId{2}, 1, TaskCosts{1, 2, 3, 4, 0.5});
  EXPECT_EQ(table.at(StageId{2}, 1).forward, 1);
  EXPECT_EQ(table.at(StageId{2}, 0).forward, 10);
  EXPECT_EQ(table.at(StageId{0}, 1).forward, 10);
  EXPECT_EQ(table.at(StageId{7}, 3).forward, 10);
  table.set(StageId{0}, 3, TaskCosts{5, 5, 5, 5, 0});  // growing keeps earlier entries
  EXPECT_EQ(table.at(StageId{2}, 1).weight, 3);
  EXPECT_EQ(table.at(StageId{0}, 3).weight, 5);
  const TaskCosts& c = table.at(StageId{2}, 1);
  EXPECT_EQ(c.duration(TaskKind::BW), 5);
  EXPECT_EQ(c.memory_delta(TaskKind::F), 4.0);
  EXPECT_EQ(c.memory_delta(TaskKind::B), -2.0);
  EXPECT_EQ(c.memory_delta(TaskKind::W), -2.0);
  EXPECT_EQ(c.memory_delta(TaskKind::BW), -4.0);
}

TEST(CostTable, RefusesEntriesBeyondTheLargestPipeline) {
  CostTable table;
  // 2^32 - 1 would wrap chunk + 1 to 0 and write past the table.
  try {
    table.set(StageId{0}, 4294967295u, TaskCosts{});
    ADD_FAILURE() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_STREQ(e.what(),
                 "costs for stage 0, chunk 4294967295: beyond the largest pipeline "
                 "(268435456 stage-chunk pairs)");
  }
  // Checked before anything is allocated: (2^14 + 1)^2 pairs are too many.
  EXPECT_THROW(table.set(StageId{1u << 14}, 1u << 14, TaskCosts{}), ScheduleError);
  table.set(StageId{3}, 1, TaskCosts{7, 0, 0, 0, 0});
  EXPECT_EQ(table.at(StageId{3}, 1).forward, 7);
}

}  // namespace
}  // namespace perflow::parallel
