#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/pipeline.hpp"

namespace perflow::parallel::detail {

/// The most tasks a pipeline may have: 2^28 (about 40 GB of graph and trace).
inline constexpr std::uint64_t kMaxPipelineTasks = std::uint64_t{1} << 28;

/// Checks stages, microbatches >= 1 and the task-count limit, with any chunk count.
void require_basic_sizes(const PipelineSpec& spec);

/// Checks the sizes every schedule needs (stages, microbatches >= 1, at most
/// kMaxPipelineTasks tasks) and the chunk count this schedule accepts; throws ScheduleError
/// naming the field.
void require_sizes(const PipelineSpec& spec, std::uint32_t chunks_required);

/// An empty plan of the spec's sizes with one (empty) program per device.
PipelinePlan empty_plan(const PipelineSpec& spec, PipelineShape shape);

// One function per schedule, each in its own file under src/parallel/schedules/.
PipelinePlan plan_gpipe(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_1f1b(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_eager_1f1b(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_interleaved_1f1b(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_looped_bfs(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_zb_h1(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_zb_h2(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_zb_auto(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_zbv(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_zbv_auto(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_1f1b_v(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_v_half(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_v_min(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_dualpipe(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_dualpipev(const PipelineSpec& spec, const CostTable& costs);
PipelinePlan plan_custom(const PipelineSpec& spec, const CostTable& costs);

/// The controllable-memory V-shape construction shared by v-half and v-min (v_half.cpp):
/// `block[d]` holds device d's slots of F0, F1, B1 and B0 of microbatch 0.
PipelinePlan plan_v_building_block(const PipelineSpec& spec,
                                   const std::vector<std::array<std::int64_t, 4>>& block);

}  // namespace perflow::parallel::detail
