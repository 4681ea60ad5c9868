#pragma once

#include <filesystem>
#include <string>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/simulator/metrics.hpp"

namespace perflow::visualizer {

struct TimelineOptions {
  std::string title;     ///< shown at the top; empty: no title line
  std::string subtitle;  ///< shown under the title (e.g. the sizes); may be empty
  double width = 1600;   ///< points; the height follows from the number of devices
  double row_height = 28;
};

/// Draws the trace as a timeline: one row per device, one box per task coloured by kind
/// (chunks shade a kind), labels inside boxes where they fit, idle time left blank, a time
/// axis with unit-aware ticks, a legend, the title and a caption with the key metrics.
/// Returns the SVG document. Deterministic: the same inputs give the same bytes.
std::string render_timeline_svg(const EventGraph& graph, const Trace& trace,
                                const simulator::Metrics& metrics, const TimelineOptions& options);

/// Renders and writes the SVG atomically (never a half-written file); throws IoError.
void write_timeline_svg(const std::filesystem::path& path, const EventGraph& graph,
                        const Trace& trace, const simulator::Metrics& metrics,
                        const TimelineOptions& options);

}  // namespace perflow::visualizer
