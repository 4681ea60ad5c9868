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
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "../detail/schedules.hpp"
#include "perflow/core/error.hpp"

namespace perflow::parallel::detail {

namespace {

using Slot = std::int64_t;
constexpr Slot kUnset = std::numeric_limits<Slot>::min();

// Task types; the first four come from the block.
enum Type : std::uint8_t { kF0, kF1, kB1, kB0, kW, kW0, kNoTask = 0xff };
// With split W's, type kW holds W1 and kW0 holds W0.

// Per device, per type, the slot of each microbatch's task.
using DeviceSlots = std::vector<std::vector<Slot>>;

// Activations a task adds when W's are explicit tasks (a W releases one).
std::int64_t activation_delta(std::uint8_t type) {
  if (type == kF0 || type == kF1) return 1;
  return type == kW ? -1 : 0;
}

// Fills free slots with W's after the backwards: one W list, or W1/W0 lists (`split`).
void put_w(DeviceSlots& dev, bool split) {
  Slot bound = 0;
  for (std::size_t t = 0; t < 4; ++t) bound = std::max(bound, dev[t].back());
  std::vector<std::uint8_t> at(static_cast<std::size_t>(bound) + 1, kNoTask);
  for (std::uint8_t t = 0; t < 4; ++t) {
    for (const Slot s : dev[t]) at[static_cast<std::size_t>(s)] = t;
  }
  dev.resize(split ? 6 : 5);
  dev[kW].clear();
  if (split) dev[kW0].clear();
  std::array<std::size_t, 2> pending{};
  for (Slot s = 0; s <= bound; ++s) {
    const std::uint8_t t = at[static_cast<std::size_t>(s)];
    if (t == kB1 || t == kB0) {
      ++pending[split && t == kB0 ? 1 : 0];
    } else if (t == kNoTask) {
      for (std::size_t w = 0; w < 2; ++w) {
        if (pending[w] > 0) {
          dev[kW + w].push_back(s);
          --pending[w];
          break;
        }
      }
    }
  }
  Slot s = bound;
  for (std::size_t w = 0; w < 2; ++w) {
    for (; pending[w] > 0; --pending[w]) dev[kW + w].push_back(++s);
  }
}

// Runs every device's tasks in slot order with unit costs and no latency, as early as their
// dependences allow; returns the start slots (the "squeeze").
std::vector<DeviceSlots> run_eagerly(const std::vector<DeviceSlots>& slots) {
  const std::size_t p = slots.size();
  const std::size_t types = slots[0].size();
  Slot last = 0;
  for (const auto& dev : slots) {
    for (const auto& list : dev) last = std::max(last, list.back());
  }
  // The task in each (slot, device), by slot.
  struct Entry {
    std::uint8_t type;
    std::uint32_t mb;
  };
  std::vector<Entry> at(static_cast<std::size_t>(last + 1) * p, Entry{kNoTask, 0});
  for (std::size_t d = 0; d < p; ++d) {
    for (std::size_t t = 0; t < types; ++t) {
      for (std::size_t mb = 0; mb < slots[d][t].size(); ++mb) {
        at[static_cast<std::size_t>(slots[d][t][mb]) * p + d] = {static_cast<std::uint8_t>(t),
                                                                 static_cast<std::uint32_t>(mb)};
      }
    }
  }
  std::vector<DeviceSlots> end(p, DeviceSlots(types));
  for (std::size_t d = 0; d < p; ++d) {
    for (std::size_t t = 0; t < types; ++t) end[d][t].assign(slots[d][t].size(), kUnset);
  }
  std::vector<Slot> device_free(p, 0);
  for (std::size_t i = 0; i < at.size(); ++i) {
    const Entry e = at[i];
    if (e.type == kNoTask) continue;
    const std::size_t d = i % p;
    Slot ready = device_free[d];
    if ((e.type == kF0 || e.type == kB1) && d > 0) {
      ready = std::max(ready, end[d - 1][e.type][e.mb]);
    }
    if ((e.type == kF1 || e.type == kB0) && d + 1 < p) {
      ready = std::max(ready, end[d + 1][e.type][e.mb]);
    }
    if (e.type == kF1 || e.type == kB1 || e.type == kB0) {
      ready = std::max(ready, end[d][e.type - 1][e.mb]);
    }
    if (e.mb > 0) ready = std::max(ready, end[d][e.type][e.mb - 1]);
    end[d][e.type][e.mb] = ready + 1;
    device_free[d] = ready + 1;
  }
  for (auto& dev : end) {
    for (auto& list : dev) {
      for (auto& s : list) --s;  // start = end - 1
    }
  }
  return end;
}

// One squeeze sweep over all devices (see the file comment); `explicit_w`: W's are tasks of
// the sweep (type kW) and the warm-up moves too.
void squeeze(std::vector<DeviceSlots>& slots, bool explicit_w, std::uint32_t m) {
  const std::size_t p = slots.size();
  const std::size_t types = explicit_w ? 5 : 4;
  Slot last = 0;
  for (const auto& dev : slots) {
    for (std::size_t t = 0; t < types; ++t) last = std::max(last, dev[t].back());
  }
  const auto size = static_cast<std::size_t>(last) + 2;
  // task[d][s]: type at slot s (kNoTask if free); placed[d][s]: a swept task sits there.
  std::vector<std::vector<std::uint8_t>> task(p, std::vector<std::uint8_t>(size, kNoTask));
  std::vector<std::vector<std::uint32_t>> mb_at(p, std::vector<std::uint32_t>(size, 0));
  std::vector<std::vector<bool>> placed(p, std::vector<bool>(size, false));
  for (std::size_t d = 0; d < p; ++d) {
    for (std::size_t t = 0; t < types; ++t) {
      for (std::size_t mb = 0; mb < slots[d][t].size(); ++mb) {
        const auto s = static_cast<std::size_t>(slots[d][t][mb]);
        task[d][s] = static_cast<std::uint8_t>(t);
        mb_at[d][s] = static_cast<std::uint32_t>(mb);
      }
    }
  }
  // Activation levels: explicit W's give a plain prefix sum; implicit ones depend on the free
  // slots and are re-derived from the first changed slot.
  std::vector<std::vector<std::int64_t>> level(p, std::vector<std::int64_t>(size, 0));
  std::vector<std::vector<std::int64_t>> waiting(p, std::vector<std::int64_t>(size, 0));
  const auto walk = [&](std::size_t d, std::size_t from, std::int64_t cur, std::int64_t wait,
                        bool store, std::size_t converge_after, std::int64_t& high) {
    // Raises `high` to the highest level from slot `from` on, starting from (cur, wait); stops
    // once the state matches the stored one past `converge_after` (the rest is unchanged).
    for (std::size_t s = from; s < size; ++s) {
      const std::uint8_t t = task[d][s];
      if (t != kNoTask) {
        cur += activation_delta(t);
        if (t == kB1 || t == kB0) ++wait;
      } else if (!explicit_w && wait > 0) {
        --cur;
        --wait;
      }
      high = std::max(high, cur);
      if (s > converge_after && level[d][s] == cur && waiting[d][s] == wait) return;
      if (store) {
        level[d][s] = cur;
        waiting[d][s] = wait;
      }
    }
  };
  std::int64_t peak = 0;
  for (std::size_t d = 0; d < p; ++d) {
    std::int64_t high = 0;
    walk(d, 0, 0, 0, true, size, high);
    peak = std::max(peak, high);
  }

  // Current slot of each task.
  const auto slot_of = [&](std::size_t d, std::size_t t, std::uint32_t mb) -> Slot& {
    return slots[d][t][mb];
  };
  int phase = 0;
  for (std::size_t s = 0; s < size; ++s) {
    for (std::size_t d = 0; d < p; ++d) {
      if (placed[d][s] || task[d][s] == kNoTask) continue;
      const std::uint8_t t = task[d][s];
      const std::uint32_t mb = mb_at[d][s];
      if (t == kB0 && d == 0 && phase == 0) phase = 1;
      const bool frozen = phase == 1 || (phase == 0 && !explicit_w);
      if (phase == 1 && t == kF0 && mb + 1 == m) phase = 2;
      if (frozen) {
        placed[d][s] = true;
        continue;
      }
      Slot ready = -1;
      if ((t == kF0 || t == kB1) && d > 0) ready = std::max(ready, slot_of(d - 1, t, mb));
      if ((t == kF1 || t == kB0) && d + 1 < p) ready = std::max(ready, slot_of(d + 1, t, mb));
      if (t == kF1 || t == kB1 || t == kB0) ready = std::max(ready, slot_of(d, t - 1, mb));
      if (t == kW) {
        // The mb-th backward (either chunk) in slot order.
        std::uint32_t seen = 0;
        for (std::size_t j = 0; j < size; ++j) {
          if (task[d][j] == kB1 || task[d][j] == kB0) {
            if (seen++ == mb) {
              ready = std::max(ready, static_cast<Slot>(j));
              break;
            }
          }
        }
      }
      if (mb > 0) ready = std::max(ready, slot_of(d, t, mb - 1));
      ++ready;
      const auto from = static_cast<std::size_t>(ready);
      std::size_t to = s;
      if (explicit_w) {
        // The level is a prefix sum: moving an F from s to j raises [j, s) by one, a W lowers
        // it, a B leaves it; take the earliest free j whose raised level stays within peak.
        std::int64_t high = std::numeric_limits<std::int64_t>::min();
        for (std::size_t j = s; j-- > from;) {
          high = std::max(high, level[d][j]);
          if (activation_delta(t) > 0 && high + 1 > peak) break;  // monotone in j
          if (!placed[d][j] && task[d][j] == kNoTask) to = j;
        }
        if (to != s) {
          for (std::size_t j = to; j < s; ++j) level[d][j] += activation_delta(t);
        }
      } else {
        for (std::size_t j = from; j < s; ++j) {
          if (placed[d][j] || task[d][j] != kNoTask) continue;
          task[d][j] = t;
          task[d][s] = kNoTask;
          const std::int64_t cur = j > 0 ? level[d][j - 1] : 0;
          const std::int64_t wait = j > 0 ? waiting[d][j - 1] : 0;
          std::int64_t high = 0;
          walk(d, j, cur, wait, false, s, high);
          task[d][j] = kNoTask;
          task[d][s] = t;
          if (high <= peak) {
            to = j;
            break;
          }
        }
      }
      if (to != s) {
        task[d][to] = t;
        mb_at[d][to] = mb;
        task[d][s] = kNoTask;
        slot_of(d, t, mb) = static_cast<Slot>(to);
        if (!explicit_w) {
          const std::int64_t cur = to > 0 ? level[d][to - 1] : 0;
          const std::int64_t wait = to > 0 ? waiting[d][to - 1] : 0;
          std::int64_t high = 0;
          walk(d, to, cur, wait, true, s, high);
        }
      }
      placed[d][to] = true;
    }
  }
}

}  // namespace

PipelinePlan plan_v_building_block(const PipelineSpec& spec,
                                   const std::vector<std::array<std::int64_t, 4>>& block) {
  PipelinePlan plan = empty_plan(spec, PipelineShape::VShape);
  const std::uint32_t p = spec.stages;
  const std::uint32_t m = spec.microbatches;

  // 1. The block, repeated every 6 slots.
  std::vector<DeviceSlots> slots(p, DeviceSlots(4, std::vector<Slot>(m)));
  for (std::uint32_t d = 0; d < p; ++d) {
    for (std::size_t t = 0; t < 4; ++t) {
      for (std::uint32_t i = 0; i < m; ++i) slots[d][t][i] = block[d][t] + Slot{6} * i;
    }
  }
  // 2-3. W's in the free slots, squeeze with them, re-time; squeeze the cool-down without
  // them, re-time.
  for (auto& dev : slots) put_w(dev, false);
  squeeze(slots, true, m);
  slots = run_eagerly(slots);
  for (auto& dev : slots) dev.resize(4);
  squeeze(slots, false, m);
  for (auto& dev : slots) put_w(dev, false);
  slots = run_eagerly(slots);
  // 4. W1 and W0 back into the free slots; each device runs in slot order.
  for (auto& dev : slots) {
    dev.resize(4);
    put_w(dev, true);
  }
  std::int64_t peak = 0;
  for (std::uint32_t d = 0; d < p; ++d) {
    struct Item {
      Slot slot;
      Step step;
    };
    std::vector<Item> items;
    items.reserve(std::size_t{m} * 6);
    static constexpr std::array<TaskKind, 6> kKind = {TaskKind::F, TaskKind::F, TaskKind::B,
                                                      TaskKind::B, TaskKind::W, TaskKind::W};
    static constexpr std::array<std::uint32_t, 6> kChunk = {0, 1, 1, 0, 1, 0};
    for (std::size_t t = 0; t < 6; ++t) {
      for (std::uint32_t mb = 0; mb < m; ++mb) {
        items.push_back({slots[d][t][mb], Step{kKind[t], mb, kChunk[t]}});
      }
    }
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.slot < b.slot; });
    auto& program = plan.programs[d];
    program.reserve(items.size());
    std::int64_t held = 0;
    for (const Item& it : items) {
      program.push_back(it.step);
      if (it.step.kind == TaskKind::F) peak = std::max(peak, ++held);
      if (it.step.kind == TaskKind::W) --held;
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
