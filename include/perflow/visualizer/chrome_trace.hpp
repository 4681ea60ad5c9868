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
/// (tid = lane + 1; the compute lane first), a complete event ("X") per task named by its
/// label ("F3.0": kind, microbatch, chunk) with its kind as category and its stage as the one
/// argument, a flow ("s" -> "f", named "data") per data dependence between two devices, and
/// an "activation memory" counter ("C") per device. Compact, one event per line: times are
/// microseconds written exactly from integer nanoseconds with only the decimals they need
/// ("1315", "1314.999"), whole counter values as integers; about 260 bytes a task for 1F1B.
/// Deterministic: the same inputs give the same bytes.
std::string render_chrome_trace(const EventGraph& graph, const Trace& trace,
                                const ChromeTraceOptions& options = {});

/// Renders and writes atomically (never a half-written file); throws IoError.
void write_chrome_trace(const std::filesystem::path& path, const EventGraph& graph,
                        const Trace& trace, const ChromeTraceOptions& options = {});

}  // namespace perflow::visualizer
