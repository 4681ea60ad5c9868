#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/simulator/metrics.hpp"
#include "perflow/visualizer/image_format.hpp"

namespace perflow::visualizer {

struct TimelineOptions {
  std::string title;       ///< shown at the top; empty: no title line
  std::string subtitle;    ///< shown under the title (e.g. the sizes); may be empty
  double width = 1600;     ///< points; the height follows from the number of lanes
  double row_height = 28;  ///< a compute lane's row; communication lanes get 0.65 of it

  /// Per device, shown after its name: e.g. the GPU type of a heterogeneous run ("H100").
  /// Missing or empty entries show the device alone.
  std::vector<std::string> device_labels;

  /// Adds a chart of activation memory over time per device under the timeline.
  bool memory_chart = false;
  /// Per device, for the memory chart, in the unit of the tasks' memory deltas: memory held
  /// throughout (parameters, optimizer state; drawn under the activations) and the device's
  /// capacity (a line). Missing entries are 0; a capacity of 0 is unknown and not drawn.
  std::vector<double> static_memory;
  std::vector<double> memory_capacity;

  /// Outlines the tasks of metrics.critical_path and links consecutive ones across lanes.
  bool critical_path = false;
  /// Arrows for the data dependences between devices (what sends and receives carry), from
  /// the producer's finish to the consumer's start; left out (and said so in the legend) when
  /// there are more than `max_arrows`.
  bool dependency_arrows = false;
  std::size_t max_arrows = 2000;

  /// Density: with more tasks than this, runs of boxes narrower than a point merge, per lane,
  /// into aggregate spans coloured by the kinds inside and shaded by how busy the lane is
  /// there, so huge traces stay small files that still show their shape.
  std::size_t aggregate_above = 20000;
  /// PNG pixels per point; reduced if the image would exceed 32767 pixels a side or 64M
  /// pixels.
  double png_scale = 2;
};

/// Draws the trace as a timeline: one row per lane, a device's communication lanes under
/// its compute lane, one box per task coloured by kind (chunks shade a kind), labels inside
/// boxes where they fit, idle time left blank, a time axis with unit-aware ticks, device
/// names (and labels such as GPU types), a legend of the kinds present, the title, a caption
/// with makespan, bubble ratio and peak memory, and optionally the memory chart, critical
/// path and dependence arrows. Returns the document's bytes in `format`. Deterministic: the
/// same inputs give the same bytes.
std::string render_timeline(const EventGraph& graph, const Trace& trace,
                            const simulator::Metrics& metrics, const TimelineOptions& options,
                            ImageFormat format);

/// render_timeline as SVG.
std::string render_timeline_svg(const EventGraph& graph, const Trace& trace,
                                const simulator::Metrics& metrics, const TimelineOptions& options);

/// Renders in the format `path`'s extension names (.svg, .png, .pdf; UnknownNameError
/// otherwise, before any work) and writes atomically (never a half-written file); throws
/// IoError.
void write_timeline(const std::filesystem::path& path, const EventGraph& graph, const Trace& trace,
                    const simulator::Metrics& metrics, const TimelineOptions& options);

/// Renders SVG whatever the extension and writes it atomically; throws IoError.
void write_timeline_svg(const std::filesystem::path& path, const EventGraph& graph,
                        const Trace& trace, const simulator::Metrics& metrics,
                        const TimelineOptions& options);

}  // namespace perflow::visualizer
