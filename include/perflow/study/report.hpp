#pragma once

#include <string>

#include "perflow/core/event_graph.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

namespace perflow::study {

/// The `--report` document (a contract: see docs/report.md). Times are integer
/// nanoseconds in `*_ns` fields; `order` lists each device's task labels as executed.
///
/// Written value by value (no JSON tree: a million tasks would cost a million nodes), with
/// the bytes of nlohmann::json::dump(1) of the same document (keys sorted, one-space indent,
/// nlohmann's number formats), and a final newline.
std::string render_report(const Config& config, const EventGraph& graph,
                          const simulator::SimulationResult& result);

}  // namespace perflow::study
