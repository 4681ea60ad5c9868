// 1F1B-V: the V-shape 1F1B with fused backward, the baseline of Qi et al., "Pipeline
// Parallelism with Controllable Memory" (NeurIPS 2024, arXiv 2405.15362), following the
// program order of the reference runtime's V-shape 1F1B generator
// (github.com/sail-sg/zero-bubble-pipeline-parallelism, zerobubble/scheduler/v1f1b.py).
//
// Construction, restated:
//  1. A repeating block of six slots per device holds one forward of each chunk (F0 down the
//     V, F1 up it), one backward of each chunk (B1 runs first, from device 0 upwards; B0 then
//     runs from device p-1 downwards) and a placeholder W after each backward. The slots are
//     numbered by walking the V: F0 on devices 0..p-1, F1 on p-1..0, then the (B, W) pairs of
//     chunk 1 on 0..p-1 and of chunk 0 on p-1..0, two slots per pair with a gap of three
//     slots after every third pair (and three more before the first pair when 3 divides p),
//     all taken modulo 6.
//  2. Repeating that block along a slot axis, each (device, kind) keeps exactly m copies:
//     the first one at or after a cursor that walks the same V (a W's first copy is the first
//     one after its backward's), then one per block.
//  3. One sweep over the slots, device by device within a slot, pulls every task as early as
//     its dependences and free slots allow (a backward wants two free slots, one for its W);
//     a forward is pulled back only while the device's activation count stays below the
//     pattern's peak, so the warm-up fills in without raising peak memory.
//  4. The W placeholders are dropped: each backward runs fused (BW).
// The pull-back keeps the block's peak: every device holds at most 2(p - floor((p-1)/3))
// chunk activations, reached once m >= p (simulated; e.g. 6 at p = 4, 10 at p = 6 and 7,
// 18 at p = 12), i.e. p - floor((p-1)/3) full-stage activations against 1F1B's p. Every
// p >= 1 and m >= 1 is accepted (the sweep never needs more than m copies).
//
// The reference sweeps a (slot, device) table, whose size grows with stages squared (each
// device's tasks spread over about 8p + 6m slots). Here the sweep visits the tasks, not the
// slots: a task only moves when it is swept, and only down, so each is swept once, at its
// slot of step 2, and a counting sort by that slot gives the sweep's order. When a device's
// task at slot s is swept, its tasks below s are the ones already swept, kept in slot order:
// the free slots are the gaps between them, and the activation count is a prefix sum over
// them, constant from one task up to the next, so the forward's pull-back walks them down
// from s. The same slots result in O(tasks + slots), plus per task a search and walks over
// the device's tasks between its dependence and its slot. (The buffers are plain vectors:
// BigVector's 2 MiB-aligned blocks were faulted in afresh plan after plan, which measured
// slower.)
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "../detail/schedules.hpp"

namespace perflow::parallel::detail {
namespace {

// The six kinds of the block, in the order the construction numbers them.
enum Kind : std::uint8_t { kF0, kF1, kB1, kB0, kW1, kW0, kKinds };

// A slot on the axis of step 2. Slots stay below 2^31: see place_copies.
using Slot = std::int32_t;
constexpr Slot kUnset = std::numeric_limits<Slot>::min();  // a task not swept yet

using Offsets = std::array<std::uint32_t, kKinds>;

// Slot offset (0..5) of each kind in device d's block: the six are distinct.
std::vector<Offsets> block_offsets(std::uint32_t p) {
  std::vector<Offsets> off(p);
  std::uint32_t now = 0;
  for (std::uint32_t d = 0; d < p; ++d) off[d][kF0] = ++now;
  for (std::uint32_t i = 0; i < p; ++i) off[p - 1 - i][kF1] = ++now;
  ++now;
  if (p % 3 == 0) now += 3;
  std::uint32_t cycle = (3 - (p + 2) % 3) % 3;
  const auto place_pair = [&](std::uint32_t d, Kind b, Kind w) {
    off[d][b] = now;
    off[d][w] = now + 1;
    now += 2;
    if (++cycle == 3) {
      cycle = 0;
      now += 3;
    }
  };
  for (std::uint32_t d = 0; d < p; ++d) place_pair(d, kB1, kW1);
  for (std::uint32_t i = 0; i < p; ++i) place_pair(p - 1 - i, kB0, kW0);
  for (auto& o : off) {
    for (auto& x : o) x %= 6;
  }
  return off;
}

// Step 2's placement: copy i of kind k on device d sits at slot first[d][k] + 6i.
struct Copies {
  std::uint32_t devices = 0;
  std::uint32_t microbatches = 0;
  std::vector<std::array<Slot, kKinds>> first;
  // Per device, the kind whose copies sit at the slots = r (mod 6): the block's offsets are
  // distinct, so a slot holds at most one copy, of the kind its residue names.
  std::vector<std::array<Kind, 6>> kind_at;
  Slot end = 0;  // past the last copy's slot

