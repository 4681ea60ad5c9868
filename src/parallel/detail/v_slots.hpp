#pragma once

// The unit-slot tables of the V-Half / V-Min construction (v_half.cpp): where each task of
// each device sits, and the steps that move tasks between slots. Everything here costs
// O(tasks) plus O(slots) once per step, never stages x slots: a device's tasks are spread
// over about 6(p + m) slots, so a table per (device, slot), as the reference keeps, grows
// with stages squared.

#include <cstdint>
#include <limits>
#include <span>

#include "perflow/core/huge_page_allocator.hpp"

namespace perflow::parallel::detail {

// Slots stay below 2^31: the block spans about 6(p + m) slots, re-timing only pulls tasks
// earlier and a device's W's go at most 2m slots past its last task, while p, m <= tasks / 6
// <= 2^28 / 6 (kMaxPipelineTasks).
using Slot = std::int32_t;
inline constexpr Slot kUnsetSlot = std::numeric_limits<Slot>::min();

/// Task types of the construction; the first four come from the building block. kW holds
/// every weight gradient in one list (2m of them, in slot order) or, split, the W1's, with
/// the W0's in kW0.
enum VType : std::uint8_t { kF0, kF1, kB1, kB0, kW, kW0 };

/// Which rows of a SlotTable are in use.
enum class VRows : std::uint8_t {
  kBlock,   ///< F0, F1, B1, B0 (m each)
  kFusedW,  ///< and kW: all 2m weight gradients in slot order
  kSplitW,  ///< and kW (W1) and kW0 (W0), m each
};

/// The slot of every (device, type, microbatch) task, stored flat: device-major, then the
/// type rows F0, F1, B1, B0 (m each), then 2m weight gradients (one row of 2m, or two of m).
/// Every row is ascending: a task never precedes the previous microbatch's of its row.
class SlotTable {
 public:
  SlotTable(std::uint32_t devices, std::uint32_t microbatches);

  [[nodiscard]] std::uint32_t devices() const { return devices_; }
  [[nodiscard]] std::uint32_t microbatches() const { return microbatches_; }
  [[nodiscard]] VRows rows() const { return rows_; }
  void set_rows(VRows rows) { rows_ = rows; }
  /// Rows in use: 4, 5 or 6.
  [[nodiscard]] std::uint8_t types() const;
  /// Tasks of row `type` per device: m, or 2m for the fused kW row.
  [[nodiscard]] std::uint32_t row_length(std::uint8_t type) const;
  /// Tasks per device in the rows in use.
  [[nodiscard]] std::size_t tasks_per_device() const;

  [[nodiscard]] Slot& at(std::uint32_t d, std::uint8_t type, std::uint32_t mb) {
    return slots_[offset(d, type) + mb];
  }
  [[nodiscard]] Slot at(std::uint32_t d, std::uint8_t type, std::uint32_t mb) const {
    return slots_[offset(d, type) + mb];
  }
  [[nodiscard]] std::span<Slot> row(std::uint32_t d, std::uint8_t type) {
    return {slots_.data() + offset(d, type), row_length(type)};
  }
  [[nodiscard]] std::span<const Slot> row(std::uint32_t d, std::uint8_t type) const {
    return {slots_.data() + offset(d, type), row_length(type)};
  }

 private:
  [[nodiscard]] std::size_t offset(std::uint32_t d, std::uint8_t type) const {
    return (std::size_t{d} * 6 + type) * microbatches_;
  }

  std::uint32_t devices_;
  std::uint32_t microbatches_;
  VRows rows_ = VRows::kBlock;
  BigVector<Slot> slots_;
};

/// A task of the construction at its slot.
struct VTask {
  Slot slot;
  std::uint32_t mb;
  std::uint8_t type;
};

/// Device `d`'s tasks of the rows in use, in slot order (a merge of its ascending rows);
/// `out` holds slots.tasks_per_device().
void merge_rows(const SlotTable& slots, std::uint32_t d, std::span<VTask> out);

/// The tasks in the two orders the steps walk, in buffers reused from step to step (first
/// touch of fresh memory is a large part of planning a million tasks).
class SlotOrder {
 public:
  /// Orders the tasks of the rows in use.
  void build(const SlotTable& slots);
  /// Device d's tasks in slot order.
  [[nodiscard]] std::span<VTask> device(std::uint32_t d) {
    return {by_device_.data() + std::size_t{d} * per_device_, per_device_};
  }
  [[nodiscard]] std::span<const VTask> device(std::uint32_t d) const {
    return {by_device_.data() + std::size_t{d} * per_device_, per_device_};
  }
  /// The device of every task, by slot and device by device within a slot: the order in
  /// which the reference walks its (slot, device) table. Each device's tasks come in its
  /// slot order, so a cursor per device names the task.
  [[nodiscard]] std::span<const std::uint32_t> slot_major() const { return by_slot_; }

 private:
  std::size_t per_device_ = 0;
  BigVector<VTask> by_device_;
  BigVector<std::uint32_t> by_slot_;
  BigVector<std::uint32_t> slot_start_;
};

/// Puts weight gradients into each device's free slots after their backwards, oldest first
/// (one list, or W1's before W0's when `split`), the rest after the device's last task.
void put_weight_gradients(SlotTable& slots, bool split);

/// Re-times every task: runs each device's tasks in slot order with unit costs and no
/// latency, as early as their dependences allow.
void run_eagerly(SlotTable& slots, SlotOrder& order);

/// One squeeze sweep over all devices (v_squeeze.cpp); `explicit_w`: the weight gradients
/// (row kW) are tasks of the sweep and the warm-up moves too.
void squeeze(SlotTable& slots, bool explicit_w, SlotOrder& order);

}  // namespace perflow::parallel::detail
