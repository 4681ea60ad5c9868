#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "detail/transfer_task.hpp"
#include "perflow/core/error.hpp"
#include "perflow/simulator/communication.hpp"
#include "perflow/simulator/lowering.hpp"

namespace perflow::simulator {
namespace {

bool is_transfer(TaskKind kind) { return kind == TaskKind::Send || kind == TaskKind::Recv; }

}  // namespace

EventGraph lower_blocking_transfers(const EventGraph& graph, const SimulationOptions& options) {
  const auto n = static_cast<std::uint32_t>(graph.task_count());
  if (n > 0 && !graph.has_program_order()) {
    throw ScheduleError("blocking transfers need a graph with program order");
  }
  for (std::uint32_t t = 0; t < n; ++t) {
    if (is_transfer(graph.kind(TaskId{t}))) {
      throw ScheduleError("blocking transfers: the graph's communication is already lowered");
    }
  }
  const CommunicationCost comm(graph, options);
  // Each task's position in its lane's program, to find a producer's first consumer on a
  // device.
  std::vector<std::uint32_t> position(n, 0);
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    const auto program = graph.program(LaneId{l});
    for (std::uint32_t i = 0; i < program.size(); ++i) position[program[i].value] = i;
  }

  // One transfer per (producer, receiving device).
  struct Transfer {
    TaskId from;
    TaskId first_consumer;  // the earliest in the receiving lane's program
    TimeNs time = 0;
    TaskId send;
    TaskId recv;
  };
  std::vector<Transfer> transfers;
  std::vector<TaskId> consumers;
  for (std::uint32_t u = 0; u < n; ++u) {
    consumers.clear();
    for (const Adjacent& s : graph.successors(TaskId{u})) {
      if (!moves_data(graph, TaskId{u}, s)) continue;
      // A RECV waits on the consumer's compute lane, in that lane's program order.
      if (graph.lane(s.task()).value >= graph.device_count()) {
        throw ScheduleError(fmt::format(
            "blocking transfers: {} on device {} receives data on lane '{}'; a blocking transfer "
            "needs its consumer on a compute lane",
            graph.label(s.task()), graph.device(s.task()).value,
            graph.lane_info(graph.lane(s.task())).name));
      }
      consumers.push_back(s.task());
    }
    std::sort(consumers.begin(), consumers.end(), [&](TaskId x, TaskId y) {
      const auto dx = graph.device(x).value;
      const auto dy = graph.device(y).value;
      return dx != dy ? dx < dy : position[x.value] < position[y.value];
    });
    for (std::size_t i = 0; i < consumers.size(); ++i) {
      if (i > 0 && graph.device(consumers[i]) == graph.device(consumers[i - 1])) continue;
      transfers.push_back({TaskId{u}, consumers[i], comm(TaskId{u}, consumers[i]), {}, {}});
    }
  }

  EventGraphBuilder builder = EventGraphBuilder::with_lanes_of(graph);
  builder.reserve(n + 2 * transfers.size(), graph.edge_count() + 2 * transfers.size());
  for (std::uint32_t t = 0; t < n; ++t) (void)builder.add_task(graph.spec(TaskId{t}));
  // Per task: the transfers it sends (after it) and receives (before it), by index.
  std::vector<std::vector<std::uint32_t>> sends_after(n), receives_before(n);
  for (std::uint32_t i = 0; i < transfers.size(); ++i) {
    Transfer& x = transfers[i];
    const auto compute_lane = [&](TaskId t) { return LaneId{graph.device(t).value}; };
    x.send = builder.add_task(
        detail::transfer_task(graph, x.from, TaskKind::Send, x.time, compute_lane(x.from)));
    x.recv = builder.add_task(detail::transfer_task(graph, x.first_consumer, TaskKind::Recv, x.time,
                                                    compute_lane(x.first_consumer)));
    sends_after[x.from.value].push_back(i);
    receives_before[x.first_consumer.value].push_back(i);
  }

  for (std::uint32_t u = 0; u < n; ++u) {
    for (const Adjacent& s : graph.successors(TaskId{u})) {
      if (s.kind() != EdgeKind::Data) continue;
      if (!moves_data(graph, TaskId{u}, s)) {
        builder.add_dependence(TaskId{u}, s.task());
        continue;
      }
      // Through the receiving device's RECV of u's result.
      const auto x = std::find_if(sends_after[u].begin(), sends_after[u].end(), [&](auto i) {
        return graph.device(transfers[i].first_consumer) == graph.device(s.task());
      });
      builder.add_dependence(transfers[*x].recv, s.task());
    }
  }
  for (const Transfer& x : transfers) builder.add_dependence(x.from, x.recv);

  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    for (const TaskId t : graph.program(LaneId{l})) {
      for (const std::uint32_t i : receives_before[t.value])
        builder.append_to_program(transfers[i].recv);
      builder.append_to_program(t);
      for (const std::uint32_t i : sends_after[t.value])
        builder.append_to_program(transfers[i].send);
    }
  }
  return std::move(builder).freeze();
}

}  // namespace perflow::simulator
