#include "detail/lane_rows.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace perflow::visualizer::detail {

std::vector<LaneRow> plan_rows(const EventGraph& graph, const Trace& trace,
                               std::span<const std::string> device_labels, double row_height) {
  const auto graph_lanes = graph.lane_count();
  const auto lanes =
      std::max<std::uint32_t>(graph_lanes, static_cast<std::uint32_t>(trace.lane_count()));
  std::vector<std::vector<std::uint32_t>> streams(graph.device_count());
  for (std::uint32_t l = graph.device_count(); l < graph_lanes; ++l) {
    streams[graph.lane_info(LaneId{l}).device.value].push_back(l);
  }
  std::vector<LaneRow> rows;
  rows.reserve(lanes);
  double top = 0;
  const auto add = [&](std::uint32_t lane, bool compute, std::string label, std::string sub) {
    const double height = compute ? row_height : row_height * kStreamRowFraction;
    rows.push_back({LaneId{lane}, compute, top, height, std::move(label), std::move(sub)});
    top += height;
  };
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    add(d, true, fmt::format("dev {}", d), d < device_labels.size() ? device_labels[d] : "");
    for (const std::uint32_t l : streams[d]) add(l, false, graph.lane_info(LaneId{l}).name, "");
  }
  for (std::uint32_t l = graph.device_count(); l < lanes; ++l) {
    if (l >= graph_lanes) add(l, true, fmt::format("dev {}", l), "");
  }
  return rows;
}

}  // namespace perflow::visualizer::detail
