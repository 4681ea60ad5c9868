#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "detail/set_option.hpp"
#include "detail/study.hpp"
#include "detail/timeline_output.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/task_table.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"
#include "perflow/study/device_display.hpp"
#include "perflow/study/report.hpp"
#include "perflow/study/summary.hpp"
#include "perflow/visualizer/chrome_trace.hpp"
#include "perflow/visualizer/timeline.hpp"

namespace perflow::cli::detail {
namespace {

struct SimulateOptions {
  std::string config;
  std::vector<std::string> set;  // --set POINTER=VALUE
  std::string report;
  TimelineOutput timeline;
  OutputRules rules;
  std::string chrome_trace;
  std::string trace;  // the task table, .csv or .jsonl
  std::string format = "text";
  bool memory_chart = false;
  bool critical_path = false;
  bool arrows = false;
};

std::optional<TaskTableFormat> trace_format_of(const std::string& path) {
  if (path.empty()) return std::nullopt;
  if (const std::optional<TaskTableFormat> format = task_table_format_of(path)) return format;
  const std::string extension = std::filesystem::path(path).extension().string();
  if (extension.empty()) {
    throw Error(fmt::format(
        "--trace '{}': no file extension to tell the task table format by; the extension must "
        "be one of .csv, .jsonl",
        path));
  }
  throw Error(fmt::format(
      "--trace '{}': unknown task table format '{}'; the extension must be one of .csv, .jsonl",
      path, extension));
}

// What the outputs hold per task while they are rendered in memory, 1.5x what they measured
// (2026-11-28, 1F1B 8 x 512, 8,192 tasks): Chrome trace 226 bytes, JSON Lines table 134,
// CSV 44, SVG timeline 202, report 27 (its critical path). A PNG is a fixed-size image.
std::vector<study::OutputEstimate> output_estimates(
    const SimulateOptions& options, std::optional<visualizer::ImageFormat> timeline_format,
    std::optional<TaskTableFormat> trace_format) {
  std::vector<study::OutputEstimate> outputs;
  if (!options.report.empty() || options.format == "json") outputs.push_back({"--report", 40});
  if (timeline_format && *timeline_format != visualizer::ImageFormat::Png) {
    outputs.push_back({std::string(options.timeline.output().option), 304});
  }
  if (!options.chrome_trace.empty()) outputs.push_back({"--chrome-trace", 340});
  if (trace_format) {
    outputs.push_back({"--trace", *trace_format == TaskTableFormat::Csv ? 66.0 : 201.0});
  }
  return outputs;
}

void run_simulate(const SimulateOptions& options) {
  // Usage errors in the outputs are found before any work.
  const std::optional<visualizer::ImageFormat> timeline_format = options.timeline.format();
  const std::string timeline_path(options.timeline.output().path);
  const std::optional<TaskTableFormat> trace_format = trace_format_of(options.trace);
  const InputFile inputs[] = {{"the config", options.config}};
  const OutputFile outputs[] = {{"--report", options.report},
                                options.timeline.output(),
                                {"--chrome-trace", options.chrome_trace},
                                {"--trace", options.trace}};
  check_output_paths(inputs, outputs, options.rules);

  Config config = load_config(options.config, parse_overrides(options.set));
  // A run whose outputs would not fit is refused with the run, before it is simulated.
  config.outputs = output_estimates(options, timeline_format, trace_format);
  const EventGraph graph = build_graph(config);
  const simulator::SimulationResult result = cli::simulate(config, graph);
  const DeviceDisplay display = device_display(config, graph.device_count());

  // Everything is rendered before anything is written, and the files appear together.
  // The report only when something shows it: for a million tasks it costs more than the
  // simulation.
  const bool want_report = !options.report.empty() || options.format == "json";
  const std::string report_text =
      want_report ? render_report(config, graph, result) : std::string();
  std::string timeline;
  if (timeline_format) {
    const RunDisplay shown = run_display(config, graph);
    visualizer::TimelineOptions style;
    style.title = shown.title;
    style.subtitle = shown.subtitle;
    style.device_labels = shown.devices.labels;
    style.static_memory = shown.devices.static_memory;
    style.memory_capacity = shown.devices.capacity;
    style.memory_chart = options.memory_chart;
    style.critical_path = options.critical_path;
    style.dependency_arrows = options.arrows;
    timeline =
        visualizer::render_timeline(graph, result.trace, result.metrics, style, *timeline_format);
  }
  std::string chrome_trace;
  if (!options.chrome_trace.empty()) {
    chrome_trace = visualizer::render_chrome_trace(graph, result.trace, {display.labels});
  }
  std::string task_table;
  if (trace_format) task_table = render_task_table(graph, result.trace, *trace_format);
  std::vector<std::pair<std::filesystem::path, std::string_view>> files;
  if (!options.report.empty()) files.emplace_back(options.report, report_text);
  if (timeline_format) files.emplace_back(timeline_path, timeline);
  if (!options.chrome_trace.empty()) files.emplace_back(options.chrome_trace, chrome_trace);
  if (trace_format) files.emplace_back(options.trace, task_table);
  write_files_atomically(files);
  if (options.format == "json") {
    fmt::print("{}", report_text);
  } else {
    fmt::print("{}", format_summary(config, graph, result));
    if (!options.report.empty()) fmt::print("report written to {}\n", options.report);
    if (timeline_format) fmt::print("timeline written to {}\n", timeline_path);
    if (!options.chrome_trace.empty()) {
      fmt::print("chrome trace written to {}\n", options.chrome_trace);
    }
    if (trace_format) fmt::print("task table written to {}\n", options.trace);
  }
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand("simulate",
                                     "Build a pipeline schedule from a JSON config, "
                                     "simulate it and summarize the result");
  cmd->add_option("config", options->config, "Config file (JSON)")->required();
  add_set_option(*cmd, options->set);
  output_option(cmd->add_option("--report", options->report, "Write the JSON report to this file"));
  options->timeline.add_options(*cmd, "the timeline");
  cmd->add_flag("--memory-chart", options->memory_chart,
                "Draw activation memory over time per device under the timeline");
  cmd->add_flag("--critical-path", options->critical_path,
                "Outline the critical path in the timeline");
  cmd->add_flag("--arrows", options->arrows,
                "Draw the dependences between devices as arrows in the timeline");
  output_option(
      cmd->add_option("--chrome-trace", options->chrome_trace,
                      "Write the trace as Chrome trace event JSON (Perfetto, chrome://tracing)"));
  output_option(cmd->add_option("--trace", options->trace,
                                "Write the task table, one row per task, to this file; its "
                                "extension picks the format: .csv or .jsonl"));
  options->rules.add_options(*cmd);
  cmd->add_option("--format", options->format, "Standard output: a text summary or the report")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] { run_simulate(*options); });
}

}  // namespace perflow::cli::detail
