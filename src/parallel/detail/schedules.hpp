#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/pipeline.hpp"

namespace perflow::parallel::detail {

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

/// One device of DualPipe's eight-step program (dualpipe.cpp), shared with DualPipeV.
struct DualPipeDevice {
  std::uint32_t n;             ///< devices per direction's depth: p/2 (DualPipe), p (DualPipeV)
  std::uint32_t r;             ///< the device's rank from its near end
  std::uint32_t microbatches;  ///< per direction
  std::uint32_t near_chunk;
  std::uint32_t far_chunk;
  std::uint32_t near_first_microbatch;
  std::uint32_t far_first_microbatch;
};
/// Appends the device's program, and to `pairs` the positions of its overlapped pairs' F.
void append_dualpipe_program(const DualPipeDevice& device, std::vector<Step>& program,
                             std::vector<std::uint32_t>& pairs);

/// 1F1B (k = 1) and eager 1F1B (k = 2), one_f_one_b.cpp: device d runs min(k(p-d-1), m)
/// warm-up forwards, then forward/fused-backward pairs, then the remaining backwards.
PipelinePlan plan_1f1b_with_warmup(const PipelineSpec& spec, std::uint32_t k);

/// ZB-H1 (k = 1) and ZB-H2 (k = 2), zb_h1.cpp: device d runs min(k(p-d) - (k-1), m) warm-up
/// forwards, then for each microbatch i: B_i, the W of microbatch i - k*d, the next F.
PipelinePlan plan_zb_handcrafted(const PipelineSpec& spec, std::uint32_t k);

/// The controllable-memory V-shape construction shared by v-half and v-min (v_half.cpp):
/// `block[d]` holds device d's slots of F0, F1, B1 and B0 of microbatch 0.
PipelinePlan plan_v_building_block(const PipelineSpec& spec,
                                   const std::vector<std::array<std::int64_t, 4>>& block);

}  // namespace perflow::parallel::detail
