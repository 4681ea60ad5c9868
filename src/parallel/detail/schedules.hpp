#pragma once

#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/pipeline.hpp"

namespace perflow::parallel::detail {

/// Checks the sizes every schedule needs (stages, microbatches >= 1) and the chunk count
/// this schedule accepts; throws ScheduleError naming the field.
void require_sizes(const PipelineSpec& spec, std::uint32_t chunks_required);

/// An empty plan of the spec's sizes with one (empty) program per device.
PipelinePlan empty_plan(const PipelineSpec& spec, PipelineShape shape);

PipelinePlan plan_gpipe(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_1f1b(const PipelineSpec& spec, const CostTable& costs);

}  // namespace perflow::parallel::detail
