#pragma once

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/simulator/metrics.hpp"
#include "perflow/simulator/options.hpp"

namespace perflow::simulator::detail {

/// The ordered simulation, which also finds the dependency bound (the longest path through
/// data dependences alone) in the same pass over the predecessors, so the metrics need not
/// walk the graph a second time.
Trace simulate_ordered(const EventGraph& graph, const SimulationOptions& options,
                       TimeNs& dependency_bound);

/// compute_metrics with the dependency bound already known.
Metrics compute_metrics(const EventGraph& graph, const Trace& trace,
                        const SimulationOptions& options, TimeNs dependency_bound);

}  // namespace perflow::simulator::detail
