// `perflow measured PROFILE... --timeline measured.svg`: the measured execution drawn with the
// simulator's visualizer.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "detail/profile_input.hpp"
#include "detail/timeline_output.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/reader/measured_timeline.hpp"
#include "perflow/simulator/metrics.hpp"
#include "perflow/visualizer/timeline.hpp"

namespace perflow::cli::detail {
namespace {

using reader::MeasuredStep;
using reader::Measurement;

struct MeasuredOptions {
  ProfileOptions profiles;
  TimelineOutput timeline;
  OutputRules rules;
  std::string format = "text";
};

std::string iteration_name(const MeasuredStep& step) {
  return step.iteration < 0 ? std::string("the profile")
                            : fmt::format("ProfilerStep#{}", step.iteration);
}

void run_measured(const MeasuredOptions& options) {
  // Usage errors in the outputs are found before any profile is read.
  const std::optional<visualizer::ImageFormat> format = options.timeline.format();
  const OutputFile output = options.timeline.output();
  check_output_paths(profile_inputs(options.profiles), {&output, 1}, options.rules);

  const Measurement measurement = reader::measure_profiles(options.profiles);
  const reader::ExtractedCosts& costs = measurement.costs;
  const reader::MeasuredTimeline timeline = reader::measured_timeline(costs);
  const simulator::Metrics metrics =
      simulator::compute_metrics(timeline.graph, timeline.trace, simulator::SimulationOptions{});
  if (format) {
    visualizer::TimelineOptions drawing;
    drawing.title = "Measured execution";
    drawing.subtitle = fmt::format("{} profile{}, {} tasks, markers {}", costs.profiles.size(),
                                   costs.profiles.size() == 1 ? "" : "s",
                                   timeline.graph.task_count(), costs.marker);
    drawing.device_labels = timeline.device_labels;
    write_file_atomically(output.path, visualizer::render_timeline(timeline.graph, timeline.trace,
                                                                   metrics, drawing, *format));
  }

  const std::vector<MeasuredStep> steps = reader::measured_steps(costs);
  const std::vector<TimeNs> busy = reader::measured_stage_busy(costs);
  if (options.format == "json") {
    nlohmann::json iterations = nlohmann::json::array();
    for (const MeasuredStep& step : steps) {
      iterations.push_back(
          {{"iteration", step.iteration < 0 ? nlohmann::json() : nlohmann::json(step.iteration)},
           {"warmup", step.warmup},
           {"step_ns", step.time}});
    }
    nlohmann::json stages = nlohmann::json::array();
    for (std::size_t s = 0; s < busy.size(); ++s) {
      if (busy[s] >= 0) stages.push_back({{"stage", s}, {"busy_ns", busy[s]}});
    }
    const nlohmann::json out = {
        {"markers", costs.marker},
        {"marker_choice", measurement.marker_choice},
        {"profiles", costs.profiles.size()},
        {"tasks", costs.tasks.size()},
        {"iterations", iterations},
        {"step_ns", reader::median_step_time(steps)},
        {"stages", stages},
        {"timeline", format ? nlohmann::json(output.path) : nlohmann::json()}};
    fmt::print("{}\n", out.dump(1));
    return;
  }

  std::string out = fmt::format("markers: {}\n", measurement.marker_choice);
  out += fmt::format("{} profile{}, {} measured tasks\n", costs.profiles.size(),
                     costs.profiles.size() == 1 ? "" : "s", costs.tasks.size());
  for (const MeasuredStep& step : steps) {
    out += fmt::format(
        "  {}: step {} (first op of its first task to last op of its last "
        "task){}\n",
        iteration_name(step), format_duration(step.time), step.warmup ? ", warm-up" : "");
  }
  out += fmt::format("step time: {} (lower median over steady iterations)\n",
                     format_duration(reader::median_step_time(steps)));
  for (std::size_t s = 0; s < busy.size(); ++s) {
    if (busy[s] >= 0) {
      out += fmt::format("  stage {}: busy {} per iteration\n", s, format_duration(busy[s]));
    }
  }
  if (format) out += fmt::format("timeline written to {}\n", output.path);
  fmt::print("{}", out);
}

}  // namespace

void add_measured_command(CLI::App& app) {
  auto options = std::make_shared<MeasuredOptions>();
  CLI::App* cmd =
      app.add_subcommand("measured", "Draw the execution measured in GPU profiles as a timeline");
  add_profile_options(*cmd, options->profiles);
  options->timeline.add_options(*cmd, "the measured timeline");
  options->rules.add_options(*cmd);
  cmd->add_option("--format", options->format,
                  "Standard output: a text summary or the same numbers as JSON")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] { run_measured(*options); });
}

}  // namespace perflow::cli::detail
