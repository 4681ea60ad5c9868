#pragma once

// A schedule that a program registers itself, for the registry tests: "toy-v", GPipe folded
// into a V. Every device runs the forwards of chunk 0 for all microbatches, then those of
// chunk 1, then the fused backwards of chunk 1, then those of chunk 0. It takes 2 chunks and
// at least 2 x stages microbatches (a made-up rule, for the tests to find it applied).

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::testing {

inline parallel::PipelinePlan plan_toy_v(const parallel::PipelineSpec& spec,
                                         const parallel::CostTable& /*costs*/) {
  // The planner checks its sizes itself, naming the field, as the built-in planners do.
  if (spec.stages < 1) throw ScheduleError("toy-v needs at least 1 stage", "stages");
  if (spec.microbatches < 1)
    throw ScheduleError("toy-v needs at least 1 microbatch", "microbatches");
  if (spec.chunks != 2) {
    throw ScheduleError(fmt::format("toy-v needs exactly 2 chunks, got {}", spec.chunks), "chunks");
  }
  parallel::check_task_limit(spec);
  if (spec.microbatches < 2 * spec.stages) {
    throw ScheduleError(
        fmt::format("toy-v needs at least 2 x stages microbatches, got {}", spec.microbatches),
        "microbatches");
  }
  parallel::PipelinePlan plan;
  plan.shape = parallel::PipelineShape::VShape;
  plan.stages = spec.stages;
  plan.microbatches = spec.microbatches;
  plan.chunks = 2;
  plan.programs.resize(spec.stages);
  for (auto& program : plan.programs) {
    for (const std::uint32_t chunk : {0u, 1u}) {
      for (std::uint32_t i = 0; i < spec.microbatches; ++i)
        program.push_back({TaskKind::F, i, chunk});
    }
    for (const std::uint32_t chunk : {1u, 0u}) {
      for (std::uint32_t i = 0; i < spec.microbatches; ++i) {
        program.push_back({TaskKind::BW, i, chunk});
      }
    }
  }
  return plan;
}

inline parallel::ScheduleInfo toy_v_schedule() {
  using parallel::ScheduleConstraint;
  return {.name = "toy-v",
          .description = "A toy V: GPipe folded into a V (registry tests)",
          .shape = parallel::ShapeRule::VShape,
          .chunks = parallel::ChunkRule::exactly(2),
          .rules = {ScheduleConstraint::checked(
              "microbatches >= 2 x stages",
              [](const parallel::PipelineSpec& spec) -> std::string_view {
                return spec.microbatches < 2 * spec.stages ? "microbatches" : "";
              })},
          .plan = &plan_toy_v};
}

/// The built-in schedules and toy-v.
inline parallel::ScheduleRegistry registry_with_toy() {
  parallel::ScheduleRegistry registry;
  parallel::register_builtin_schedules(registry);
  registry.add(toy_v_schedule());
  return registry;
}

}  // namespace perflow::testing
