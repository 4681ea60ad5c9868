#pragma once

#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"

namespace perflow::simulator {

/// From `time` on (until the next point), the memory is `value`.
struct MemoryPoint {
  TimeNs time = 0;
  double value = 0;

  friend bool operator==(const MemoryPoint&, const MemoryPoint&) = default;
};

/// Activation memory of `device` over time: the running sum of the memory deltas of the
/// tasks on its lanes (its compute lane, and its host link where activations are copied out
/// and back) in execution order, an allocation counted from its task's start and a free from
/// its finish, so a box's memory is held while it runs. The first point is at time 0 (value
/// 0 unless something allocates then); then one point per instant at which the value
/// changes, holding the value after everything at that instant. The maximum equals
/// peak_memory unless zero-length tasks allocate and free at one instant (a spike of no
/// width, which no step chart shows).
std::vector<MemoryPoint> activation_memory(const EventGraph& graph, const Trace& trace,
                                           DeviceId device);

}  // namespace perflow::simulator
