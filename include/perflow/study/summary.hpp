#pragma once

#include <string>

#include "perflow/core/event_graph.hpp"
#include "perflow/simulator/metrics.hpp"
#include "perflow/study/config.hpp"

namespace perflow::study {

/// One line naming the run: "1f1b, 4 stages x 8 microbatches x 1 chunk (64 tasks)".
std::string describe_run(const Config& config, const EventGraph& graph);

/// The human summary `perflow simulate` prints: makespan, bubble ratio, and a table of
/// per-device busy time, bubble and peak memory (with recomputation or offloading, also the
/// peak without them, the R time and the copy time).
std::string format_summary(const Config& config, const EventGraph& graph,
                           const simulator::SimulationResult& result);

}  // namespace perflow::study
