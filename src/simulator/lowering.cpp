#include "perflow/simulator/lowering.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "detail/transfer_task.hpp"
#include "perflow/core/detail/graph_extension.hpp"
#include "perflow/simulator/communication.hpp"

namespace perflow::simulator {

EventGraph lower_communication(const EventGraph& graph, const SimulationOptions& options) {
  return lower_communication(EventGraph(graph), options);
}

EventGraph lower_communication(EventGraph&& base, const SimulationOptions& options) {
  perflow::detail::GraphExtension builder(std::move(base));
  const EventGraph& graph = builder.graph();
  const CommunicationCost comm(graph, options);
  const auto n = static_cast<std::uint32_t>(graph.task_count());

  // The directed links in use, sorted: their lanes are created in (from, to) order.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> links;
  std::size_t crossing = 0;  // at most one SEND each
  for (std::uint32_t u = 0; u < n; ++u) {
    for (const Adjacent& s : graph.successors(TaskId{u})) {
      if (!moves_data(graph, TaskId{u}, s)) continue;
      ++crossing;
      const std::pair link{graph.device(TaskId{u}).value, graph.device(s.task()).value};
      if (links.empty() || links.back() != link) links.push_back(link);  // runs repeat
    }
  }
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());

  // Room for every SEND and its edges at once: growing 1M-task columns by doubling costs
  // more in page faults than the whole simulation.
  builder.reserve(crossing, 2 * crossing);
  std::vector<LaneId> link_lane;
  link_lane.reserve(links.size());
  for (const auto& [a, b] : links) {
    link_lane.push_back(builder.add_lane(DeviceId{a}, fmt::format("send {}>{}", a, b)));
  }
  const auto lane_of = [&](DeviceId a, DeviceId b) {
    const auto it = std::lower_bound(links.begin(), links.end(), std::pair{a.value, b.value});
    return link_lane[static_cast<std::size_t>(it - links.begin())];
  };

  // Producers in program order (lane by lane), so each link lane gets its transfers in the
  // order its device issues them; one SEND per (producer, receiving device).
  std::vector<TaskId> consumers;
  const auto lower = [&](TaskId u) {
    consumers.clear();
    for (const Adjacent& s : graph.successors(u)) {
      if (moves_data(graph, u, s)) consumers.push_back(s.task());
    }
    if (consumers.empty()) return;
    std::stable_sort(consumers.begin(), consumers.end(),
                     [&](TaskId x, TaskId y) { return graph.device(x) < graph.device(y); });
    const DeviceId from = graph.device(u);
    for (std::size_t i = 0; i < consumers.size();) {
      const DeviceId to = graph.device(consumers[i]);
      const TaskId send = builder.add_task(detail::transfer_task(
          graph, u, TaskKind::Send, comm.bytes_time(u, consumers[i]), lane_of(from, to)));
      builder.add_dependence(u, send);
      for (; i < consumers.size() && graph.device(consumers[i]) == to; ++i) {
        builder.add_dependence(send, consumers[i]);
      }
      if (graph.has_program_order()) builder.append_to_program(send);
    }
  };
  if (graph.has_program_order()) {
    for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
      for (const TaskId u : graph.program(LaneId{l})) lower(u);
    }
  } else {
    for (std::uint32_t u = 0; u < n; ++u) lower(TaskId{u});
  }
  return std::move(builder).freeze([&](TaskId u, TaskId v, auto&& emit) {
    if (!moves_data(graph, u, Adjacent(v, EdgeKind::Data))) emit(v);
  });
}

}  // namespace perflow::simulator
