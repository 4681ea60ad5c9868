// The slot table of the V-Half / V-Min construction and the steps around the squeeze:
// weight gradients into free slots and the eager re-timing (see v_half.cpp for the whole
// construction and its sources). The reference walks a dense (slot, device) table; here each
// step visits the tasks, in one of two orders built by a merge and a counting sort.
#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <vector>

#include "../detail/v_slots.hpp"

namespace perflow::parallel::detail {

SlotTable::SlotTable(std::uint32_t devices, std::uint32_t microbatches)
    : devices_(devices),
      microbatches_(microbatches),
      slots_(std::size_t{devices} * 6 * microbatches) {}

std::uint8_t SlotTable::types() const {
  switch (rows_) {
    case VRows::kBlock:
      return 4;
    case VRows::kFusedW:
      return 5;
    case VRows::kSplitW:
      break;
  }
  return 6;
}

std::uint32_t SlotTable::row_length(std::uint8_t type) const {
  return type == kW && rows_ == VRows::kFusedW ? 2 * microbatches_ : microbatches_;
}

std::size_t SlotTable::tasks_per_device() const {
  return std::size_t{microbatches_} * (rows_ == VRows::kBlock ? 4 : 6);
}

void merge_rows(const SlotTable& slots, std::uint32_t d, std::span<VTask> out) {
  const std::uint8_t types = slots.types();
  std::array<std::span<const Slot>, 6> rows{};
  std::array<std::uint32_t, 6> next{};
  for (std::uint8_t t = 0; t < types; ++t) rows[t] = slots.row(d, t);
  assert(out.size() == slots.tasks_per_device());
  for (VTask& task : out) {
    std::uint8_t first = 0;
    Slot first_slot = std::numeric_limits<Slot>::max();
    for (std::uint8_t t = 0; t < types; ++t) {
      if (next[t] < rows[t].size() && rows[t][next[t]] < first_slot) {
        first = t;
        first_slot = rows[t][next[t]];
      }
    }
    assert(next[first] == 0 || rows[first][next[first] - 1] < first_slot);  // ascending
    task = {first_slot, next[first]++, first};
  }
}

void SlotOrder::build(const SlotTable& slots) {
  const std::uint32_t p = slots.devices();
  per_device_ = slots.tasks_per_device();
  by_device_.resize(per_device_ * p);
  Slot last = 0;
  for (std::uint32_t d = 0; d < p; ++d) {
    const auto tasks = device(d);
    merge_rows(slots, d, tasks);
    if (!tasks.empty()) last = std::max(last, tasks.back().slot);
  }
  // A counting sort by slot; devices are visited in order, so ties stay device by device.
  slot_start_.assign(static_cast<std::size_t>(last) + 2, 0);
  for (const VTask& task : by_device_) ++slot_start_[static_cast<std::size_t>(task.slot) + 1];
  for (std::size_t s = 1; s < slot_start_.size(); ++s) slot_start_[s] += slot_start_[s - 1];
  by_slot_.resize(by_device_.size());
  for (std::uint32_t d = 0; d < p; ++d) {
    for (const VTask& task : device(d))
      by_slot_[slot_start_[static_cast<std::size_t>(task.slot)]++] = d;
  }
}

void put_weight_gradients(SlotTable& slots, bool split) {
  slots.set_rows(VRows::kBlock);
  std::vector<VTask> block(slots.tasks_per_device());
  const VRows rows = split ? VRows::kSplitW : VRows::kFusedW;
  for (std::uint32_t d = 0; d < slots.devices(); ++d) {
    slots.set_rows(VRows::kBlock);
    merge_rows(slots, d, block);
    slots.set_rows(rows);
    // W's by list (W1 or all, W0): how many wait, and where the next one goes.
    std::array<std::uint32_t, 2> pending{};
    std::array<Slot*, 2> next = {&slots.at(d, kW, 0), split ? &slots.at(d, kW0, 0) : nullptr};
    const auto place = [&](std::size_t w, Slot s) {
      *next[w]++ = s;
      --pending[w];
    };
    Slot previous = -1;
    for (const VTask& task : block) {
      // The free slots before this task take waiting W's, W1 (or any) first.
      for (Slot s = previous + 1; s < task.slot && pending[0] + pending[1] > 0; ++s) {
        place(pending[0] > 0 ? 0 : 1, s);
      }
      if (task.type == kB1 || task.type == kB0) ++pending[split && task.type == kB0 ? 1 : 0];
      previous = task.slot;
    }
    for (std::size_t w = 0; w < 2; ++w) {
      while (pending[w] > 0) place(w, ++previous);
    }
  }
}

void run_eagerly(SlotTable& slots, SlotOrder& order) {
  order.build(slots);
  // The table now holds end slots, unset until a task runs; a dependence not yet run (later
  // in slot order) does not hold a task back, as in the reference.
  const std::uint32_t p = slots.devices();
  for (std::uint32_t d = 0; d < p; ++d) {
    for (std::uint8_t t = 0; t < slots.types(); ++t) {
      const auto row = slots.row(d, t);
      std::fill(row.begin(), row.end(), kUnsetSlot);
    }
  }
  std::vector<Slot> device_free(p, 0);
  std::vector<std::uint32_t> cursor(p, 0);
  for (const std::uint32_t d : order.slot_major()) {
    const VTask& e = order.device(d)[cursor[d]++];
    Slot ready = device_free[d];
    if ((e.type == kF0 || e.type == kB1) && d > 0) {
      ready = std::max(ready, slots.at(d - 1, e.type, e.mb));
    }
    if ((e.type == kF1 || e.type == kB0) && d + 1 < p) {
      ready = std::max(ready, slots.at(d + 1, e.type, e.mb));
    }
    if (e.type == kF1 || e.type == kB1 || e.type == kB0) {
      ready = std::max(ready, slots.at(d, static_cast<std::uint8_t>(e.type - 1), e.mb));
    }
    if (e.mb > 0) ready = std::max(ready, slots.at(d, e.type, e.mb - 1));
    slots.at(d, e.type, e.mb) = ready + 1;
    device_free[d] = ready + 1;
  }
  for (std::uint32_t d = 0; d < p; ++d) {
    for (std::uint8_t t = 0; t < slots.types(); ++t) {
      for (Slot& s : slots.row(d, t)) --s;  // start = end - 1
    }
  }
}

}  // namespace perflow::parallel::detail
