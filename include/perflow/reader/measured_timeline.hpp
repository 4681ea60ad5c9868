#pragma once

#include <string>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/reader/cost_extraction.hpp"

namespace perflow::reader {

/// A measured execution as a task graph and a trace, so the simulator's metrics and the
/// visualizer apply to it unchanged.
struct MeasuredTimeline {
  EventGraph graph;
  Trace trace;
  /// Per device: "stage S, rank R" (the timeline's device labels).
  std::vector<std::string> device_labels;
  /// Per device: the profile it shows (index into ExtractedCosts::profiles).
  std::vector<std::uint32_t> profile_of_device;
  TimeNs origin = 0;  ///< the trace clock's time of 0: the earliest task's first op
};

/// One device per profile, ordered by (stage, rank, position), so that with one profile per
/// stage device d is stage d. Each measured task (warm-up included) becomes a task of its
/// kind (a full backward is BW) spanning its first op's start to its last op's end, relative
/// to the earliest task over all profiles (ranks' clocks are not aligned: expect skew).
/// Program order: start order on each device; no data dependences.
MeasuredTimeline measured_timeline(const ExtractedCosts& costs);

}  // namespace perflow::reader
