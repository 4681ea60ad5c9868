#pragma once

#include <span>
#include <vector>

#include "perflow/core/huge_page_allocator.hpp"
#include "perflow/core/id.hpp"
#include "perflow/core/time.hpp"

namespace perflow {

class EventGraph;

/// What ran when: start and finish of every task (indexed by TaskId) and, per lane, the
/// tasks in the order they executed. Lane d < devices is device d's compute lane (see
/// LaneInfo), so events(DeviceId) is what the device computed.
struct Trace {
  BigVector<TimeNs> start;
  BigVector<TimeNs> finish;
  std::vector<std::vector<TaskId>> lane_events;

  [[nodiscard]] std::size_t lane_count() const { return lane_events.size(); }
  [[nodiscard]] std::span<const TaskId> events(LaneId l) const { return lane_events[l.value]; }
  [[nodiscard]] std::span<const TaskId> events(DeviceId d) const { return lane_events[d.value]; }
  [[nodiscard]] TimeNs start_of(TaskId t) const { return start[t.value]; }
  [[nodiscard]] TimeNs finish_of(TaskId t) const { return finish[t.value]; }
};

/// Throws std::invalid_argument unless `trace` is a trace of `graph`: a start and a finish
/// per task, no more lanes than the graph, every listed task one of the graph's. Writers
/// call it before writing anything.
void check_trace(const EventGraph& graph, const Trace& trace);

}  // namespace perflow
