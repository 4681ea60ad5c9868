#pragma once

#include <cstdint>
#include <optional>
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
/// Program order: start order on each device; no data dependences. With `iteration`, only
/// the tasks of that ProfilerStep (its first task starts at 0): one measured step, to set
/// beside one predicted step.
MeasuredTimeline measured_timeline(const ExtractedCosts& costs,
                                   std::optional<std::int64_t> iteration = std::nullopt);

/// Where one profile's time went during one measured step: a partition of the step's
/// window, so the parts add up to `window` exactly. At each instant the first that holds
/// names it: a compute op of a measured task runs (task_compute: what the costs model),
/// another compute op runs (other_compute: optimizer, data movement outside the markers),
/// a communication kernel runs (communication: collectives and point-to-point, including
/// their waits for peers), the instant lies in some task's GPU span (idle_in_tasks: the
/// gaps between a task's kernels, where the GPU waits for the host to launch), or none of
/// these (host_gaps: between tasks, nothing on the GPU).
struct StepBreakdown {
  std::uint32_t stage = 0;
  std::uint32_t profile = 0;    ///< index into ExtractedCosts::profiles
  std::int64_t iteration = -1;  ///< the ProfilerStep; -1: none
  TimeNs window = 0;            ///< the measured step (as measured_steps defines it)
  TimeNs task_compute = 0;
  TimeNs other_compute = 0;
  TimeNs communication = 0;
  TimeNs idle_in_tasks = 0;
  TimeNs host_gaps = 0;
};

/// One breakdown per stage (ascending; stages without a profile are left out), of the
/// steady iteration whose step time is the lower median (the first such), on the stage's
/// first profile. The window is that iteration's step over all profiles: from the first
/// task's first op to the last task's last op.
std::vector<StepBreakdown> measured_breakdown(const ExtractedCosts& costs);

}  // namespace perflow::reader
