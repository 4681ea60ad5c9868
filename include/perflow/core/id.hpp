#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>

#include "perflow/core/huge_page_allocator.hpp"

namespace perflow {

/// A strongly typed index: a TaskId cannot be passed where a DeviceId is expected.
template <class Tag, class Rep = std::uint32_t>
struct Id {
  using rep_type = Rep;
  static constexpr Rep kInvalid = std::numeric_limits<Rep>::max();

  Rep value = kInvalid;

  constexpr Id() = default;
  constexpr explicit Id(Rep v) : value(v) {}

  [[nodiscard]] constexpr bool valid() const { return value != kInvalid; }
  [[nodiscard]] constexpr Rep get() const { return value; }

  friend constexpr auto operator<=>(Id, Id) = default;
};

struct TaskTag;
struct DeviceTag;
struct StageTag;
struct LaneTag;

using TaskId = Id<TaskTag>;
using DeviceId = Id<DeviceTag>;
using StageId = Id<StageTag>;
/// A sequential execution resource of a device: its compute stream or a communication stream.
using LaneId = Id<LaneTag>;
// Microbatches and chunks stay plain integers (no MicrobatchId / ChunkId): they index cost
// tables and count loops in every schedule, and a task's (stage, microbatch, chunk) is read
// together as its place.

/// Big arrays of ids (task columns, programs) are sized, then every element written.
template <class Tag, class Rep>
struct GrowsUnwritten<Id<Tag, Rep>> : std::true_type {};

}  // namespace perflow

template <class Tag, class Rep>
struct std::hash<perflow::Id<Tag, Rep>> {
  std::size_t operator()(perflow::Id<Tag, Rep> id) const noexcept {
    return std::hash<Rep>{}(id.value);
  }
};
