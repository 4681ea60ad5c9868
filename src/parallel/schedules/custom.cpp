// A program order given by the user, one list of task labels per device, as PyTorch
// pipelining's CSV schedules allow. build_pipeline_graph checks it: every task exactly
// once on the device that holds its chunk, and no deadlock (a CycleError names the tasks
// waiting on each other). chunks = 1 is a linear pipeline; chunks >= 2 uses interleaved
// positions (chunk c on device d is position c*p + d).
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
  PipelinePlan plan =
      empty_plan(spec, spec.chunks == 1 ? PipelineShape::Linear : PipelineShape::Interleaved);
  plan.programs = spec.order;
  return plan;
}

}  // namespace perflow::parallel::detail
