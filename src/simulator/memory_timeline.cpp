#include "perflow/simulator/memory_timeline.hpp"

#include <algorithm>

namespace perflow::simulator {

std::vector<MemoryPoint> activation_memory(const EventGraph& graph, const Trace& trace,
                                           DeviceId device) {
  std::vector<MemoryPoint> points{{0, 0.0}};
  if (device.value >= trace.lane_count()) return points;
  // Each task's change at its start (allocation) or finish (free), in execution order. A
  // lane runs one task at a time, so one lane's times only grow; a stable sort merges the
  // host link's copies in (and keeps a trace assembled by hand, with overlaps, in order).
  struct Change {
    TimeNs time;
    double delta;
  };
  std::vector<Change> changes;
  const auto add_lane = [&](LaneId lane) {
    for (const TaskId t : trace.events(lane)) {
      const double delta = graph.memory_delta(t);
      if (delta > 0) changes.push_back({trace.start_of(t), delta});
      if (delta < 0) changes.push_back({trace.finish_of(t), delta});
    }
  };
  const auto earlier = [](const Change& a, const Change& b) { return a.time < b.time; };
  std::vector<std::size_t> lane_end;  // where each lane's changes end
  bool lanes_sorted = true;
  const auto add = [&](LaneId lane) {
    const std::size_t begin = changes.size();
    add_lane(lane);
    lanes_sorted =
        lanes_sorted && std::is_sorted(changes.begin() + static_cast<std::ptrdiff_t>(begin),
                                       changes.end(), earlier);
    lane_end.push_back(changes.size());
  };
  changes.reserve(trace.events(device).size());
  add(LaneId{device.value});
  for (std::uint32_t l = graph.device_count(); l < trace.lane_count() && l < graph.lane_count();
       ++l) {
    if (graph.lane_info(LaneId{l}).device == device) add(LaneId{l});
  }
  if (lanes_sorted) {
    // Each lane in time order: merging them one after the other is the stable sort, linear.
    for (std::size_t i = 1; i < lane_end.size(); ++i) {
      std::inplace_merge(changes.begin(),
                         changes.begin() + static_cast<std::ptrdiff_t>(lane_end[i - 1]),
                         changes.begin() + static_cast<std::ptrdiff_t>(lane_end[i]), earlier);
    }
  } else {
    std::stable_sort(changes.begin(), changes.end(), earlier);
  }
  double value = 0;
  for (const Change& change : changes) {
    value += change.delta;
    if (points.back().time == change.time) {
      points.back().value = value;
    } else if (value != points.back().value) {
      points.push_back({change.time, value});
    }
  }
  // Same-instant changes that cancel leave a point equal to its predecessor: drop it.
  std::vector<MemoryPoint> steps;
  steps.reserve(points.size());
  for (const MemoryPoint& p : points) {
    if (steps.empty() || p.value != steps.back().value) steps.push_back(p);
  }
  return steps;
}

}  // namespace perflow::simulator
