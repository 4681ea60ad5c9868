// `perflow compare-measured CONFIG.json PROFILE...`: a prediction against the execution
// measured in profiles: step time, per-stage busy time, both timelines on one time scale.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "detail/profile_input.hpp"
#include "detail/set_option.hpp"
#include "detail/study.hpp"
#include "detail/timeline_output.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/reader/compare_measured.hpp"
#include "perflow/reader/measured_timeline.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"
#include "perflow/visualizer/comparison.hpp"

namespace perflow::cli::detail {
namespace {

struct CompareMeasuredOptions {
  std::string config;
  ProfileOptions profiles;
  TimelineOutput timeline;
  OutputRules rules;
  std::string format = "text";
  std::vector<std::string> set;  // --set POINTER=VALUE on the config
};

void run_compare_measured(const CompareMeasuredOptions& options) {
  // Usage errors in the outputs are found before any work.
  const std::optional<visualizer::ImageFormat> format = options.timeline.format();
  const OutputFile output = options.timeline.output();
  std::vector<InputFile> inputs = profile_inputs(options.profiles);
  inputs.insert(inputs.begin(), {"the config", options.config});
  check_output_paths(inputs, {&output, 1}, options.rules);

  const Config config = load_config(options.config, parse_overrides(options.set));
  const EventGraph graph = build_graph(config);
  const simulator::SimulationResult predicted = cli::simulate(config, graph);
  const reader::MeasuredComparison comparison =
      reader::compare_measured(config, graph, predicted, options.profiles);

  if (format) {
    const reader::MeasuredTimeline& timeline = comparison.timeline;
    const std::vector<visualizer::ComparedRun> runs = {
        {comparison.predicted_title, comparison.predicted_subtitle, graph, predicted.trace,
         predicted.metrics},
        {comparison.measured_title, comparison.measured_subtitle, timeline.graph, timeline.trace,
         comparison.measured, timeline.device_labels},
    };
    visualizer::ComparisonOptions drawing;
    drawing.title = "Predicted vs measured";
    drawing.mark_best = false;  // a check, not a contest
    drawing.memory_bars = false;
    write_file_atomically(output.path, visualizer::render_comparison(runs, drawing, *format));
  }
  const std::string_view written = format ? output.path : std::string_view();
  fmt::print("{}", options.format == "json" ? reader::comparison_json(comparison, written)
                                            : reader::comparison_text(comparison, written));
}

}  // namespace

void add_compare_measured_command(CLI::App& app) {
  auto options = std::make_shared<CompareMeasuredOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare-measured",
      "Compare a config's predicted step with the execution measured in GPU profiles");
  cmd->add_option("config", options->config, "Config file (JSON)")->required();
  add_profile_options(*cmd, options->profiles);
  options->timeline.add_options(*cmd,
                                "both timelines, predicted above measured, on one time scale");
  options->rules.add_options(*cmd);
  add_set_option(*cmd, options->set);
  cmd->add_option("--format", options->format,
                  "Standard output: a text comparison or the same numbers as JSON")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] { run_compare_measured(*options); });
}

}  // namespace perflow::cli::detail