  [[nodiscard]] Slot slot(std::uint32_t d, Kind k, std::uint32_t mb) const {
    return first[d][k] + static_cast<Slot>(6 * mb);
  }
  [[nodiscard]] std::uint32_t microbatch(std::uint32_t d, Kind k, Slot s) const {
    return static_cast<std::uint32_t>((s - first[d][k]) / 6);
  }
};

// Step 2. The cursor advances at most 6 slots per (device, kind) it walks, so slots stay
// below 24p + 6m + 12 < 2^31 (p, m <= 2^26).
static_assert(kMaxPipelineTasks <= (std::uint64_t{1} << 28),
              "p, m <= 2^26 keeps the slots below 2^31: re-check Slot if the limit grows");
Copies place_copies(std::uint32_t p, std::uint32_t m) {
  const std::vector<Offsets> off = block_offsets(p);
  Copies copies;
  copies.devices = p;
  copies.microbatches = m;
  copies.first.resize(p);
  copies.kind_at.resize(p);
  Slot cursor = 6;
  // The first copy of kind k on device d at or after slot `from`.
  const auto place = [&](std::uint32_t d, Kind k, Slot from) {
    const Slot first =
        from + static_cast<Slot>((off[d][k] + 6 - static_cast<std::uint32_t>(from) % 6) % 6);
    copies.first[d][k] = first;
    copies.kind_at[d][off[d][k]] = k;
    copies.end = std::max(copies.end, copies.slot(d, k, m - 1) + 1);
    return first;
  };
  for (const Kind k : {kF0, kF1, kB1, kB0}) {
    const bool down = k == kF0 || k == kB1;
    for (std::uint32_t i = 0; i < p; ++i) {
      const std::uint32_t d = down ? i : p - 1 - i;
      cursor = place(d, k, cursor) + 1;
      if (k == kB1) place(d, kW1, cursor);  // a W's first copy is the first after its B's
      if (k == kB0) place(d, kW0, cursor);
    }
  }
  return copies;
}

// The order of the sweep: every task's device, by slot and device by device within a slot
// (a counting sort by slot). Slot s's devices are devices[start[s] .. start[s + 1]).
struct SweepOrder {
  std::vector<std::uint32_t> start;
  std::vector<std::uint32_t> devices;
};

SweepOrder sweep_order(const Copies& copies) {
  const std::uint32_t p = copies.devices;
  const std::uint32_t m = copies.microbatches;
  SweepOrder order;
  order.start.assign(static_cast<std::size_t>(copies.end) + 1, 0);
  for (std::uint32_t d = 0; d < p; ++d) {
    for (const Slot first : copies.first[d]) {
      for (std::uint32_t i = 0; i < m; ++i) {
        ++order.start[static_cast<std::size_t>(first) + 6 * i + 1];
      }
    }
  }
  for (std::size_t s = 1; s < order.start.size(); ++s) order.start[s] += order.start[s - 1];
  std::vector<std::uint32_t> next(order.start.begin(), order.start.end() - 1);
  order.devices.resize(order.start.back());
  for (std::uint32_t d = 0; d < p; ++d) {  // devices in order: ties stay device by device
    for (const Slot first : copies.first[d]) {
      for (std::uint32_t i = 0; i < m; ++i) {
        order.devices[next[static_cast<std::size_t>(first) + 6 * i]++] = d;
      }
    }
  }
  return order;
}

// Activations a task adds: a forward holds one, its W releases it.
std::int64_t activation_delta(Kind kind) {
  if (kind == kF0 || kind == kF1) return 1;
  return kind == kW1 || kind == kW0 ? -1 : 0;
}

// Calls visit(d, s, kind) for every task at its slot of step 2, in the sweep's order.
template <class Visit>
void in_sweep_order(const Copies& copies, const SweepOrder& order, Visit&& visit) {
  for (Slot s = 0; s < copies.end; ++s) {
    const auto r = static_cast<std::size_t>(s % 6);
    const auto slot = static_cast<std::size_t>(s);
    for (std::uint32_t i = order.start[slot]; i < order.start[slot + 1]; ++i) {
      const std::uint32_t d = order.devices[i];
      visit(d, s, copies.kind_at[d][r]);
    }
  }
}

// The highest activation count of any device before the sweep (the sweep's order visits
// each device's tasks in slot order).
std::int64_t peak_level(const Copies& copies, const SweepOrder& order) {
  std::vector<std::int64_t> level(copies.devices, 0);
  std::int64_t peak = 0;
  in_sweep_order(copies, order, [&](std::uint32_t d, Slot /*s*/, Kind kind) {
    level[d] += activation_delta(kind);
    peak = std::max(peak, level[d]);
  });
  return peak;
}

// Where each swept task sits, by (device, kind, microbatch); unset until swept.
class Placement {
 public:
  Placement(std::uint32_t devices, std::uint32_t microbatches)
      : devices_(devices),
        microbatches_(microbatches),
        slots_(std::size_t{devices} * kKinds * microbatches, kUnset) {}

