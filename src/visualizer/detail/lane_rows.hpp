#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"

namespace perflow::visualizer::detail {

/// One row of a timeline: a lane, placed with its device's other lanes.
struct LaneRow {
  LaneId lane;
  bool compute = true;  ///< a device's compute lane (named by the device), else a stream
  double top = 0;       ///< relative to the first row's top
  double height = 0;
  std::string label;     ///< "dev 3", or the stream's name ("send 3>4")
  std::string sublabel;  ///< compute rows: the device's label (e.g. "H100"); may be empty
};

/// Communication rows are this fraction of a compute row: the eye goes to the compute.
inline constexpr double kStreamRowFraction = 0.65;

/// Rows in device order, each device's compute lane followed by its communication lanes in
/// lane order; lanes the trace has beyond the graph's come last, named by their index.
std::vector<LaneRow> plan_rows(const EventGraph& graph, const Trace& trace,
                               std::span<const std::string> device_labels, double row_height);

}  // namespace perflow::visualizer::detail
