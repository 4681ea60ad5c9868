// The schedule registry owns what it knows about a schedule: its shape, its chunk rule, and
// a check of the sizes that agrees with planning. Built-in schedules and one registered by
// the test (toy-v) are held to the same rules.
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../support/toy_schedule.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::parallel {
namespace {

using perflow::testing::registry_with_toy;
using perflow::testing::toy_v_schedule;

PipelineSpec spec_of(const std::string& schedule, std::uint32_t p, std::uint32_t m,
                     std::uint32_t chunks) {
  PipelineSpec spec;
  spec.schedule = schedule;
  spec.stages = p;
  spec.microbatches = m;
  spec.chunks = chunks;
  return spec;
}

// The field planning refuses `spec` in, or nothing when it plans.
std::optional<std::string> planning_refusal(const PipelineSpec& spec,
                                            const ScheduleRegistry& registry) {
  try {
    (void)plan_schedule(spec, CostTable(TaskCosts{10, 20, 30, 1.0, 0.0}), registry);
  } catch (const ScheduleError& e) {
    return e.field();
  }
  return std::nullopt;
}

// The specs of the grid for one schedule: stages 1..9, microbatches 1..20, chunks 1..3, and
// the values of the options the schedule takes at fewer microbatch counts (the planners'
// rules change at m < 2p or m <= p/2 + 1 here, and planning v-half and v-min for every
// memory_limit would make the test slow under ASan).
std::vector<PipelineSpec> grid(const ScheduleInfo& info) {
  std::vector<std::uint32_t> groups = {0};
  if ((info.options & kMicrobatchGroupSize) != 0) groups = {0, 1, 2, 3, 4, 5, 8, 9, 12, 20, 21};
  std::vector<double> limits = {0};
  if ((info.options & kMemoryLimit) != 0) limits = {0, -1, 1, 2, 3, 4, 5, 6.5, 8, 10};
  std::vector<int> orders = {0};  // programs given: stages + orders[i] (custom)
  if ((info.options & kProgramOrder) != 0) orders = {0, -1, 1};
  std::vector<std::optional<PipelineShape>> shapes = {std::nullopt};
  if ((info.options & kShape) != 0) {
    shapes = {std::nullopt, PipelineShape::Linear, PipelineShape::Interleaved,
              PipelineShape::VShape, PipelineShape::DualPipe};
  }
  std::vector<PipelineSpec> specs;
  for (std::uint32_t p = 1; p <= 9; ++p) {
    for (std::uint32_t m = 1; m <= 20; ++m) {
      for (std::uint32_t c = 1; c <= 3; ++c) {
        for (const std::uint32_t group : groups) {
          for (const double limit : limits) {
            for (const int order : orders) {
              for (const auto& shape : shapes) {
                const bool defaults = group == 0 && limit == 0 && order == 0 && !shape;
                if (!defaults && m > 7 && m != 9 && m != 12 && m != 20) continue;
                PipelineSpec spec = spec_of(info.name, p, m, c);
                spec.microbatch_group_size = group;
                spec.memory_limit = limit;
                // Programs are not checked while planning (build_pipeline_graph checks them).
                if ((info.options & kProgramOrder) != 0) {
                  spec.order.resize(static_cast<std::size_t>(static_cast<int>(p) + order));
                }
                spec.shape = shape;
                specs.push_back(std::move(spec));
              }
            }
          }
        }
      }
    }
  }
  return specs;
}

std::string describe(const PipelineSpec& s) {
  return fmt::format("{} p={} m={} chunks={} group={} limit={} programs={} shape={}", s.schedule,
                     s.stages, s.microbatches, s.chunks, s.microbatch_group_size, s.memory_limit,
                     s.order.size(), s.shape ? to_string(*s.shape) : "-");
}

// For every registered schedule (the built-in ones and toy-v), `check` refuses exactly the
// specs planning refuses, naming the same field, with a rule's text as `perflow schedules`
// lists it. A rule only planning decides (zbv-auto's search within memory_limit) may refuse
// what `check` passes, in its own field.
TEST(ScheduleCheck, AgreesWithPlanningOverAGrid) {
  const ScheduleRegistry registry = registry_with_toy();
  std::map<std::string, std::uint32_t> accepted;
  std::map<std::string, std::uint32_t> refused;
  std::map<std::string, std::uint32_t> left_to_planning;
  for (const ScheduleInfo& info : registry.all()) {
    for (const PipelineSpec& spec : grid(info)) {
      const std::optional<ScheduleViolation> violation = info.check(spec);
      const std::optional<std::string> refusal = planning_refusal(spec, registry);
      if (violation) {
        ++refused[info.name];
        ASSERT_TRUE(refusal.has_value())
            << describe(spec) << ": check refuses " << violation->field << ", planning accepts";
        ASSERT_EQ(*refusal, violation->field) << describe(spec);
        ASSERT_NE(info.constraints.find(violation->constraint), std::string::npos)
            << describe(spec) << ": '" << violation->constraint << "' is not listed";
      } else if (refusal) {
        ++left_to_planning[info.name];
        bool planned = false;
        for (const ScheduleConstraint& rule : info.rules) {
          planned = planned || (!rule.test && rule.field == *refusal);
        }
        ASSERT_TRUE(planned) << describe(spec) << ": check accepts, planning refuses " << *refusal;
      } else {
        ++accepted[info.name];
      }
    }
  }
  for (const ScheduleInfo& info : registry.all()) {
    EXPECT_GT(accepted[info.name], 0u) << info.name;
    // looped-bfs takes every size of the grid.
    if (info.name != "looped-bfs") {
      EXPECT_GT(refused[info.name], 0u) << info.name;
    }
  }
  EXPECT_EQ(refused["looped-bfs"], 0u);
  // Only zbv-auto leaves a rule to planning; it finds no program below about 2 x stages.
  EXPECT_EQ(left_to_planning.size(), 1u);
  EXPECT_GT(left_to_planning["zbv-auto"], 0u);
  // Exact counts where they are easy to derive: one chunk count of three, and for dualpipev
  // and toy-v m >= 2p, i.e. sum over p = 1..9 of (21 - 2p) = 99 sizes.
  EXPECT_EQ(accepted["1f1b"], 9u * 20u);
  EXPECT_EQ(accepted["dualpipev"], 99u);
  EXPECT_EQ(accepted["toy-v"], 99u);
  // dualpipe: p in {2, 4, 6, 8}, m even and >= 2p: 9 + 7 + 5 + 3.
  EXPECT_EQ(accepted["dualpipe"], 24u);
}

TEST(ScheduleCheck, NamesTheFieldAndTheRule) {
  const ScheduleRegistry& registry = builtin_schedules();
  const auto check = [&](PipelineSpec spec) {
    return registry.get(spec.schedule).check(spec).value_or(ScheduleViolation{"-", "-"});
  };
  EXPECT_EQ(check(spec_of("1f1b", 4, 8, 2)), (ScheduleViolation{"chunks", "chunks = 1"}));
  EXPECT_EQ(check(spec_of("interleaved-1f1b", 4, 8, 1)),
            (ScheduleViolation{"chunks", "chunks >= 2"}));
  EXPECT_EQ(check(spec_of("interleaved-1f1b", 4, 3, 2)),
            (ScheduleViolation{"microbatches",
                               "stages <= microbatch_group_size (default: stages) <= "
                               "microbatches"}));
  EXPECT_EQ(check(spec_of("interleaved-1f1b", 4, 6, 2)),
            (ScheduleViolation{"microbatches",
                               "microbatches mod microbatch_group_size is 0 or >= stages"}));
  PipelineSpec grouped = spec_of("interleaved-1f1b", 4, 8, 2);
  grouped.microbatch_group_size = 3;
  EXPECT_EQ(check(grouped).field, "microbatch_group_size");
  grouped.microbatch_group_size = 6;  // 8 = 6 + 2: a last group of 2 < 4 stages
  EXPECT_EQ(check(grouped).field, "microbatches");
  grouped.microbatch_group_size = 8;
  EXPECT_FALSE(registry.get("interleaved-1f1b").check(grouped));
  EXPECT_EQ(check(spec_of("dualpipe", 3, 8, 2)),
            (ScheduleViolation{"stages", "stages and microbatches even"}));
  EXPECT_EQ(check(spec_of("dualpipe", 4, 7, 2)),
            (ScheduleViolation{"microbatches", "stages and microbatches even"}));
  EXPECT_EQ(check(spec_of("dualpipev", 4, 7, 2)),
            (ScheduleViolation{"microbatches", "microbatches >= 2 x stages"}));
  PipelineSpec limited = spec_of("v-half", 4, 8, 2);
  limited.memory_limit = 5;  // the peak: 2 x (4/2 + 1) = 6
  EXPECT_EQ(check(limited),
            (ScheduleViolation{"memory_limit",
                               "memory_limit >= its peak (default: the peak, 2 floor(p/2) + 2 "
                               "chunk activations)"}));
  limited.memory_limit = 6;
  EXPECT_FALSE(registry.get("v-half").check(limited));
  limited.schedule = "v-min";  // 2 x ((4+1)/3 + 1) = 4
  limited.memory_limit = 3.5;
  EXPECT_EQ(check(limited).field, "memory_limit");
  limited.memory_limit = 4;
  EXPECT_FALSE(registry.get("v-min").check(limited));
  limited.schedule = "zb";
  limited.chunks = 1;
  limited.memory_limit = 0.5;
  EXPECT_EQ(
      check(limited),
      (ScheduleViolation{"memory_limit", "memory_limit >= 1 in F activations (default: stages)"}));
  limited.schedule = "1f1b";
  EXPECT_EQ(check(limited), (ScheduleViolation{"memory_limit", "does not take memory_limit"}));
  EXPECT_EQ(check(spec_of("gpipe", 0, 8, 1)), (ScheduleViolation{"stages", "stages >= 1"}));
  EXPECT_EQ(
      check(spec_of("gpipe", 2, 1u << 30, 1)),
      (ScheduleViolation{"microbatches", "3 x stages x microbatches x chunks <= 268435456 tasks"}));
  PipelineSpec custom = spec_of("custom", 2, 4, 3);
  custom.order.resize(2);
  custom.shape = PipelineShape::VShape;
  EXPECT_EQ(check(custom),
            (ScheduleViolation{"shape",
                               "shape: linear for 1 chunk, interleaved (default for 2+), or v / "
                               "dualpipe for 2"}));
  custom.order.resize(1);
  EXPECT_EQ(check(custom), (ScheduleViolation{"order", "every task exactly once"}));
}

// Every option a schedule does not take is refused by `check` and by planning alike.
TEST(ScheduleCheck, RefusesOptionsTheScheduleDoesNotTake) {
  for (const ScheduleInfo& info : builtin_schedules().all()) {
    for (const std::string_view field :
         {"microbatch_group_size", "memory_limit", "order", "shape"}) {
      PipelineSpec spec = spec_of(info.name, 4, 8, info.chunks.count);
      if (field == "microbatch_group_size") spec.microbatch_group_size = 4;
      if (field == "memory_limit") spec.memory_limit = 100;
      if (field == "order") spec.order.resize(4);
      if (field == "shape") spec.shape = PipelineShape::Interleaved;
      const std::optional<ScheduleViolation> violation = info.check(spec);
      const std::optional<std::string> refusal = planning_refusal(spec, builtin_schedules());
      const unsigned option = field == "microbatch_group_size" ? kMicrobatchGroupSize
                              : field == "memory_limit"        ? kMemoryLimit
                              : field == "order"               ? kProgramOrder
                                                               : kShape;
      const bool takes = (info.options & option) != 0;
      if (takes) continue;
      ASSERT_TRUE(violation.has_value()) << info.name << " " << field;
      EXPECT_EQ(*violation,
                (ScheduleViolation{std::string(field), fmt::format("does not take {}", field)}));
      EXPECT_EQ(refusal, std::optional<std::string>(field)) << info.name;
    }
  }
}

TEST(ScheduleShape, ComesFromTheRegistry) {
  const auto shape = [](const std::string& name, std::uint32_t chunks) {
    return schedule_shape(spec_of(name, 4, 8, chunks));
  };
  EXPECT_EQ(shape("1f1b", 1), PipelineShape::Linear);
  EXPECT_EQ(shape("interleaved-1f1b", 2), PipelineShape::Interleaved);
  EXPECT_EQ(shape("looped-bfs", 1), PipelineShape::Interleaved);
  EXPECT_EQ(shape("zbv", 2), PipelineShape::VShape);
  EXPECT_EQ(shape("dualpipev", 2), PipelineShape::VShape);
  EXPECT_EQ(shape("dualpipe", 2), PipelineShape::DualPipe);
  EXPECT_EQ(shape("custom", 1), PipelineShape::Linear);
  EXPECT_EQ(shape("custom", 3), PipelineShape::Interleaved);
  PipelineSpec custom = spec_of("custom", 4, 8, 2);
  custom.shape = PipelineShape::DualPipe;
  EXPECT_EQ(schedule_shape(custom), PipelineShape::DualPipe);
  // A name the registry does not hold: linear for 1 chunk, interleaved for more.
  EXPECT_EQ(shape("toy-v", 1), PipelineShape::Linear);
  EXPECT_EQ(shape("toy-v", 2), PipelineShape::Interleaved);
}

// A schedule a program registers gets its shape, its check and its listing from its
// ScheduleInfo, and plans and simulates through the registry.
TEST(RegisteredSchedule, GetsItsShapeCheckAndListing) {
  const ScheduleRegistry registry = registry_with_toy();
  const PipelineSpec spec = spec_of("toy-v", 3, 6, 2);
  EXPECT_EQ(schedule_shape(spec, registry), PipelineShape::VShape);
  EXPECT_EQ(registry.get("toy-v").chunks.fixed(), std::optional<std::uint32_t>(2));
  EXPECT_EQ(registry.get("toy-v").constraints, "chunks = 2; microbatches >= 2 x stages");
  EXPECT_EQ(registry.get("toy-v").check(spec_of("toy-v", 3, 5, 2)),
            (ScheduleViolation{"microbatches", "microbatches >= 2 x stages"}));
  // Planned and simulated: the V's 2 chunks on 3 devices, all forwards then all backwards.
  const PipelinePlan plan = plan_schedule(spec, CostTable(TaskCosts{1, 2, 0, 1.0, 0.0}), registry);
  EXPECT_EQ(plan.shape, PipelineShape::VShape);
  const EventGraph graph =
      build_schedule(spec, CostTable(TaskCosts{1000, 2000, 0, 1.0, 0.0}), registry);
  const simulator::SimulationResult result = simulator::simulate(graph);
  // The forwards end at (2m + 2p - 2) F: device p-1 ends chunk 0 at (m + p - 1) F, runs
  // chunk 1's m forwards, and the last climbs back over p - 1 devices. The fused backwards
  // take (2m + 2p - 2) BW likewise: (12 + 6 - 2) x 3000.
  EXPECT_EQ(result.metrics.makespan, (2 * 6 + 2 * 3 - 2) * (1000 + 2000));
  // Listed with its constraints, aligned with the built-in names.
  const std::string listing = schedule_listing(registry);
  const std::string toy =
      "toy-v             A toy V: GPipe folded into a V (registry tests)\n"
      "                  constraints: chunks = 2; microbatches >= 2 x stages\n";
  ASSERT_GE(listing.size(), toy.size());
  EXPECT_EQ(listing.substr(listing.size() - toy.size()), toy);
  EXPECT_EQ(listing.substr(0, schedule_listing().size()), schedule_listing());
}

TEST(RegisteredSchedule, InconsistentRegistrationsAreRefused) {
  ScheduleRegistry registry;
  ScheduleInfo info = toy_v_schedule();
  info.chunks = ChunkRule::at_least(2);
  EXPECT_THROW(registry.add(info), std::invalid_argument);  // a V takes exactly 2 chunks
  info = toy_v_schedule();
  info.plan = nullptr;
  EXPECT_THROW(registry.add(info), std::invalid_argument);
  info = toy_v_schedule();
  info.constraints = "chunks = 2";  // prose that differs from the rules
  try {
    registry.add(info);
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "schedule 'toy-v': constraints 'chunks = 2' differ from its rules' 'chunks = 2; "
              "microbatches >= 2 x stages' (leave them empty)");
  }
  info.constraints = "chunks = 2; microbatches >= 2 x stages";
  registry.add(info);
  EXPECT_EQ(registry.names(), std::vector<std::string>{"toy-v"});
}

TEST(ChunkRule, FixedCountsAndText) {
  EXPECT_EQ(ChunkRule::exactly(2).fixed(), std::optional<std::uint32_t>(2));
  EXPECT_EQ(ChunkRule::at_least(2).fixed(), std::nullopt);
  EXPECT_TRUE(ChunkRule::at_least(2).accepts(5));
  EXPECT_FALSE(ChunkRule::at_least(2).accepts(1));
  EXPECT_FALSE(ChunkRule::exactly(2).accepts(3));
  EXPECT_EQ(ChunkRule::exactly(1).text(), "chunks = 1");
  EXPECT_EQ(ChunkRule::at_least(2).text(), "chunks >= 2");
}

}  // namespace
}  // namespace perflow::parallel
