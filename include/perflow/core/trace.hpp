#pragma once

#include <span>
#include <vector>

#include "perflow/core/huge_page_allocator.hpp"
#include "perflow/core/id.hpp"
#include "perflow/core/time.hpp"

namespace perflow {

/// What ran when: start and finish of every task (indexed by TaskId) and, per device, the
/// tasks in the order they executed.
struct Trace {
  BigVector<TimeNs> start;
  BigVector<TimeNs> finish;
  std::vector<std::vector<TaskId>> device_events;

  [[nodiscard]] std::size_t device_count() const { return device_events.size(); }
  [[nodiscard]] std::span<const TaskId> events(DeviceId d) const { return device_events[d.value]; }
  [[nodiscard]] TimeNs start_of(TaskId t) const { return start[t.value]; }
  [[nodiscard]] TimeNs finish_of(TaskId t) const { return finish[t.value]; }
};

}  // namespace perflow