  [[nodiscard]] std::uint32_t devices() const { return devices_; }
  [[nodiscard]] Slot& at(std::uint32_t d, Kind k, std::uint32_t mb) {
    return slots_[(std::size_t{d} * kKinds + k) * microbatches_ + mb];
  }
  [[nodiscard]] Slot at(std::uint32_t d, Kind k, std::uint32_t mb) const {
    return slots_[(std::size_t{d} * kKinds + k) * microbatches_ + mb];
  }

 private:
  std::uint32_t devices_;
  std::uint32_t microbatches_;
  std::vector<Slot> slots_;
};

// A task of one device at its slot.
struct Placed {
  Slot slot;
  Kind kind;
};

// The slot of the task's latest dependence, -1 if none: the previous copy of its kind and
// the task before it along the V (a backward waits for the previous device's W). `placed`
// holds the slots of the tasks swept so far; a dependence not yet swept (unset) does not
// count.
Slot ready(const Placement& placed, std::uint32_t d, Kind kind, std::uint32_t mb) {
  const std::uint32_t p = placed.devices();
  Slot after = mb > 0 ? placed.at(d, kind, mb - 1) : -1;
  switch (kind) {
    case kF0:
      if (d > 0) after = std::max(after, placed.at(d - 1, kF0, mb));
      break;
    case kF1:
      after = std::max(after, d + 1 < p ? placed.at(d + 1, kF1, mb) : placed.at(d, kF0, mb));
      break;
    case kB1:
      after = std::max(after, d > 0 ? placed.at(d - 1, kW1, mb) : placed.at(d, kF1, mb));
      break;
    case kB0:
      after = std::max(after, d + 1 < p ? placed.at(d + 1, kW0, mb) : placed.at(d, kW1, mb));
      break;
    case kW1:
      after = std::max(after, placed.at(d, kB1, mb));
      break;
    case kW0:
      after = std::max(after, placed.at(d, kB0, mb));
      break;
    default:
      break;
  }
  return after;
}

// The index of the first swept task at or above slot x. Searched from the top, where x
// usually is (the previous copy and the dependences are recent): gallop, then bisect.
std::size_t first_at_or_above(std::span<const Placed> swept, Slot x) {
  const std::size_t n = swept.size();
  std::size_t high = n;
  std::size_t step = 1;
  while (step <= n && swept[n - step].slot >= x) {
    high = n - step;
    step *= 2;
  }
  const std::size_t low = step <= n ? n - step : 0;
  const auto below = [](const Placed& task, Slot slot) { return task.slot < slot; };
  return static_cast<std::size_t>(
      std::lower_bound(swept.begin() + static_cast<std::ptrdiff_t>(low),
                       swept.begin() + static_cast<std::ptrdiff_t>(high), x, below) -
      swept.begin());
}

// The first slot at or above x that no swept task holds. The swept tasks all sit below the
// slot s being swept, so it is at most max(x, s).
Slot first_free(std::span<const Placed> swept, Slot x) {
  for (std::size_t i = first_at_or_above(swept, x); i < swept.size() && swept[i].slot == x; ++i) {
    ++x;
  }
  return x;
}

// The first slot t >= x with t and t + 1 free and t + 1 < s (the task itself holds s); s if
// none.
Slot first_free_pair(std::span<const Placed> swept, Slot x, Slot s) {
  std::size_t i = first_at_or_above(swept, x);
  for (;;) {
    for (; i < swept.size() && swept[i].slot == x; ++i) ++x;  // x: the next free slot
    if (x + 1 >= s) return s;
    if (i == swept.size() || swept[i].slot != x + 1) return x;
    ++x;  // x + 1 is taken: go on from there
  }
}

// A forward moved down from s to slot t raises the activation count of slots t..s-1 by one,
// and may pass only slots whose count is below the peak. The lowest slot in [to, s] it can
// reach that way. `level`: the count at s - 1, that of all the swept tasks.
Slot lowest_within_peak(std::span<const Placed> swept, std::int64_t level, Slot to, Slot s,
                        std::int64_t peak) {
  Slot place = s;
  std::size_t i = swept.size();
  while (place > to) {
    // The slots from swept task i - 1 up to place - 1 share one count.
    while (i > 0 && swept[i - 1].slot >= place) level -= activation_delta(swept[--i].kind);
    if (level >= peak) break;
    place = i > 0 ? std::max(to, swept[i - 1].slot) : to;
  }
  return place;
}

// Where the sweep puts a task of the given kind at slot s: the first free slot after `after`
// (the first of two for a backward, the second for its W), a forward no lower than
// lowest_within_peak allows; s if there is none below s. `level`: the count at s - 1.
Slot target(std::span<const Placed> swept, Kind kind, Slot after, Slot s, std::int64_t level,
            std::int64_t peak) {
  if (kind == kB1 || kind == kB0) return first_free_pair(swept, after + 1, s);
  const Slot to = first_free(swept, after + 1);
  if (to >= s) return s;
  if (kind == kF0 || kind == kF1) {
    return first_free(swept, lowest_within_peak(swept, level, to, s, peak));
  }
  return to;
}

// Each device's swept tasks in slot order, room for all of its tasks reserved.
class SweptTasks {
 public:
  SweptTasks(std::uint32_t devices, std::size_t per_device)
      : per_device_(per_device), tasks_(devices * per_device), count_(devices, 0) {}

