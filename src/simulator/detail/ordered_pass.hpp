#pragma once

#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/simulator/metrics.hpp"
#include "perflow/simulator/options.hpp"

namespace perflow::simulator::detail {

/// What the metrics need from every task, summed while the simulation visits it (each
/// lane's tasks are visited in program order), so they need not walk the graph again.
struct PassTotals {
  TimeNs makespan = 0;
  /// The longest path through data dependences alone.
  TimeNs dependency_bound = 0;
  /// Per device: tasks, busy, communication, first start, last finish, peak memory.
  std::vector<DeviceMetrics> devices;
};

/// The ordered simulation, with the totals of the same pass.
Trace simulate_ordered(const EventGraph& graph, const SimulationOptions& options,
                       PassTotals& totals);

/// Derives the metrics of `trace` from per-task totals; the critical path is all that is
/// left to find.
Metrics compute_metrics(const EventGraph& graph, const Trace& trace,
                        const SimulationOptions& options, PassTotals totals);

}  // namespace perflow::simulator::detail
