#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/id.hpp"
#include "perflow/core/task.hpp"

namespace perflow::trace_op {

/// A task's identity independent of any one graph's numbering: the same pipeline work in
/// two graphs built from the same schedule (e.g. one with H100 costs, one with A100 costs)
/// has the same key.
struct TaskKey {
  TaskKind kind = TaskKind::F;
  std::uint32_t microbatch = 0;
  std::uint32_t chunk = 0;
  StageId stage{0};

  friend auto operator<=>(const TaskKey&, const TaskKey&) = default;
};

/// A data dependence that `filter` cut: one end is in the part, the other is not.
struct Boundary {
  TaskKey from;
  TaskKey to;

  friend auto operator<=>(const Boundary&, const Boundary&) = default;
};

/// A piece of a graph: the kept stages with their tasks, program orders and the dependences
/// among them, plus the dependences that left the kept set (sorted, no duplicates).
struct GraphPart {
  EventGraph graph;
  std::vector<StageId> stages;  ///< sorted
  std::vector<Boundary> open;
};

/// Keeps the tasks of `stages` (with their devices, costs, memory deltas and program order)
/// and the dependences among them; the dependences that cross out of the set become `open`
/// boundaries. Throws ScheduleError if `stages` is empty, repeats a stage, or names a stage
/// the graph does not have.
GraphPart filter(const EventGraph& graph, std::span<const StageId> stages);

/// The union of parts: every task of every part (device ids kept; the device count is the
/// largest), program orders kept, dependences within parts kept, and each open boundary
/// connected to the matching task of another part. `extra` adds dependences by key (an
/// explicit edge list, as the prototype needed). Throws ScheduleError, naming the stage or
/// task, if two parts hold the same stage or the same device, if they disagree on sizes
/// (microbatches, chunks), or if an open boundary matches no task in any part; CycleError if
/// the union deadlocks.
EventGraph merge(std::span<const GraphPart> parts, std::span<const Boundary> extra = {});

/// Moves tasks to other devices: task on device d goes to device_of[d]. Devices may be
/// merged (programs are then concatenated in the order of the old device ids). Throws
/// ScheduleError if device_of has the wrong length or names an invalid device, CycleError if
/// the concatenated programs deadlock (e.g. two stages of one pipeline on one device, the
/// first's backward waiting on the second's).
EventGraph remap(const EventGraph& graph, std::span<const DeviceId> device_of);

/// Multiplies durations for a quick what-if: by kind (F, B, W, BW) and, optionally, by stage
/// (factor 1 where not given). Durations are rounded to the nearest nanosecond.
struct ScaleFactors {
  /// Indexed by TaskKind; every kind starts at 1 (a new kind cannot be left at 0).
  std::array<double, kTaskKindCount> by_kind = [] {
    std::array<double, kTaskKindCount> ones{};
    ones.fill(1.0);
    return ones;
  }();
  std::vector<double> by_stage;  ///< empty, or one factor per stage
};
EventGraph scale(const EventGraph& graph, const ScaleFactors& factors);

}  // namespace perflow::trace_op
