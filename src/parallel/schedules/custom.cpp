// A program order given by the user, one list of task labels per device, as PyTorch
// pipelining's CSV schedules allow. build_pipeline_graph checks it: every task exactly
// once on the device that holds its chunk, and no deadlock (a CycleError names the tasks
// waiting on each other). The shape (PipelineSpec::shape) places the chunks: by default
// chunks = 1 is a linear pipeline and chunks >= 2 interleaved (chunk c on device d is
// position c*p + d); "v" and "dualpipe" take 2 chunks, to write V-shape or DualPipe orders.
#include <fmt/format.h>

#include "../detail/schedules.hpp"
#include "perflow/core/error.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_custom(const PipelineSpec& spec, const CostTable& /*costs*/) {
  require_basic_sizes(spec);
  if (spec.order.size() != spec.stages) {
    throw ScheduleError(fmt::format("custom needs one program per stage: {} stages, {} programs",
                                    spec.stages, spec.order.size()),
                        "order");
  }
  const PipelineShape shape =
      spec.shape.value_or(spec.chunks == 1 ? PipelineShape::Linear : PipelineShape::Interleaved);
  const bool two_chunks = shape == PipelineShape::VShape || shape == PipelineShape::DualPipe;
  if ((shape == PipelineShape::Linear && spec.chunks != 1) || (two_chunks && spec.chunks != 2) ||
      (shape == PipelineShape::Interleaved && spec.chunks < 2)) {
    throw ScheduleError(fmt::format("custom: shape {} needs {} chunks, got {}", to_string(shape),
                                    shape == PipelineShape::Linear        ? "exactly 1"
                                    : shape == PipelineShape::Interleaved ? "at least 2"
                                                                          : "exactly 2",
                                    spec.chunks),
                        "shape");
  }
  if (shape == PipelineShape::DualPipe && spec.microbatches % 2 != 0) {
    throw ScheduleError(
        fmt::format("custom: shape dualpipe needs an even number of microbatches, got {}",
                    spec.microbatches),
        "microbatches");
  }
  PipelinePlan plan = empty_plan(spec, shape);
  plan.programs = spec.order;
  return plan;
}

}  // namespace perflow::parallel::detail
