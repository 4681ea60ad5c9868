#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/simulator/metrics.hpp"
#include "perflow/visualizer/image_format.hpp"

namespace perflow::visualizer {

/// One simulated configuration to compare. The graph, trace and metrics must outlive it.
struct ComparedRun {
  std::string name;      ///< its heading, e.g. the config's file or description
  std::string subtitle;  ///< shown after the name, e.g. the sizes; may be empty
  const EventGraph& graph;
  const Trace& trace;
  const simulator::Metrics& metrics;
  std::vector<std::string> device_labels = {};  ///< per device, as TimelineOptions has them
  /// A device beyond its memory: the run is marked in its heading and bars, never "best".
  bool out_of_memory = false;
};

struct ComparisonOptions {
  std::string title;  ///< empty: "Comparison of N runs"
  double width = 1600;
  double row_height = 16;               ///< a compute lane's row in each timeline
  std::size_t aggregate_above = 20000;  ///< per run, as TimelineOptions::aggregate_above
  double png_scale = 2;
  /// Bold the lowest bar of each metric (off where the runs do not compete, as a prediction
  /// and the measurement it is checked against).
  bool mark_best = true;
  /// Draw the peak activation memory panel (off where a run has no memory, as a measured
  /// one without memory events).
  bool memory_bars = true;
};

/// Several runs on one page: their timelines stacked on one time scale (the longest
/// makespan spans the width, so shorter runs end early), then a bar chart of makespan,
/// bubble ratio and peak activation memory, one bar per run, the best (lowest) of the runs
/// that fit in bold. Memory below 10,000 is in activation units (units.hpp format_memory):
/// when some runs are in units and others in bytes, the two are not drawn on one scale and
/// the panel says so. Deterministic.
std::string render_comparison(std::span<const ComparedRun> runs, const ComparisonOptions& options,
                              ImageFormat format);

/// Renders in the format `path`'s extension names and writes atomically; throws
/// UnknownNameError for an unknown extension, IoError when it cannot write.
void write_comparison(const std::filesystem::path& path, std::span<const ComparedRun> runs,
                      const ComparisonOptions& options);

}  // namespace perflow::visualizer
