// DualPipe (DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, section 3.2.1),
// in the program order of the reference runtime (github.com/deepseek-ai/DualPipe,
// dualpipe/dualpipe.py, DualPipe.step). Two pipelines run in opposite directions over the
// same p devices: microbatches 0..m/2-1 enter at device 0 (chunk 0), m/2..m-1 at device p-1
// (chunk 1). Device d and its mirror p-1-d run the same program with the two directions
// swapped: a device's "near" direction is the one that enters on its side of the pipeline
// (chunk 0 for d < p/2, chunk 1 otherwise), the other one is "far". With n = p/2,
// r = min(d, p-1-d) and h = m/2 microbatches per direction, the reference runs eight steps:
//   1. 2(n-r-1) near forwards;
//   2. r+1 times: a near forward, a far forward;
//   3. n-r-1 times: a far B (weight gradient deferred), that W, a far forward;
//   4. h-p+r+1 times: near F + far BW, then far F + near BW (the overlapped pairs);
//   5. n-r-1 times: a far BW, then far F + near BW;
//   6. r+1 times: a far backward, a near backward; from the middle pair on (at the far
//      backward for odd r, at the near one for even r) weight gradients are deferred;
//   7. n-r-1 times: the oldest deferred W, a near B (deferred);
//   8. r+1 deferred W.
// A backward whose weight gradient is deferred is a B whose W runs later (first in, first
// out); every other backward is a fused BW. The plan marks the overlapped pairs (steps 4 and
// 5, but for the first pair of step 4 on the middle ranks, as the reference runs it); this
// model runs a pair's F and BW in sequence (no intra-device overlap yet). The reference needs p
// even, m even and m >= 2p (at least p microbatches per direction).
#include <cstddef>
#include <vector>

#include <fmt/format.h>

#include "../detail/schedules.hpp"
#include "perflow/core/error.hpp"

namespace perflow::parallel::detail {

void append_dualpipe_program(const DualPipeDevice& device, std::vector<Step>& program,
                             std::vector<std::uint32_t>& pairs) {
  const std::uint32_t n = device.n;
  const std::uint32_t r = device.r;
  // Per direction (0 = near, 1 = far): the next microbatch to run forward / backward.
  const std::uint32_t chunk_of[2] = {device.near_chunk, device.far_chunk};
  const std::uint32_t first_of[2] = {device.near_first_microbatch, device.far_first_microbatch};
  std::uint32_t next_f[2] = {0, 0};
  std::uint32_t next_b[2] = {0, 0};
  std::vector<Step> deferred;  // W steps waiting, oldest first from deferred_head
  std::size_t deferred_head = 0;
  const auto forward = [&](std::size_t dir) {
    program.push_back({TaskKind::F, first_of[dir] + next_f[dir]++, chunk_of[dir]});
  };
  const auto backward = [&](std::size_t dir, bool defer_w) {
    const std::uint32_t mb = first_of[dir] + next_b[dir]++;
    if (defer_w) {
      program.push_back({TaskKind::B, mb, chunk_of[dir]});
      deferred.push_back({TaskKind::W, mb, chunk_of[dir]});
    } else {
      program.push_back({TaskKind::BW, mb, chunk_of[dir]});
    }
  };
  const auto weight = [&] { program.push_back(deferred[deferred_head++]); };
  // The next step is the F of an overlapped pair (the reference's _forward_backward_chunk).
  const auto pair = [&] { pairs.push_back(static_cast<std::uint32_t>(program.size())); };

  const std::uint32_t edge = n - r - 1;  // steps 3, 5 and 7; step 1 is twice as long
  for (std::uint32_t i = 0; i < 2 * edge; ++i) forward(0);
  for (std::uint32_t i = 0; i < r + 1; ++i) {
    forward(0);
    forward(1);
  }
  for (std::uint32_t i = 0; i < edge; ++i) {
    backward(1, true);
    weight();
    forward(1);
  }
  for (std::uint32_t i = 0; i < device.microbatches - 2 * n + r + 1; ++i) {
    // The reference runs the first of these in sequence on the middle ranks (r = n - 1), to
    // shrink the bubble.
    if (i > 0 || r + 1 != n) pair();
    forward(0);
    backward(1, false);
    pair();
    forward(1);
    backward(0, false);
  }
  for (std::uint32_t i = 0; i < edge; ++i) {
    backward(1, false);
    pair();
    forward(1);
    backward(0, false);
  }
  bool defer = false;
  for (std::uint32_t i = 0; i < r + 1; ++i) {
    if (i == (r + 1) / 2 && r % 2 == 1) defer = true;
    backward(1, defer);
    if (i == (r + 1) / 2 && r % 2 == 0) defer = true;
    backward(0, defer);
  }
  for (std::uint32_t i = 0; i < edge; ++i) {
    weight();
    backward(0, true);
  }
  while (deferred_head < deferred.size()) weight();
}

PipelinePlan plan_dualpipe(const PipelineSpec& spec, const CostTable& /*costs*/) {
  require_sizes(spec, 2);
  const std::uint32_t p = spec.stages;
  const std::uint32_t m = spec.microbatches;
  if (p % 2 != 0) {
    throw ScheduleError(fmt::format("{} needs an even number of stages, got {}", spec.schedule, p),
                        "stages");
  }
  if (m % 2 != 0) {
    throw ScheduleError(
        fmt::format("{} needs an even number of microbatches (half run each way), got {}",
                    spec.schedule, m),
        "microbatches");
  }
  if (std::uint64_t{m} < std::uint64_t{2} * p) {
    throw ScheduleError(fmt::format("{} needs at least 2 x stages = {} microbatches, got {}",
                                    spec.schedule, std::uint64_t{2} * p, m),
                        "microbatches");
  }
  PipelinePlan plan = empty_plan(spec, PipelineShape::DualPipe);
  plan.overlapped_pairs.resize(p);
  const std::uint32_t n = p / 2;
  const std::uint32_t h = m / 2;
  for (std::uint32_t d = 0; d < p; ++d) {
    const bool second_half = d >= n;
    const std::uint32_t near = second_half ? 1 : 0;
    plan.programs[d].reserve(std::size_t{m} * 2);
    append_dualpipe_program({.n = n,
                             .r = second_half ? p - 1 - d : d,
                             .microbatches = h,
                             .near_chunk = near,
                             .far_chunk = 1 - near,
                             .near_first_microbatch = near * h,
                             .far_first_microbatch = (1 - near) * h},
                            plan.programs[d], plan.overlapped_pairs[d]);
  }
  return plan;
}

}  // namespace perflow::parallel::detail
