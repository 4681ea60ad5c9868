// 1F1B, a.k.a. PipeDream-Flush (Narayanan et al., "Memory-Efficient Pipeline-Parallel DNN
// Training", ICML 2021), in the program order of Megatron-LM's non-interleaved schedule
// (forward_backward_pipelining_without_interleaving): device d runs min(p-d-1, m) warm-up
// forwards, then alternates one forward and one fused backward, then drains the remaining
// backwards. Device d holds at most min(p-d, m) activations.
#include <algorithm>

#include "../detail/schedules.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_1f1b_with_warmup(const PipelineSpec& spec, std::uint32_t k) {
  require_sizes(spec, 1);
  PipelinePlan plan = empty_plan(spec, PipelineShape::Linear);
  const std::uint32_t p = spec.stages;
  const std::uint32_t m = spec.microbatches;
  for (std::uint32_t d = 0; d < p; ++d) {
    auto& program = plan.programs[d];
    program.reserve(std::size_t{m} * 2);
    const std::uint32_t warmup = std::min(k * (p - d - 1), m);
    const std::uint32_t steady = m - warmup;
    for (std::uint32_t mb = 0; mb < warmup; ++mb) program.push_back({TaskKind::F, mb, 0});
    for (std::uint32_t i = 0; i < steady; ++i) {
      program.push_back({TaskKind::F, warmup + i, 0});
      program.push_back({TaskKind::BW, i, 0});
    }
    for (std::uint32_t mb = steady; mb < m; ++mb) program.push_back({TaskKind::BW, mb, 0});
  }
  return plan;
}

PipelinePlan plan_1f1b(const PipelineSpec& spec, const CostTable& /*costs*/) {
  return plan_1f1b_with_warmup(spec, 1);
}

}  // namespace perflow::parallel::detail
