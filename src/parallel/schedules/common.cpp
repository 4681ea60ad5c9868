#include <fmt/format.h>

#include "../detail/schedules.hpp"
#include "perflow/core/error.hpp"

namespace perflow::parallel {

void check_task_limit(const PipelineSpec& spec) {
  // Tasks ids are 31-bit; far below that, memory runs out (~150 bytes per task).
  const std::uint64_t tasks = std::uint64_t{spec.stages} * spec.microbatches * spec.chunks * 3;
  if (tasks > kMaxPipelineTasks) {
    throw ScheduleError(
        fmt::format("{} stages x {} microbatches x {} chunks would need up to {} tasks; the limit "
                    "is {}",
                    spec.stages, spec.microbatches, spec.chunks, tasks, kMaxPipelineTasks),
        "microbatches");
  }
}

}  // namespace perflow::parallel

namespace perflow::parallel::detail {

void require_basic_sizes(const PipelineSpec& spec) {
  if (spec.stages < 1) {
    throw ScheduleError(
        fmt::format("{} needs at least 1 stage, got {}", spec.schedule, spec.stages), "stages");
  }
  if (spec.microbatches < 1) {
    throw ScheduleError(
        fmt::format("{} needs at least 1 microbatch, got {}", spec.schedule, spec.microbatches),
        "microbatches");
  }
  if (spec.chunks < 1) {
    throw ScheduleError(
        fmt::format("{} needs at least 1 chunk, got {}", spec.schedule, spec.chunks), "chunks");
  }
  check_task_limit(spec);
}

void require_sizes(const PipelineSpec& spec, std::uint32_t chunks_required) {
  require_basic_sizes(spec);
  if (spec.chunks != chunks_required) {
    throw ScheduleError(fmt::format("{} needs exactly {} chunk{} per stage, got {}", spec.schedule,
                                    chunks_required, chunks_required == 1 ? "" : "s", spec.chunks),
                        "chunks");
  }
}

PipelinePlan empty_plan(const PipelineSpec& spec, PipelineShape shape) {
  PipelinePlan plan;
  plan.shape = shape;
  plan.stages = spec.stages;
  plan.microbatches = spec.microbatches;
  plan.chunks = spec.chunks;
  plan.programs.resize(spec.stages);
  return plan;
}

}  // namespace perflow::parallel::detail
