// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 3.1; reference
// runtime: github.com/sail-sg/zero-bubble-pipeline-parallelism). The backward is split into
// B (input gradient, on the critical path) and W (weight gradient, free to move). Device d
// runs min(p-d, m) warm-up forwards, then for each microbatch i a B_i, the W of microbatch
// i-d (device d defers its first d weight gradients, which fill the 1F1B cool-down bubble)
// and the next forward, and finally the deferred W's. Memory stays that of 1F1B: device d
// holds at most min(p-d, m) activations.
//
// With uniform costs and free communication the per-device span bubble is (p-1-d)(F+B-W)
// when W <= F (the paper's (p-1)(F+B-W) on device 0). When W > F the paper's formula no
// longer holds: the simulated span bubble is (p-1-d)*max(F+B-W, B) -- for example F=B=1,
// W=2 gives 5 on device 0 of p=6, not (p-1)(F+B-W) = 0 (zero_bubble_test.cpp pins it).
#include <algorithm>

#include "../detail/schedules.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_zb_handcrafted(const PipelineSpec& spec, std::uint32_t k) {
  require_sizes(spec, 1);
  PipelinePlan plan = empty_plan(spec, PipelineShape::Linear);
  const std::uint32_t p = spec.stages;
  const std::uint32_t m = spec.microbatches;
  for (std::uint32_t d = 0; d < p; ++d) {
    auto& program = plan.programs[d];
    program.reserve(std::size_t{m} * 3);
    const std::uint32_t warmup = std::min(k * (p - d) - (k - 1), m);
    const std::uint32_t w_lag = k * d;  // W_{i-kd} follows B_i
    for (std::uint32_t mb = 0; mb < warmup; ++mb) program.push_back({TaskKind::F, mb, 0});
    for (std::uint32_t i = 0; i < m; ++i) {
      program.push_back({TaskKind::B, i, 0});
      if (i >= w_lag) program.push_back({TaskKind::W, i - w_lag, 0});
      if (i + warmup < m) program.push_back({TaskKind::F, i + warmup, 0});
    }
    for (std::uint32_t mb = m > w_lag ? m - w_lag : 0; mb < m; ++mb) {
      program.push_back({TaskKind::W, mb, 0});
    }
  }
  return plan;
}

PipelinePlan plan_zb_h1(const PipelineSpec& spec, const CostTable& /*costs*/) {
  return plan_zb_handcrafted(spec, 1);
}

}  // namespace perflow::parallel::detail
