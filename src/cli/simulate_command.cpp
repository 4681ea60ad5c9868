#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "perflow/cli/config.hpp"
#include "perflow/cli/report.hpp"
#include "perflow/cli/summary.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/visualizer/timeline.hpp"

namespace perflow::cli::detail {
namespace {

struct SimulateOptions {
  std::string config;
  std::string report;
  std::string svg;
  std::string format = "text";
};

void run_simulate(const SimulateOptions& options) {
  const Config config = load_config(options.config);
  const EventGraph graph = build_graph(config);
  const simulator::SimulationResult result = simulator::simulate(graph, config.simulation);

  // Everything is rendered before anything is written, and the files appear together.
  const nlohmann::json report = make_report(config, graph, result);
  const std::string report_text = report.dump(1) + "\n";
  std::string svg;
  if (!options.svg.empty()) {
    visualizer::TimelineOptions timeline;
    timeline.title = config.description.empty() ? config.pipeline.schedule : config.description;
    timeline.subtitle = describe_run(config, graph);
    svg = visualizer::render_timeline_svg(graph, result.trace, result.metrics, timeline);
  }
  std::vector<std::pair<std::filesystem::path, std::string_view>> files;
  if (!options.report.empty()) files.emplace_back(options.report, report_text);
  if (!options.svg.empty()) files.emplace_back(options.svg, svg);
  write_files_atomically(files);
  if (options.format == "json") {
    fmt::print("{}\n", report.dump(1));
  } else {
    fmt::print("{}", format_summary(config, graph, result.metrics));
    if (!options.report.empty()) fmt::print("report written to {}\n", options.report);
    if (!options.svg.empty()) fmt::print("timeline written to {}\n", options.svg);
  }
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand("simulate",
                                     "Build a pipeline schedule from a JSON config, "
                                     "simulate it and summarize the result");
  cmd->add_option("config", options->config, "Config file (JSON)")->required();
  cmd->add_option("--report", options->report, "Write the JSON report to this file");
  cmd->add_option("--svg", options->svg, "Write the timeline to this SVG file");
  cmd->add_option("--format", options->format, "Standard output: a text summary or the report")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] { run_simulate(*options); });
}

}  // namespace perflow::cli::detail
