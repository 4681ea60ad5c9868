// DualPipeV: DualPipe (DeepSeek-V3 Technical Report, arXiv:2412.19437) "cut in half", as
// published with the reference runtime (github.com/deepseek-ai/DualPipe,
// dualpipe/dualpipev.py, DualPipeV.step), in that runtime's program order. Every microbatch
// runs chunk 0 down devices 0..p-1 and chunk 1 back up p-1..0 (the V shape), so each device
// plays the role of a DualPipe device whose "near" direction is chunk 0 and "far" direction
// chunk 1, with p in place of p/2 and all m microbatches in each direction. Device d runs:
//   1. 2(p-d-1) chunk-0 forwards;
//   2. d+1 times: a chunk-0 forward, a chunk-1 forward;
//   3. p-d-1 times: a chunk-1 B (weight gradient deferred), that W, a chunk-1 forward;
//   4. m-2p+d+1 times: chunk-0 F + chunk-1 BW, then chunk-1 F + chunk-0 BW (overlapped pairs);
//   5. p-d-1 times: a chunk-1 BW, then chunk-1 F + chunk-0 BW;
//   6. d+1 times: a chunk-1 backward, a chunk-0 backward; from the middle pair on (at the
//      chunk-1 backward for odd d, at the chunk-0 one for even d) weight gradients are
//      deferred;
//   7. p-d-1 times: the oldest deferred W, a chunk-0 B (deferred);
//   8. d+1 deferred W.
// A backward whose weight gradient is deferred is a B whose W runs later (first in, first
// out); every other backward is a fused BW. An overlapped pair is its F and its BW in
// sequence (this model has no intra-device overlap). The reference needs m >= 2p.
#include <cstddef>
#include <vector>

#include <fmt/format.h>

#include "../detail/schedules.hpp"
#include "perflow/core/error.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_dualpipev(const PipelineSpec& spec, const CostTable& /*costs*/) {
  require_sizes(spec, 2);
  const std::uint32_t p = spec.stages;
  const std::uint32_t m = spec.microbatches;
  if (std::uint64_t{m} < std::uint64_t{2} * p) {
    throw ScheduleError(fmt::format("{} needs at least 2 x stages = {} microbatches, got {}",
                                    spec.schedule, std::uint64_t{2} * p, m),
                        "microbatches");
  }
  PipelinePlan plan = empty_plan(spec, PipelineShape::VShape);
  for (std::uint32_t d = 0; d < p; ++d) {
    auto& program = plan.programs[d];
    program.reserve(std::size_t{m} * 4);
    std::uint32_t next_f[2] = {0, 0};  // per chunk: the next microbatch forward / backward
    std::uint32_t next_b[2] = {0, 0};
    std::vector<Step> deferred;  // W steps waiting, oldest first from deferred_head
    std::size_t deferred_head = 0;
    const auto forward = [&](std::uint32_t c) { program.push_back({TaskKind::F, next_f[c]++, c}); };
    const auto backward = [&](std::uint32_t c, bool defer_w) {
      const std::uint32_t mb = next_b[c]++;
      if (defer_w) {
        program.push_back({TaskKind::B, mb, c});
        deferred.push_back({TaskKind::W, mb, c});
      } else {
        program.push_back({TaskKind::BW, mb, c});
      }
    };
    const auto weight = [&] { program.push_back(deferred[deferred_head++]); };

    const std::uint32_t edge = p - d - 1;  // steps 3, 5 and 7; step 1 is twice as long
    for (std::uint32_t i = 0; i < 2 * edge; ++i) forward(0);
    for (std::uint32_t i = 0; i < d + 1; ++i) {
      forward(0);
      forward(1);
    }
    for (std::uint32_t i = 0; i < edge; ++i) {
      backward(1, true);
      weight();
      forward(1);
    }
    for (std::uint32_t i = 0; i < m - 2 * p + d + 1; ++i) {
      forward(0);
      backward(1, false);
      forward(1);
      backward(0, false);
    }
    for (std::uint32_t i = 0; i < edge; ++i) {
      backward(1, false);
      forward(1);
      backward(0, false);
    }
    bool defer = false;
    for (std::uint32_t i = 0; i < d + 1; ++i) {
      if (i == (d + 1) / 2 && d % 2 == 1) defer = true;
      backward(1, defer);
      if (i == (d + 1) / 2 && d % 2 == 0) defer = true;
      backward(0, defer);
    }
    for (std::uint32_t i = 0; i < edge; ++i) {
      weight();
      backward(0, true);
    }
    while (deferred_head < deferred.size()) weight();
  }
  return plan;
}

}  // namespace perflow::parallel::detail
