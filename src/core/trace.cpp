#include "perflow/core/trace.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "perflow/core/event_graph.hpp"

namespace perflow {

void check_trace(const EventGraph& graph, const Trace& trace) {
  const std::size_t n = graph.task_count();
  if (trace.start.size() != n || trace.finish.size() != n) {
    throw std::invalid_argument(
        fmt::format("trace has {} starts and {} finishes for a graph of {} tasks",
                    trace.start.size(), trace.finish.size(), n));
  }
  if (trace.lane_count() > graph.lane_count()) {
    throw std::invalid_argument(fmt::format("trace has {} lanes, but the graph has {}",
                                            trace.lane_count(), graph.lane_count()));
  }
  for (std::size_t l = 0; l < trace.lane_count(); ++l) {
    for (const TaskId t : trace.lane_events[l]) {
      if (t.value >= n) {
        throw std::invalid_argument(fmt::format(
            "trace lists task id {} on lane {}, but the graph has {} tasks", t.value, l, n));
      }
    }
  }
}

}  // namespace perflow