  [[nodiscard]] std::span<const Placed> device(std::uint32_t d) const {
    return {tasks_.data() + d * per_device_, count_[d]};
  }
  // Adds a task just swept: on top of the device's swept tasks, or in the free slot it moved
  // down to.
  void add(std::uint32_t d, Placed task) {
    Placed* const begin = tasks_.data() + d * per_device_;
    Placed* const end = begin + count_[d]++;
    Placed* const at = begin + first_at_or_above({begin, end}, task.slot);
    std::move_backward(at, end, end + 1);
    *at = task;
  }

 private:
  std::size_t per_device_;
  std::vector<Placed> tasks_;
  std::vector<std::size_t> count_;
};

// Step 3: the sweep, in SweepOrder. Returns each device's tasks at their final slots.
SweptTasks sweep(const Copies& copies) {
  const std::uint32_t p = copies.devices;
  const std::uint32_t m = copies.microbatches;
  const SweepOrder order = sweep_order(copies);
  const std::int64_t peak = peak_level(copies, order);
  Placement placed(p, m);
  SweptTasks swept(p, std::size_t{m} * kKinds);
  std::vector<std::int64_t> level(p, 0);  // per device: the count of its swept tasks
  in_sweep_order(copies, order, [&](std::uint32_t d, Slot s, Kind kind) {
    const std::uint32_t mb = copies.microbatch(d, kind, s);
    const Slot to = target(swept.device(d), kind, ready(placed, d, kind, mb), s, level[d], peak);
    swept.add(d, {to, kind});
    placed.at(d, kind, mb) = to;
    level[d] += activation_delta(kind);
  });
  return swept;
}

}  // namespace

PipelinePlan plan_1f1b_v(const PipelineSpec& spec, const CostTable& /*costs*/) {
  require_sizes(spec, 2);
  PipelinePlan plan = empty_plan(spec, PipelineShape::VShape);
  const SweptTasks tasks = sweep(place_copies(spec.stages, spec.microbatches));

  // Step 4: each device's tasks in slot order, without the W placeholders. A kind's copies
  // keep their order (each goes after the previous one), so they are numbered as they come.
  for (std::uint32_t d = 0; d < spec.stages; ++d) {
    auto& program = plan.programs[d];
    program.reserve(std::size_t{spec.microbatches} * 4);
    std::array<std::uint32_t, kKinds> next{};
    for (const Placed& task : tasks.device(d)) {
      switch (task.kind) {
        case kF0:
          program.push_back({TaskKind::F, next[kF0]++, 0});
          break;
        case kF1:
          program.push_back({TaskKind::F, next[kF1]++, 1});
          break;
        case kB0:
          program.push_back({TaskKind::BW, next[kB0]++, 0});
          break;
        case kB1:
          program.push_back({TaskKind::BW, next[kB1]++, 1});
          break;
        default:
          break;
      }
    }
  }
  return plan;
}

}  // namespace perflow::parallel::detail
