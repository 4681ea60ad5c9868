#pragma once

#include "perflow/core/event_graph.hpp"
#include "perflow/study/config.hpp"
#include "perflow/visualizer/timeline.hpp"

namespace perflow::cli::detail {

/// How `perflow simulate --timeline` draws a config's run (and Python's Run.to_svg for a
/// config's run): the description (or schedule) as title, the run's sizes as subtitle, and
/// per device its GPU type, static memory and capacity. Flags (memory chart, critical path,
/// arrows) are the caller's.
visualizer::TimelineOptions timeline_style(const study::Config& config, const EventGraph& graph);

}  // namespace perflow::cli::detail
