#include "perflow/simulator/simulate.hpp"

#include <algorithm>

#include "perflow/core/error.hpp"
#include "perflow/simulator/communication.hpp"

namespace perflow::simulator {

Trace simulate_ordered(const EventGraph& graph, const SimulationOptions& options) {
  const std::size_t n = graph.task_count();
  if (n > 0 && !graph.has_program_order()) {
    throw ScheduleError(
        "ordered simulation needs every task in its device's program order; this graph has "
        "none (simulate it in greedy mode)");
  }
  Trace trace;
  trace.start.resize(n);
  trace.finish.resize(n);
  const std::span<const DeviceId> device = graph.devices();
  const std::span<const TimeNs> duration = graph.durations();
  TimeNs* const start = trace.start.data();
  TimeNs* const finish = trace.finish.data();
  const CommunicationCost comm(graph, options);
  check_time_range(graph, comm);

  // Program order is encoded as `order` edges, so "lane free" is one more predecessor.
  for (const TaskId t : graph.topological_order()) {
    TimeNs ready = 0;
    const DeviceId here = device[t.value];
    for (const Adjacent& p : graph.predecessors(t)) {
      TimeNs arrival = finish[p.task().value];
      if (p.kind() == EdgeKind::Data && device[p.task().value] != here) {
        arrival += comm(p.task(), t);
      }
      ready = std::max(ready, arrival);
    }
    start[t.value] = ready;
    finish[t.value] = ready + duration[t.value];
  }

  trace.lane_events.resize(graph.lane_count());
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    const auto program = graph.program(LaneId{l});
    trace.lane_events[l].assign(program.begin(), program.end());
  }
  return trace;
}

std::string_view to_string(SimulationMode mode) {
  return mode == SimulationMode::Greedy ? "greedy" : "ordered";
}

std::optional<SimulationMode> parse_simulation_mode(std::string_view text) {
  if (text == "ordered") return SimulationMode::Ordered;
  if (text == "greedy") return SimulationMode::Greedy;
  return std::nullopt;
}

SimulationResult simulate(const EventGraph& graph, const SimulationOptions& options) {
  SimulationResult result;
  result.trace = options.mode == SimulationMode::Greedy ? simulate_greedy(graph, options)
                                                        : simulate_ordered(graph, options);
  result.metrics = compute_metrics(graph, result.trace, options);
  return result;
}

}  // namespace perflow::simulator
