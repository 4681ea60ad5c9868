#pragma once

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/simulator/metrics.hpp"
#include "perflow/simulator/options.hpp"

namespace perflow::simulator {

struct SimulationResult {
  Trace trace;
  Metrics metrics;
};

/// Ordered mode: each device runs its program in order; a task starts at the latest of its
/// device becoming free and every predecessor's finish plus that edge's communication. One
/// pass in topological order, O(tasks + edges). Throws ScheduleError if the graph has no
/// program order.
Trace simulate_ordered(const EventGraph& graph, const SimulationOptions& options = {});

/// Greedy mode: program order is ignored; a free device starts its ready task of highest
/// priority (backward, then forward, then weight gradient; then lower microbatch; see
/// greedy.cpp). Works on graphs with or without program order. O((V + E) log V).
Trace simulate_greedy(const EventGraph& graph, const SimulationOptions& options = {});

/// Runs the mode in `options`, then compute_metrics.
SimulationResult simulate(const EventGraph& graph, const SimulationOptions& options = {});

}  // namespace perflow::simulator
