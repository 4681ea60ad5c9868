// ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, arXiv 2401.10241 section 6),
// the handcrafted V-shape schedule, in the program order of PyTorch's ScheduleZBVZeroBubble
// (torch.distributed.pipelining). Each device owns two chunks: chunk 0 runs down devices
// 0..p-1, chunk 1 back up p-1..0, and the backward is split into B and W.
//
// Device d (counting microbatches per chunk):
//   warm-up:  2(p-d)-1 forwards of chunk 0; then d pairs (F chunk 1, F chunk 0); then p-d
//             triples (F, B, W) of chunk 1;
//   steady:   until both chunks have run every forward: (F chunk 0 if any is left, B and W
//             chunk 0), then (F, B, W) chunk 1;
//   cool-down: d pairs (B chunk 0, B chunk 1), then p-d pairs (B chunk 0, the oldest
//             deferred W of chunk 0), then the deferred W's of chunk 1, then those of chunk 0.
// The reference builds this order for max(m, 2p-1) microbatches and drops the steps of the
// padding microbatches, so every m >= 1 is accepted (the result stays deadlock-free).
//
// With F = B = W and no latency the span bubble is zero on every device once m >= 2p-1 (one
// microbatch earlier than the paper's m >= 2p), the makespan is (6m + p - 1)F and every device
// peaks at 2p activations; below that device d peaks at min(2m, m+d+1, 2p) (zbv_test.cpp).
#include <algorithm>

#include "../detail/schedules.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_zbv(const PipelineSpec& spec, const CostTable& /*costs*/) {
  require_sizes(spec, 2);
  PipelinePlan plan = empty_plan(spec, PipelineShape::VShape);
  const std::uint32_t p = spec.stages;
  const std::uint32_t m = spec.microbatches;
  const std::uint32_t padded = std::max(m, 2 * p - 1);  // the reference's microbatch count
  for (std::uint32_t d = 0; d < p; ++d) {
    auto& program = plan.programs[d];
    program.reserve(std::size_t{m} * 6);
    // Next microbatch per (kind, chunk); W's trail their B's.
    std::uint32_t f[2] = {0, 0};
    std::uint32_t b[2] = {0, 0};
    std::uint32_t w[2] = {0, 0};
    const auto emit = [&](TaskKind kind, std::uint32_t chunk, std::uint32_t& next) {
      if (next < m) program.push_back({kind, next, chunk});  // padding steps are dropped
      ++next;
    };
    const auto forward = [&](std::uint32_t c) { emit(TaskKind::F, c, f[c]); };
    const auto input_grad = [&](std::uint32_t c) { emit(TaskKind::B, c, b[c]); };
    const auto weight_grad = [&](std::uint32_t c) { emit(TaskKind::W, c, w[c]); };

    for (std::uint32_t i = 0; i < 2 * (p - d) - 1; ++i) forward(0);
    for (std::uint32_t i = 0; i < d; ++i) {
      forward(1);
      forward(0);
    }
    for (std::uint32_t i = 0; i < p - d; ++i) {
      forward(1);
      input_grad(1);
      weight_grad(1);
    }
    while (f[1] < f[0] || f[0] < padded) {
      if (f[0] < padded) forward(0);
      input_grad(0);
      weight_grad(0);
      forward(1);
      input_grad(1);
      weight_grad(1);
    }
    for (std::uint32_t i = 0; i < d; ++i) {
      input_grad(0);
      input_grad(1);
    }
    for (std::uint32_t i = 0; i < p - d; ++i) {
      input_grad(0);
      weight_grad(0);
    }
    while (w[1] < b[1]) weight_grad(1);
    while (w[0] < b[0]) weight_grad(0);
  }
  return plan;
}

}  // namespace perflow::parallel::detail
