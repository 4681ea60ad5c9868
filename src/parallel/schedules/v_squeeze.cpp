// The squeeze of the V-Half / V-Min construction (v_half.cpp; the reference is
// zerobubble/scheduler/zbv_greedy.py of github.com/sail-sg/zero-bubble-pipeline-parallelism):
// a sweep in slot order, device by device within a slot, pulls each task to the earliest
// free slot after its dependences where the device's activation level stays within the peak
// it had before the sweep. The warm-up (until device 0 starts B0) and the cool-down (after
// the first last-microbatch F0 that follows it) move; the steady state between stays.
//
// The reference keeps a (slot, device) table; each device here keeps only its tasks, in slot
// order, so the cost follows tasks, not stages x slots. What the reference reads from the
// table is derived from the tasks around a slot:
//  - every slot below the task being swept holds either a task already swept or nothing (a
//    task only moves when it is swept, and only down), so the free slots are the gaps
//    between the swept tasks;
//  - with W's as tasks, the activation level is a prefix sum, constant from a task up to the
//    next one, so the search walks the swept tasks down from the task's slot;
//  - with W's implicit (each free slot runs one W of a backward still waiting for one), each
//    task stores the level and the waiting count after it; a free slot's state follows from
//    the task before it.
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <span>
#include <vector>

#include "../detail/v_slots.hpp"
#include "perflow/core/huge_page_allocator.hpp"

namespace perflow::parallel::detail {
namespace {

bool is_backward(std::uint8_t type) { return type == kB1 || type == kB0; }

// Activations a task adds: an F one, an explicit W releases one (implicit W's are free
// slots, not tasks).
std::int64_t activation_delta(std::uint8_t type) {
  if (type == kF0 || type == kF1) return 1;
  return type == kW ? -1 : 0;
}

// With implicit W's, a device's state just after a task's slot.
struct Stored {
  std::int32_t level;    // activations held
  std::int32_t waiting;  // backwards whose W has not run yet
};

// A device's state with implicit W's.
struct State {
  std::int64_t level = 0;
  std::int64_t waiting = 0;

  void idle(Slot free_slots) {  // each free slot runs one waiting W
    const std::int64_t runs = std::min<std::int64_t>(free_slots, waiting);
    level -= runs;
    waiting -= runs;
  }
  void run(std::uint8_t type) {
    level += activation_delta(type);
    if (is_backward(type)) ++waiting;
  }
  [[nodiscard]] bool matches(const Stored& s) const {
    return level == s.level && waiting == s.waiting;
  }
  [[nodiscard]] Stored stored() const {
    return {static_cast<std::int32_t>(level), static_cast<std::int32_t>(waiting)};
  }
};

class Sweep {
 public:
  Sweep(SlotTable& slots, bool explicit_w, SlotOrder& order);
  void run();

 private:
  // Explicit W's: the device's backwards' slots, ascending (2m).
  std::span<Slot> backwards(std::uint32_t d) {
    const std::size_t n = std::size_t{m_} * 2;
    return {backwards_.data() + std::size_t{d} * n, n};
  }
  // Implicit W's: the device's state after each of its tasks, in the order of order_.device(d).
  std::span<Stored> stored(std::uint32_t d) {
    return {stored_.data() + std::size_t{d} * per_device_, per_device_};
  }
  [[nodiscard]] std::span<const Stored> stored(std::uint32_t d) const {
    return {stored_.data() + std::size_t{d} * per_device_, per_device_};
  }
  [[nodiscard]] Slot ready(std::uint32_t d, const VTask& task);
  [[nodiscard]] Slot explicit_target(std::uint32_t d, Slot from, std::size_t& index) const;
  [[nodiscard]] Slot implicit_target(std::uint32_t d, Slot from, std::size_t& index) const;
  [[nodiscard]] bool fits_implicit(std::uint32_t d, std::size_t i, Slot free_slot) const;
  [[nodiscard]] State state_before(std::uint32_t d, std::size_t i, Slot s) const;
  void move(std::uint32_t d, std::size_t index, Slot to);
  void restate(std::uint32_t d, std::size_t i, Slot vacated);

