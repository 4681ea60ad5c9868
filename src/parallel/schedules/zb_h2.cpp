// ZB-H2 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 3.1; reference
// runtime: github.com/sail-sg/zero-bubble-pipeline-parallelism). Like ZB-H1 with B and W
// split, but device d runs min(2(p-d)-1, m) warm-up forwards, enough to keep it busy until
// the first gradient comes back, and defers the W of its first 2d microbatches to the end:
// for each microbatch i it runs B_i, the W of microbatch i-2d and the next forward. Peak
// activation memory is min(2p-1, m) on every device, about twice 1F1B's.
//
// With uniform costs, free communication, W <= F, 2W <= F+B and m >= 2p-1 the span bubble
// is (p-1-d)(F+B-2W) on device d (the paper's (p-1)(F+B-2W) on device 0); at F=B=W it is 0
// once m >= 2p-1. The reference runtime has no handcrafted ZB-H2 (it reaches it through its
// automatic scheduler at twice 1F1B's memory, which accepts any m), so fewer microbatches
// are not refused: the warm-up is cut to m forwards and some bubble remains.
#include <algorithm>

#include "../detail/schedules.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_zb_h2(const PipelineSpec& spec, const CostTable& /*costs*/) {
  require_sizes(spec, 1);
  PipelinePlan plan = empty_plan(spec, PipelineShape::Linear);
  const std::uint32_t p = spec.stages;
  const std::uint32_t m = spec.microbatches;
  for (std::uint32_t d = 0; d < p; ++d) {
    auto& program = plan.programs[d];
    program.reserve(std::size_t{m} * 3);
    const std::uint32_t warmup = std::min(2 * (p - d) - 1, m);
    const std::uint32_t w_lag = 2 * d;  // W_{i-2d} follows B_i
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

}  // namespace perflow::parallel::detail
