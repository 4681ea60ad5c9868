#pragma once

#include <nlohmann/json.hpp>

#include "perflow/cli/config.hpp"
#include "perflow/core/event_graph.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::cli {

/// The `--report` document (a contract: see README "Report format"). Times are integer
/// nanoseconds in `*_ns` fields; `order` lists each device's task labels as executed.
nlohmann::json make_report(const Config& config, const EventGraph& graph,
                           const simulator::SimulationResult& result);

}  // namespace perflow::cli
