// Interleaved 1F1B over v virtual stages per device (Narayanan et al., "Efficient Large-Scale
// Language Model Training on GPU Clusters Using Megatron-LM", SC'21), in the program order of
// Megatron-LM's forward_backward_pipelining_with_interleaving
// (NVIDIA/Megatron-LM, megatron/core/pipeline_parallel/schedules.py):
//  - Visit order: microbatches are taken in groups of G (microbatch_group_size, default p); a
//    group runs its microbatches on chunk 0, then on chunk 1, ..., then on chunk v-1 before
//    the next group starts (the last group holds the m mod G left over, or G). Forward step
//    k of a device is entry k of that table; backward step k is entry k with its chunk
//    mirrored (v-1-c), so backwards walk the chunks from the last to the first.
//  - Device d runs min(2(p-d-1) + (v-1)G, m*v) warm-up forwards, then alternates the next
//    forward and the next fused backward, then drains the remaining backwards.
//  - Megatron refuses G outside [p, m] and a last group of fewer than p microbatches (0 < m
//    mod G < p), which would stall the pipeline; so do we.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "../detail/schedules.hpp"
#include "perflow/core/error.hpp"

namespace perflow::parallel::detail {

namespace {

void require_interleaved_sizes(const PipelineSpec& spec, std::uint32_t group) {
  const std::uint32_t p = spec.stages;
  const std::uint32_t m = spec.microbatches;
  if (spec.chunks < 2) {
    throw ScheduleError(
        fmt::format("{} needs at least 2 chunks per stage, got {}", spec.schedule, spec.chunks),
        "chunks");
  }
  require_basic_sizes(spec);
  const bool given = spec.microbatch_group_size != 0;
  if (given && group < p) {
    throw ScheduleError(fmt::format("{} needs microbatch_group_size >= stages ({}), got {}",
                                    spec.schedule, p, group),
                        "microbatch_group_size");
  }
  if (group > m) {
    if (!given) {
      throw ScheduleError(fmt::format("{} needs at least as many microbatches as stages ({}), "
                                      "got {}",
                                      spec.schedule, p, m),
                          "microbatches");
    }
    throw ScheduleError(fmt::format("{} needs microbatch_group_size <= microbatches ({}), got {}",
                                    spec.schedule, m, group),
                        "microbatch_group_size");
  }
  const std::uint32_t remainder = m % group;
  if (remainder == 0 || remainder >= p) return;
  if (!given) {
    throw ScheduleError(fmt::format("{} needs microbatches to be a multiple of stages ({}), the "
                                    "default microbatch_group_size, got {}",
                                    spec.schedule, p, m),
                        "microbatches");
  }
  throw ScheduleError(fmt::format("{} needs microbatches to be a multiple of "
                                  "microbatch_group_size ({}) or to leave a remainder of at "
                                  "least stages ({}), got {} (remainder {})",
                                  spec.schedule, group, p, m, remainder),
                      "microbatches");
}

}  // namespace

PipelinePlan plan_interleaved_1f1b(const PipelineSpec& spec, const CostTable& /*costs*/) {
  const std::uint32_t p = spec.stages;
  const std::uint32_t m = spec.microbatches;
  const std::uint32_t v = spec.chunks;
  const std::uint32_t group = spec.microbatch_group_size != 0 ? spec.microbatch_group_size : p;
  require_interleaved_sizes(spec, group);

  // The visit table, shared by every device: entry k is (microbatch, chunk) of step k.
  const std::size_t total = std::size_t{m} * v;
  std::vector<Step> table;
  table.reserve(total);
  for (std::uint32_t first = 0; first < m; first += group) {
    const std::uint32_t last = std::min(m, first + group);  // one past the group's end
    for (std::uint32_t c = 0; c < v; ++c) {
      for (std::uint32_t mb = first; mb < last; ++mb) table.push_back({TaskKind::F, mb, c});
    }
  }
  const auto forward = [&](std::size_t k) { return table[k]; };
  const auto backward = [&](std::size_t k) {
    return Step{TaskKind::BW, table[k].microbatch, v - 1 - table[k].chunk};
  };

  PipelinePlan plan = empty_plan(spec, PipelineShape::Interleaved);
  for (std::uint32_t d = 0; d < p; ++d) {
    auto& program = plan.programs[d];
    program.reserve(total * 2);
    const std::size_t warmup =
        std::min<std::size_t>(std::size_t{p - d - 1} * 2 + std::size_t{v - 1} * group, total);
    for (std::size_t k = 0; k < warmup; ++k) program.push_back(forward(k));
    for (std::size_t k = 0; k + warmup < total; ++k) {
      program.push_back(forward(k + warmup));
      program.push_back(backward(k));
    }
    for (std::size_t k = total - warmup; k < total; ++k) program.push_back(backward(k));
  }
  return plan;
}

}  // namespace perflow::parallel::detail
