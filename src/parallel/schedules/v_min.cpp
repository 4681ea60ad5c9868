// V-Min (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS 2024, arXiv
// 2405.15362; block as in github.com/sail-sg/zero-bubble-pipeline-parallelism,
// zerobubble/scheduler/zbv_greedy.py): the V-shape building block with about a third of
// 1F1B's activation memory. Forwards and backwards each walk the V one slot per device: F0 of
// microbatch 0 at slot d on device d, F1 at 2p-1-d, B1 at 2p+d and B0 at 4p-1-d (both two
// slots later when 3 divides p). The construction (W's into free slots, the squeeze) is
// shared with V-Half: see v_half.cpp.
#include <array>
#include <cstdint>
#include <vector>

#include "../detail/schedules.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_v_min(const PipelineSpec& spec, const CostTable& /*costs*/) {
  require_sizes(spec, 2);
  const std::int64_t n = spec.stages;
  const std::int64_t gap = n % 3 == 0 ? 2 : 0;
  std::vector<std::array<std::int64_t, 4>> block(spec.stages);
  for (std::int64_t i = 0; i < n; ++i) {
    block[static_cast<std::size_t>(i)] = {i, 2 * n - i - 1, 2 * n + gap + i, 4 * n + gap - i - 1};
  }
  return plan_v_building_block(spec, block);
}

}  // namespace perflow::parallel::detail
