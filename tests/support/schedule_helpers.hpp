#pragma once

// Helpers shared by the schedule and simulator tests.

#include <string>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"

namespace perflow::testing {

/// A device's executed task labels joined by spaces, as the fixtures write orders.
inline std::string order_string(const EventGraph& graph, const Trace& trace, std::uint32_t d) {
  std::string out;
  for (const TaskId t : trace.events(DeviceId{d})) {
    if (!out.empty()) out += ' ';
    out += graph.label(t);
  }
  return out;
}

}  // namespace perflow::testing
