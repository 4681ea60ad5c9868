// V-Half and V-Min (Qi et al., "Pipeline Parallelism with Controllable Memory", NeurIPS
// 2024, arXiv 2405.15362): V-shape schedules built by repeating one building block, with
// about 1/2 and 1/3 of 1F1B's activation memory. The block and the squeeze that follows
// restate the reference generator (github.com/sail-sg/zero-bubble-pipeline-parallelism,
// zerobubble/scheduler/zbv_greedy.py); this file holds the construction shared by both,
// v_min.cpp only names its block.
//
// Time runs in unit slots (every F, B and W counts as one slot). Six task types per device:
// F0/F1 (forward of chunk 0 down the V / chunk 1 back up), B1/B0 (input gradient of chunk 1,
// which starts on device 0, then of chunk 0), and the weight gradients W1/W0.
//  1. The building block gives each device the slot of its F0, F1, B1 and B0 of microbatch
//     0; microbatch i runs 6i slots later (the block repeats every 6 slots).
//  2. W's fill the free slots after their backwards, oldest first (W1 before W0 when both
//     wait).
//  3. Squeeze, twice. A sweep in slot order (device by device within a slot) pulls each task
//     to the earliest free slot after its dependences where the device's activation peak does
//     not grow: first in the warm-up (until device 0 starts B0) and the cool-down (after
//     device 0's last F0) with the W's placed explicitly, then in the cool-down alone with
//     W's implicit in free slots. After each sweep the tasks are re-timed by running the
//     slot order eagerly with unit costs.
//  4. W's are put back into the free slots, W1 and W0 each in order, and each device runs its
//     tasks in slot order.
// The squeeze never raises the block's peak, which the steady state reaches once m >= p
// (simulated): 2*floor(p/2) + 2 chunk activations for V-Half and 2*floor((p+1)/3) + 2 for
// V-Min, i.e. floor(p/2) + 1 and floor((p+1)/3) + 1 full-stage activations against 1F1B's p.
// memory_limit (0: the schedule's own peak) may be anything at or above the peak; below it
// the schedule refuses. Every p >= 1 and m >= 1 is accepted.
//
// Steps 2-4 live in v_slots.cpp and v_squeeze.cpp. They keep each device's tasks rather than
// the reference's (slot, device) table, whose size grows with stages squared (each device's
// tasks spread over about 6(p + m) slots), and give the same slots: each step is O(tasks +
// slots), plus the squeeze's searches, which stay short (at 1M tasks, fewer steps than tasks).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "../detail/schedules.hpp"
#include "../detail/v_slots.hpp"
#include "perflow/core/error.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_v_building_block(const PipelineSpec& spec,
                                   const std::vector<std::array<std::int64_t, 4>>& block) {
  PipelinePlan plan = empty_plan(spec, PipelineShape::VShape);
  const std::uint32_t p = spec.stages;
  const std::uint32_t m = spec.microbatches;

  // 1. The block, repeated every 6 slots.
  SlotTable slots(p, m);
  for (std::uint32_t d = 0; d < p; ++d) {
    for (std::uint8_t t = 0; t < 4; ++t) {
      for (std::uint32_t i = 0; i < m; ++i) {
        slots.at(d, t, i) = static_cast<Slot>(block[d][t] + std::int64_t{6} * i);
      }
    }
  }
  // 2-3. W's in the free slots, squeeze with them, re-time; squeeze the cool-down without
  // them, re-time.
  {
    SlotOrder order;  // freed before the programs are built
    put_weight_gradients(slots, false);
    squeeze(slots, true, order);
    run_eagerly(slots, order);
    slots.set_rows(VRows::kBlock);
    squeeze(slots, false, order);
    put_weight_gradients(slots, false);
    run_eagerly(slots, order);
  }
  // 4. W1 and W0 back into the free slots; each device runs in slot order.
  put_weight_gradients(slots, true);
  std::int64_t peak = 0;
  static constexpr std::array<TaskKind, 6> kKind = {TaskKind::F, TaskKind::F, TaskKind::B,
                                                    TaskKind::B, TaskKind::W, TaskKind::W};
  static constexpr std::array<std::uint32_t, 6> kChunk = {0, 1, 1, 0, 1, 0};
  std::vector<VTask> tasks(slots.tasks_per_device());
  for (std::uint32_t d = 0; d < p; ++d) {
    merge_rows(slots, d, tasks);
    auto& program = plan.programs[d];
    program.reserve(tasks.size());
    std::int64_t held = 0;
    for (const VTask& task : tasks) {
      program.push_back(Step{kKind[task.type], task.mb, kChunk[task.type]});
      if (task.type == kF0 || task.type == kF1) peak = std::max(peak, ++held);
      if (task.type == kW || task.type == kW0) --held;
    }
  }
  if (spec.memory_limit > 0 && spec.memory_limit < static_cast<double>(peak)) {
    throw ScheduleError(
        fmt::format("{} needs memory_limit >= {} (its peak activations per device at {} stages "
                    "and {} microbatches), got {}",
                    spec.schedule, peak, p, m, spec.memory_limit),
        "memory_limit");
  }
  return plan;
}

PipelinePlan plan_v_half(const PipelineSpec& spec, const CostTable& /*costs*/) {
  require_sizes(spec, 2);
  // The V-Half block: F0 two slots apart down the V, B's likewise, a gap of 3 when p is even.
  const std::int64_t n = spec.stages;
  const std::int64_t gap = n % 2 == 0 ? 3 : 0;
  std::vector<std::array<std::int64_t, 4>> block(spec.stages);
  for (std::int64_t i = 0; i < n; ++i) {
    block[static_cast<std::size_t>(i)] = {2 * i, 3 * n - i - 2, 3 * n + gap + 2 * i - 1,
                                          6 * n + gap - i - 2};
  }
  return plan_v_building_block(spec, block);
}

}  // namespace perflow::parallel::detail
