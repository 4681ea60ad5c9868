#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"

namespace perflow::visualizer {

struct ChromeTraceOptions {
  /// Per device: shown in its process name, e.g. the GPU type ("dev 4 (A100)"). Missing or
  /// empty entries show the device alone.
  std::vector<std::string> device_labels;
};

/// The trace in the Chrome trace event format (JSON object form), which Perfetto and
/// chrome://tracing load: one process per device (pid = device + 1), one thread per lane
/// (tid = lane + 1; the compute lane first), a complete event ("X") per task with its kind,
/// microbatch, chunk and stage as args, a flow ("s" -> "f") per data dependence between two
/// devices, and an "activation memory" counter ("C") per device. Times are microseconds
/// written exactly from integer nanoseconds ("1315.000"). Deterministic: the same inputs give
/// the same bytes.
std::string render_chrome_trace(const EventGraph& graph, const Trace& trace,
                                const ChromeTraceOptions& options = {});

/// Renders and writes atomically (never a half-written file); throws IoError.
void write_chrome_trace(const std::filesystem::path& path, const EventGraph& graph,
                        const Trace& trace, const ChromeTraceOptions& options = {});

}  // namespace perflow::visualizer
