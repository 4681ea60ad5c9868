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
#include "detail/timeline_output.hpp"
#include "perflow/cli/config.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/reader/measured_timeline.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/visualizer/comparison.hpp"

namespace perflow::cli::detail {
namespace {

struct CompareMeasuredOptions {
  std::string config;
  ProfileOptions profiles;
  TimelineOutput timeline;
};

// (predicted - measured) / measured, as a signed percentage.
std::string error_text(TimeNs predicted, TimeNs measured) {
  if (measured <= 0) return "n/a";
  const double error =
      100.0 * static_cast<double>(predicted - measured) / static_cast<double>(measured);
  return fmt::format("{:+.2f}%", error);
}

void run_compare_measured(const CompareMeasuredOptions& options) {
  // Usage errors in the outputs are found before any work.
  const std::optional<visualizer::ImageFormat> format = options.timeline.format();
  const OutputFile output = options.timeline.output();
  std::vector<InputFile> inputs = {{"the config", options.config}};
  for (const std::string& profile : options.profiles.profiles)
    inputs.push_back({"a profile", profile});
  check_output_paths(inputs, {&output, 1});

  const Config config = load_config(options.config);
  const EventGraph graph = build_graph(config);
  const simulator::SimulationResult predicted = simulator::simulate(graph, config.simulation);
  const Measurement measurement = measure_profiles(options.profiles);
  const reader::ExtractedCosts& costs = measurement.costs;
  const reader::MeasuredTimeline timeline = reader::measured_timeline(costs);
  const simulator::Metrics measured_metrics =
      simulator::compute_metrics(timeline.graph, timeline.trace, simulator::SimulationOptions{});

  if (format) {
    const parallel::PipelineSpec& p = config.pipeline;
    const std::vector<visualizer::ComparedRun> runs = {
        {fmt::format("predicted: {}", options.config),
         fmt::format("{}, {} stages x {} microbatches", p.schedule, p.stages, p.microbatches),
         graph, predicted.trace, predicted.metrics},
        {fmt::format("measured: {} profile{}", costs.profiles.size(),
                     costs.profiles.size() == 1 ? "" : "s"),
         fmt::format("{} markers, every iteration", costs.marker), timeline.graph, timeline.trace,
         measured_metrics, timeline.device_labels},
    };
    visualizer::ComparisonOptions drawing;
    drawing.title = "Predicted vs measured";
    write_file_atomically(output.path, visualizer::render_comparison(runs, drawing, *format));
  }

  const std::vector<MeasuredStep> steps = measured_steps(costs);
  const TimeNs measured_step = median_step_time(steps);
  const TimeNs predicted_step = predicted.metrics.makespan;
  std::string out = fmt::format("markers: {}\n", measurement.marker_choice);
  out += fmt::format("predicted step: {} ({})\n", format_duration(predicted_step), options.config);
  out += fmt::format(
      "measured step:  {} (lower median over {} steady iteration{}, F/B/W work "
      "only)\n",
      format_duration(measured_step),
      std::count_if(steps.begin(), steps.end(), [](const MeasuredStep& s) { return !s.warmup; }),
      steps.size() == 1 ? "" : "s");
  out += fmt::format("step time error: {}\n", error_text(predicted_step, measured_step));
  const std::vector<TimeNs> busy = measured_stage_busy(costs);
  out += "per stage (busy time per iteration):\n";
  out += fmt::format("  {:<6} {:>14} {:>14} {:>9}\n", "stage", "predicted", "measured", "error");
  const std::size_t stages = std::max<std::size_t>(busy.size(), predicted.metrics.devices.size());
  for (std::size_t s = 0; s < stages; ++s) {
    const bool has_prediction = s < predicted.metrics.devices.size();
    const bool has_measurement = s < busy.size() && busy[s] >= 0;
    const TimeNs p = has_prediction ? predicted.metrics.devices[s].busy : 0;
    const TimeNs m = has_measurement ? busy[s] : 0;
    out +=
        fmt::format("  {:<6} {:>14} {:>14} {:>9}\n", s, has_prediction ? format_duration(p) : "-",
                    has_measurement ? format_duration(m) : "-",
                    has_prediction && has_measurement ? error_text(p, m) : "-");
  }
  if (format) out += fmt::format("timelines written to {}\n", output.path);
  fmt::print("{}", out);
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
  cmd->callback([options] { run_compare_measured(*options); });
}

}  // namespace perflow::cli::detail
