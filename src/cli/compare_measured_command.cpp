// `perflow compare-measured CONFIG.json PROFILE...`: a prediction against the execution
// measured in profiles: step time, per-stage busy time, both timelines on one time scale.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "detail/profile_input.hpp"
#include "detail/study.hpp"
#include "detail/timeline_output.hpp"
#include "perflow/core/atomic_file.hpp"
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
  std::string format = "text";
};

/// (predicted - measured) / measured; nullopt when nothing was measured.
std::optional<double> relative_error(TimeNs predicted, TimeNs measured) {
  if (measured <= 0) return std::nullopt;
  return static_cast<double>(predicted - measured) / static_cast<double>(measured);
}

/// The relative error as a signed percentage.
std::string error_text(TimeNs predicted, TimeNs measured) {
  const std::optional<double> error = relative_error(predicted, measured);
  return error ? fmt::format("{:+.2f}%", 100.0 * *error) : std::string("n/a");
}

nlohmann::json error_json(TimeNs predicted, TimeNs measured) {
  const std::optional<double> error = relative_error(predicted, measured);
  return error ? nlohmann::json(*error) : nlohmann::json();
}

void run_compare_measured(const CompareMeasuredOptions& options) {
  // Usage errors in the outputs are found before any work.
  const std::optional<visualizer::ImageFormat> format = options.timeline.format();
  const OutputFile output = options.timeline.output();
  std::vector<InputFile> inputs = profile_inputs(options.profiles);
  inputs.insert(inputs.begin(), {"the config", options.config});
  check_output_paths(inputs, {&output, 1});

  const Config config = load_config(options.config);
  const EventGraph graph = build_graph(config);
  const simulator::SimulationResult predicted = cli::simulate(config, graph);
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
  const auto steady = static_cast<std::size_t>(
      std::count_if(steps.begin(), steps.end(), [](const MeasuredStep& s) { return !s.warmup; }));
  const std::vector<TimeNs> busy = measured_stage_busy(costs);
  const std::size_t stages = std::max<std::size_t>(busy.size(), predicted.metrics.devices.size());
  // Per stage, busy time predicted and measured; nullopt where there is none.
  auto predicted_busy = [&](std::size_t s) -> std::optional<TimeNs> {
    if (s >= predicted.metrics.devices.size()) return std::nullopt;
    return predicted.metrics.devices[s].busy;
  };
  auto measured_busy = [&](std::size_t s) -> std::optional<TimeNs> {
    if (s >= busy.size() || busy[s] < 0) return std::nullopt;
    return busy[s];
  };
  // Where the measured step went, per stage; and the predicted idle (bubble) beside it.
  const std::vector<reader::StepBreakdown> breakdowns = reader::measured_breakdown(costs);
  auto breakdown = [&](std::size_t s) -> const reader::StepBreakdown* {
    for (const reader::StepBreakdown& b : breakdowns) {
      if (b.stage == s) return &b;
    }
    return nullptr;
  };
  auto predicted_idle = [&](std::size_t s) -> std::optional<TimeNs> {
    const std::optional<TimeNs> p = predicted_busy(s);
    if (!p) return std::nullopt;
    return predicted_step - *p;
  };
  const std::int64_t breakdown_iteration = breakdowns.empty() ? -1 : breakdowns.front().iteration;

  if (options.format == "json") {
    auto ns = [](std::optional<TimeNs> t) { return t ? nlohmann::json(*t) : nlohmann::json(); };
    nlohmann::json per_stage = nlohmann::json::array();
    for (std::size_t s = 0; s < stages; ++s) {
      const std::optional<TimeNs> p = predicted_busy(s);
      const std::optional<TimeNs> m = measured_busy(s);
      nlohmann::json entry = {{"stage", s},
                              {"predicted_busy_ns", ns(p)},
                              {"measured_busy_ns", ns(m)},
                              {"busy_error", p && m ? error_json(*p, *m) : nlohmann::json()},
                              {"predicted_idle_ns", ns(predicted_idle(s))}};
      if (const reader::StepBreakdown* b = breakdown(s)) {
        entry["measured_step"] = {{"profile", costs.profiles[b->profile].path},
                                  {"window_ns", b->window},
                                  {"gpu_busy_tasks_ns", b->task_compute},
                                  {"gpu_busy_other_ns", b->other_compute},
                                  {"communication_ns", b->communication},
                                  {"gpu_idle_in_tasks_ns", b->idle_in_tasks},
                                  {"host_gaps_ns", b->host_gaps}};
        entry["measured_idle_ns"] = b->window - b->task_compute;
        entry["unmodelled_share"] =
            b->window > 0 ? nlohmann::json(static_cast<double>(b->window - b->task_compute -
                                                               predicted_idle(s).value_or(0)) /
                                           static_cast<double>(b->window))
                          : nlohmann::json();
      } else {
        entry["measured_step"] = nullptr;
        entry["measured_idle_ns"] = nullptr;
        entry["unmodelled_share"] = nullptr;
      }
      per_stage.push_back(std::move(entry));
    }
    const nlohmann::json out = {
        {"markers", costs.marker},
        {"marker_choice", measurement.marker_choice},
        {"config", options.config},
        {"predicted_step_ns", predicted_step},
        {"measured_step_ns", measured_step},
        {"steady_iterations", steady},
        {"step_error", error_json(predicted_step, measured_step)},
        {"breakdown_iteration",
         breakdown_iteration < 0 ? nlohmann::json() : nlohmann::json(breakdown_iteration)},
        {"unmodelled_step_ns", measured_step - predicted_step},
        {"unmodelled_step_share",
         measured_step > 0 ? nlohmann::json(static_cast<double>(measured_step - predicted_step) /
                                            static_cast<double>(measured_step))
                           : nlohmann::json()},
        {"stages", per_stage},
        {"timeline", format ? nlohmann::json(output.path) : nlohmann::json()}};
    fmt::print("{}\n", out.dump(1));
    return;
  }

  std::string out = fmt::format("markers: {}\n", measurement.marker_choice);
  out += fmt::format("predicted step: {} ({})\n", format_duration(predicted_step), options.config);
  out +=
      fmt::format("measured step:  {} (lower median over {} steady iteration{}, F/B/W work only)\n",
                  format_duration(measured_step), steady, steady == 1 ? "" : "s");
  out += fmt::format("step time error: {}\n", error_text(predicted_step, measured_step));
  out += "per stage (busy time per iteration):\n";
  out += fmt::format("  {:<6} {:>14} {:>14} {:>9}\n", "stage", "predicted", "measured", "error");
  for (std::size_t s = 0; s < stages; ++s) {
    const std::optional<TimeNs> p = predicted_busy(s);
    const std::optional<TimeNs> m = measured_busy(s);
    out += fmt::format("  {:<6} {:>14} {:>14} {:>9}\n", s, p ? format_duration(*p) : "-",
                       m ? format_duration(*m) : "-", p && m ? error_text(*p, *m) : "-");
  }
  if (!breakdowns.empty()) {
    out += fmt::format(
        "where the measured step went ({}, the median step; each stage's first profile):\n",
        breakdown_iteration < 0 ? std::string("the profile")
                                : fmt::format("ProfilerStep#{}", breakdown_iteration));
    out += fmt::format("  {:<6} {:>10} {:>18} {:>18} {:>18} {:>18} {:>18}\n", "stage", "step",
                       "GPU busy: tasks", "GPU busy: other", "communication", "GPU idle in tasks",
                       "host-bound gaps");
    auto part = [](TimeNs t, TimeNs window) {
      return fmt::format(
          "{} {:>5.1f}%", format_duration(t),
          window > 0 ? 100.0 * static_cast<double>(t) / static_cast<double>(window) : 0.0);
    };
    for (const reader::StepBreakdown& b : breakdowns) {
      out += fmt::format("  {:<6} {:>10} {:>18} {:>18} {:>18} {:>18} {:>18}\n", b.stage,
                         format_duration(b.window), part(b.task_compute, b.window),
                         part(b.other_compute, b.window), part(b.communication, b.window),
                         part(b.idle_in_tasks, b.window), part(b.host_gaps, b.window));
    }
    out +=
        "like with like (per stage: the tasks' GPU busy time is what the costs model; the "
        "rest of a step is idle):\n";
    out += fmt::format("  {:<6} {:>14} {:>14} {:>9} {:>14} {:>14} {:>13}\n", "stage", "busy pred.",
                       "busy meas.", "error", "idle pred.", "idle meas.", "not modelled");
    for (const reader::StepBreakdown& b : breakdowns) {
      const std::optional<TimeNs> p = predicted_busy(b.stage);
      const std::optional<TimeNs> idle = predicted_idle(b.stage);
      const TimeNs measured_idle = b.window - b.task_compute;
      out += fmt::format(
          "  {:<6} {:>14} {:>14} {:>9} {:>14} {:>14} {:>13}\n", b.stage,
          p ? format_duration(*p) : "-", format_duration(b.task_compute),
          p ? error_text(*p, b.task_compute) : "-", idle ? format_duration(*idle) : "-",
          format_duration(measured_idle),
          b.window > 0 ? fmt::format("{:.1f}%",
                                     100.0 * static_cast<double>(measured_idle - idle.value_or(0)) /
                                         static_cast<double>(b.window))
                       : std::string("-"));
    }
    out += fmt::format(
        "  the prediction covers {} of the measured step {}; {} ({}) is time the model does "
        "not cover (idle beyond its bubbles: launch gaps, host-bound gaps, other GPU work, "
        "communication waits)\n",
        format_duration(predicted_step), format_duration(measured_step),
        format_duration(measured_step - predicted_step),
        measured_step > 0
            ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(measured_step - predicted_step) /
                                         static_cast<double>(measured_step))
            : std::string("n/a"));
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
  cmd->add_option("--format", options->format,
                  "Standard output: a text comparison or the same numbers as JSON")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] { run_compare_measured(*options); });
}

}  // namespace perflow::cli::detail
