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
// sequence (this model has no intra-device overlap). The reference needs m >= 2p. The
// steps are DualPipe's (append_dualpipe_program in dualpipe.cpp) with n = p and r = d.
#include <cstddef>

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
  plan.overlapped_pairs.resize(p);
  for (std::uint32_t d = 0; d < p; ++d) {
    plan.programs[d].reserve(std::size_t{m} * 4);
    append_dualpipe_program({.n = p,
                             .r = d,
                             .microbatches = m,
                             .near_chunk = 0,
                             .far_chunk = 1,
                             .near_first_microbatch = 0,
                             .far_first_microbatch = 0},
                            plan.programs[d], plan.overlapped_pairs[d]);
  }
  return plan;
}

}  // namespace perflow::parallel::detail