  SlotTable& slots_;
  bool explicit_w_;
  SlotOrder& order_;  // each device's tasks in slot order (kept so as tasks move)
  std::uint32_t p_;
  std::uint32_t m_;
  std::size_t per_device_;
  BigVector<Slot> backwards_;
  BigVector<Stored> stored_;
  std::vector<std::uint32_t> cursor_;      // per device: the next task to sweep
  std::vector<std::int64_t> swept_level_;  // explicit W's: the level just below the cursor
  std::int64_t peak_ = 0;
};

Sweep::Sweep(SlotTable& slots, bool explicit_w, SlotOrder& order)
    : slots_(slots),
      explicit_w_(explicit_w),
      order_(order),
      p_(slots.devices()),
      m_(slots.microbatches()),
      per_device_(slots.tasks_per_device()),
      cursor_(p_, 0) {
  order_.build(slots_);
  if (explicit_w_) {
    backwards_.resize(std::size_t{p_} * m_ * 2);
    swept_level_.assign(p_, 0);
  } else {
    stored_.resize(per_device_ * p_);
  }
  // The peak over all devices of the level before the sweep (at least 0).
  for (std::uint32_t d = 0; d < p_; ++d) {
    const auto tasks = order_.device(d);
    State state;
    Slot previous = -1;
    std::size_t b = 0;
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      const VTask& task = tasks[k];
      if (explicit_w_) {
        state.level += activation_delta(task.type);
        if (is_backward(task.type)) backwards(d)[b++] = task.slot;
      } else {
        state.idle(task.slot - previous - 1);
        state.run(task.type);
        stored(d)[k] = state.stored();
      }
      peak_ = std::max(peak_, state.level);
      previous = task.slot;
    }
  }
}

void Sweep::run() {
  int phase = 0;
  for (const std::uint32_t d : order_.slot_major()) {
    const VTask task = order_.device(d)[cursor_[d]];
    const std::uint8_t t = task.type;
    if (t == kB0 && d == 0 && phase == 0) phase = 1;
    const bool frozen = phase == 1 || (phase == 0 && !explicit_w_);
    if (phase == 1 && t == kF0 && task.mb + 1 == m_) phase = 2;
    if (!frozen) {
      const Slot from = ready(d, task) + 1;
      std::size_t index = 0;
      const Slot to =
          explicit_w_ ? explicit_target(d, from, index) : implicit_target(d, from, index);
      if (to != task.slot) {
        move(d, index, to);
        if (!explicit_w_) restate(d, index, task.slot);
      }
    }
    if (explicit_w_) swept_level_[d] += activation_delta(t);
    ++cursor_[d];
  }
}

// The slot of the task's latest dependence (-1 if none), at the dependences' current slots.
Slot Sweep::ready(std::uint32_t d, const VTask& task) {
  const std::uint8_t t = task.type;
  const std::uint32_t mb = task.mb;
  Slot ready = -1;
  if ((t == kF0 || t == kB1) && d > 0) ready = std::max(ready, slots_.at(d - 1, t, mb));
  if ((t == kF1 || t == kB0) && d + 1 < p_) ready = std::max(ready, slots_.at(d + 1, t, mb));
  if (t == kF1 || t == kB1 || t == kB0) {
    ready = std::max(ready, slots_.at(d, static_cast<std::uint8_t>(t - 1), mb));
  }
  if (t == kW) ready = std::max(ready, backwards(d)[mb]);  // the mb-th backward, either chunk
  if (mb > 0) ready = std::max(ready, slots_.at(d, t, mb - 1));
  return ready;
}

// Explicit W's: the earliest free slot in [from, s) such that moving the task there keeps
// every level it passes within the peak (moving an F raises the levels in between by one,
// a W lowers them, a B leaves them); s if none. Walks the swept tasks down from s: the level
// is constant from a task up to the next one. `index`: where the task goes in the list.
Slot Sweep::explicit_target(std::uint32_t d, Slot from, std::size_t& index) const {
  const auto tasks = order_.device(d);
  std::size_t i = cursor_[d];
  const Slot s = tasks[i].slot;
  const bool raises = activation_delta(tasks[i].type) > 0;
  std::int64_t level = swept_level_[d];  // at s - 1
  Slot to = s;
  // Slots [bottom, top) share `level`: the swept task at `bottom` (if any) and the free slots
  // above it.
  for (Slot top = s; from < top;) {
    if (raises && level + 1 > peak_) break;
    const Slot bottom = i > 0 ? tasks[i - 1].slot : from - 1;
    const Slot lowest_free = std::max(bottom + 1, from);
    if (lowest_free < top) {
      to = lowest_free;
      index = i;
    }
    if (i == 0 || bottom <= from) break;
    level -= activation_delta(tasks[i - 1].type);
    top = bottom;
    --i;
  }
  return to;
}

// Implicit W's: the earliest free slot in [from, s) where the task fits (fits_implicit); s
// if none.
Slot Sweep::implicit_target(std::uint32_t d, Slot from, std::size_t& index) const {
  const auto tasks = order_.device(d);
  const std::size_t moving = cursor_[d];
  const Slot s = tasks[moving].slot;
  // i: the first swept task at or above slot j.
  std::size_t i = static_cast<std::size_t>(
      std::lower_bound(tasks.begin(), tasks.begin() + static_cast<std::ptrdiff_t>(moving), from,
                       [](const VTask& e, Slot slot) { return e.slot < slot; }) -
      tasks.begin());
  for (Slot j = from; j < s; ++j) {
    if (i < moving && tasks[i].slot == j) {
      ++i;
      continue;
    }
    if (fits_implicit(d, i, j)) {
      index = i;
      return j;
    }
  }
  return s;
}

// The state at the end of slot s - 1, where the device's tasks from index i on are at s or
// above.
State Sweep::state_before(std::uint32_t d, std::size_t i, Slot s) const {
  if (i == 0) return {};
  const Stored& after = stored(d)[i - 1];
  State state{after.level, after.waiting};
  state.idle(s - 1 - order_.device(d)[i - 1].slot);
  return state;
}

// Would the task at the cursor, moved to the free slot j (swept tasks before index i are
// below j), keep the level within the peak? The level changes only from j until the states
// rejoin the stored ones after the task's old slot; beyond that they are the stored levels,
// within the peak already.
bool Sweep::fits_implicit(std::uint32_t d, std::size_t i, Slot free_slot) const {
  const auto tasks = order_.device(d);
  const auto after = stored(d);
  const std::size_t moving = cursor_[d];
  const VTask& task = tasks[moving];
  State state = state_before(d, i, free_slot);
  state.run(task.type);
  if (state.level > peak_) return false;
  Slot previous = free_slot;
  for (std::size_t k = i; k < tasks.size(); ++k) {
    if (k == moving) continue;  // its old slot is free now
    const VTask& e = tasks[k];
    state.idle(e.slot - previous - 1);
    state.run(e.type);
    if (state.level > peak_) return false;  // free slots never raise it
    if (e.slot > task.slot && state.matches(after[k])) break;
    previous = e.slot;
  }
  return true;
}

// Moves the task at the cursor to slot `to`, at `index` in the device's list. (The stored
// states of the tasks shifted up are rewritten by restate.)
void Sweep::move(std::uint32_t d, std::size_t index, Slot to) {
  const auto tasks = order_.device(d);
  const std::size_t c = cursor_[d];
  VTask task = tasks[c];
  const Slot old = task.slot;
  task.slot = to;
  std::move_backward(tasks.begin() + static_cast<std::ptrdiff_t>(index),
                     tasks.begin() + static_cast<std::ptrdiff_t>(c),
                     tasks.begin() + static_cast<std::ptrdiff_t>(c) + 1);
  tasks[index] = task;
  slots_.at(d, task.type, task.mb) = to;
  if (explicit_w_ && is_backward(task.type)) {
    const auto b = backwards(d);
    const auto at_old = std::lower_bound(b.begin(), b.end(), old);
    const auto at_new = std::lower_bound(b.begin(), at_old, to);
    std::move_backward(at_new, at_old, at_old + 1);
    *at_new = to;
  }
}

// Implicit W's: re-derives the stored states from the task just moved to index i up to where
// they rejoin the old ones after its old slot (every task in between moved up one index).
void Sweep::restate(std::uint32_t d, std::size_t i, Slot vacated) {
  const auto tasks = order_.device(d);
  const auto after = stored(d);
  State state = state_before(d, i, tasks[i].slot);
  Slot previous = tasks[i].slot - 1;
  for (std::size_t k = i; k < tasks.size(); ++k) {
    const VTask& e = tasks[k];
    state.idle(e.slot - previous - 1);
    state.run(e.type);
    if (e.slot > vacated && state.matches(after[k])) break;
    after[k] = state.stored();
    previous = e.slot;
  }
}

}  // namespace

void squeeze(SlotTable& slots, bool explicit_w, SlotOrder& order) {
  assert(explicit_w == (slots.rows() == VRows::kFusedW));
  assert(explicit_w || slots.rows() == VRows::kBlock);
  Sweep(slots, explicit_w, order).run();
}

}  // namespace perflow::parallel::detail
