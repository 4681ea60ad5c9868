#pragma once

#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/pipeline.hpp"

namespace perflow::parallel::detail {

/// The most tasks a pipeline may have: 2^28 (about 40 GB of graph and trace).
inline constexpr std::uint64_t kMaxPipelineTasks = std::uint64_t{1} << 28;

/// Checks the sizes every schedule needs (stages, microbatches >= 1, at most
/// kMaxPipelineTasks tasks) and the chunk count this schedule accepts; throws ScheduleError
/// naming the field.
void require_sizes(const PipelineSpec& spec, std::uint32_t chunks_required);

/// An empty plan of the spec's sizes with one (empty) program per device.
PipelinePlan empty_plan(const PipelineSpec& spec, PipelineShape shape);

PipelinePlan plan_gpipe(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_1f1b(const PipelineSpec& spec, const CostTable& costs);

}  // namespace perflow::parallel::detail
