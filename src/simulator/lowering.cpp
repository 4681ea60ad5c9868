#include "perflow/simulator/lowering.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "perflow/simulator/communication.hpp"

namespace perflow::simulator {

EventGraph lower_communication(const EventGraph& graph, const SimulationOptions& options) {
  const CommunicationCost comm(graph, options);
  const auto n = static_cast<std::uint32_t>(graph.task_count());

  // Each producer's position in its lane's program: the issue order of its transfers.
  std::vector<std::uint32_t> position(n, 0);
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    const auto program = graph.program(LaneId{l});
    for (std::uint32_t i = 0; i < program.size(); ++i) position[program[i].value] = i;
  }

  // One transfer per (producer, receiving device), with the consumers it feeds there.
  struct Transfer {
    TaskId producer;
    DeviceId to;
    std::vector<TaskId> consumers;
  };
  std::vector<Transfer> transfers;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> transfer_of;
  for (std::uint32_t u = 0; u < n; ++u) {
    const TaskId from{u};
    if (graph.kind(from) == TaskKind::Send) continue;
    for (const Adjacent& s : graph.successors(from)) {
      if (s.kind() != EdgeKind::Data || graph.device(s.task()) == graph.device(from)) continue;
      const DeviceId to = graph.device(s.task());
      const auto [it, inserted] = transfer_of.try_emplace({u, to.value}, transfers.size());
      if (inserted) transfers.push_back({from, to, {}});
      transfers[it->second].consumers.push_back(s.task());
    }
  }

  // Rebuild without the cut dependences, then add links and transfers.
  EventGraphBuilder builder = EventGraphBuilder::extend(graph, [&](TaskId from, TaskId to) {
    return graph.device(from) == graph.device(to) || graph.kind(from) == TaskKind::Send;
  });

  std::map<std::pair<std::uint32_t, std::uint32_t>, LaneId> link_lane;
  for (const Transfer& t : transfers) {
    link_lane.try_emplace({graph.device(t.producer).value, t.to.value}, LaneId{});
  }
  for (auto& [link, lane] : link_lane) {
    lane =
        builder.add_lane(DeviceId{link.first}, fmt::format("send {}>{}", link.first, link.second));
  }

  // Per link, transfers in issue order: by the producer's program position, then task id.
  std::vector<std::size_t> order(transfers.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const Transfer& a = transfers[x];
    const Transfer& b = transfers[y];
    return std::tuple(position[a.producer.value], a.producer.value, a.to.value) <
           std::tuple(position[b.producer.value], b.producer.value, b.to.value);
  });
  for (const std::size_t i : order) {
    const Transfer& t = transfers[i];
    const DeviceId from = graph.device(t.producer);
    const TaskSpec send{TaskKind::Send,
                        from,
                        graph.stage(t.producer),
                        graph.microbatch(t.producer),
                        graph.chunk(t.producer),
                        comm.bytes_time(t.producer, t.consumers.front()),
                        0.0,
                        link_lane.at({from.value, t.to.value})};
    const TaskId id = builder.add_task(send);
    builder.add_dependence(t.producer, id);
    for (const TaskId consumer : t.consumers) builder.add_dependence(id, consumer);
    builder.append_to_program(id);
  }
  return std::move(builder).freeze();
}

}  // namespace perflow::simulator
