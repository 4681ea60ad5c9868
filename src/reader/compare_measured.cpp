// `perflow compare-measured CONFIG PROFILE...` (and Python's perflow.compare_measured): a
// prediction against the execution measured in profiles: step time, per-stage busy time,
// where the measured step went.
#include "perflow/reader/compare_measured.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perflow/simulator/options.hpp"

namespace perflow::reader {
namespace {

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

// Stage `s` of the comparison; an empty one for a stage only a breakdown names.
const StageComparison& stage_at(const MeasuredComparison& c, std::size_t s) {
  static const StageComparison kNone{};
  return s < c.stages.size() ? c.stages[s] : kNone;
}

}  // namespace

MeasuredComparison compare_measured(const std::string& config_file, const std::string& schedule,
                                    std::uint32_t stages, std::uint32_t microbatches,
                                    const simulator::Metrics& predicted,
                                    const ProfileRequest& profiles) {
  MeasuredComparison c;
  c.config_file = config_file;
  c.measurement = measure_profiles(profiles);
  const ExtractedCosts& costs = c.measurement.costs;
  c.predicted = predicted;
  c.timeline = measured_timeline(costs);
  c.measured = simulator::compute_metrics(c.timeline.graph, c.timeline.trace,
                                          simulator::SimulationOptions{});
  c.predicted_title = fmt::format("predicted: {}", config_file);
  c.predicted_subtitle =
      fmt::format("{}, {} stages x {} microbatches", schedule, stages, microbatches);
  c.measured_title = fmt::format("measured: {} profile{}", costs.profiles.size(),
                                 costs.profiles.size() == 1 ? "" : "s");
  c.measured_subtitle = fmt::format("{} markers, every iteration", costs.marker);

  c.steps = measured_steps(costs);
  c.measured_step = median_step_time(c.steps);
  c.predicted_step = predicted.makespan;
  c.steady = static_cast<std::size_t>(std::count_if(
      c.steps.begin(), c.steps.end(), [](const MeasuredStep& s) { return !s.warmup; }));
  const std::vector<TimeNs> busy = measured_stage_busy(costs);
  const std::size_t count = std::max<std::size_t>(busy.size(), predicted.devices.size());
  for (std::size_t s = 0; s < count; ++s) {
    StageComparison stage;
    stage.stage = static_cast<std::uint32_t>(s);
    if (s < predicted.devices.size()) {
      stage.predicted_busy = predicted.devices[s].busy;
      stage.predicted_idle = c.predicted_step - predicted.devices[s].busy;
    }
    if (s < busy.size() && busy[s] >= 0) stage.measured_busy = busy[s];
    c.stages.push_back(stage);
  }
  c.breakdowns = measured_breakdown(costs);
  c.breakdown_iteration = c.breakdowns.empty() ? -1 : c.breakdowns.front().iteration;
  return c;
}

std::string comparison_json(const MeasuredComparison& c, std::string_view timeline) {
  const ExtractedCosts& costs = c.measurement.costs;
  auto breakdown = [&](std::size_t s) -> const StepBreakdown* {
    for (const StepBreakdown& b : c.breakdowns) {
      if (b.stage == s) return &b;
    }
    return nullptr;
  };
  auto ns = [](std::optional<TimeNs> t) { return t ? nlohmann::json(*t) : nlohmann::json(); };
  nlohmann::json per_stage = nlohmann::json::array();
  for (std::size_t s = 0; s < c.stages.size(); ++s) {
    const std::optional<TimeNs> p = c.stages[s].predicted_busy;
    const std::optional<TimeNs> m = c.stages[s].measured_busy;
    nlohmann::json entry = {{"stage", s},
                            {"predicted_busy_ns", ns(p)},
                            {"measured_busy_ns", ns(m)},
                            {"busy_error", p && m ? error_json(*p, *m) : nlohmann::json()},
                            {"predicted_idle_ns", ns(c.stages[s].predicted_idle)}};
    if (const StepBreakdown* b = breakdown(s)) {
      entry["measured_step"] = {{"profile", costs.profiles[b->profile].path},
                                {"window_ns", b->window},
                                {"gpu_busy_tasks_ns", b->task_compute},
                                {"gpu_busy_other_ns", b->other_compute},
                                {"communication_ns", b->communication},
                                {"gpu_idle_in_tasks_ns", b->idle_in_tasks},
                                {"host_gaps_ns", b->host_gaps}};
      entry["measured_idle_ns"] = b->window - b->task_compute;
      entry["unmodelled_share"] =
          b->window > 0
              ? nlohmann::json(static_cast<double>(b->window - b->task_compute -
                                                   c.stages[s].predicted_idle.value_or(0)) /
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
      {"marker_choice", c.measurement.marker_choice},
      {"config", c.config_file},
      {"predicted_step_ns", c.predicted_step},
      {"measured_step_ns", c.measured_step},
      {"steady_iterations", c.steady},
      {"step_error", error_json(c.predicted_step, c.measured_step)},
      {"breakdown_iteration",
       c.breakdown_iteration < 0 ? nlohmann::json() : nlohmann::json(c.breakdown_iteration)},
      {"unmodelled_step_ns", c.measured_step - c.predicted_step},
      {"unmodelled_step_share",
       c.measured_step > 0
           ? nlohmann::json(static_cast<double>(c.measured_step - c.predicted_step) /
                            static_cast<double>(c.measured_step))
           : nlohmann::json()},
      {"stages", per_stage},
      {"timeline", timeline.empty() ? nlohmann::json() : nlohmann::json(timeline)}};
  return out.dump(1) + "\n";
}

std::string comparison_text(const MeasuredComparison& c, std::string_view timeline) {
  const TimeNs predicted_step = c.predicted_step;
  const TimeNs measured_step = c.measured_step;
  std::string out = fmt::format("markers: {}\n", c.measurement.marker_choice);
  out += fmt::format("predicted step: {} ({})\n", format_duration(predicted_step), c.config_file);
  out +=
      fmt::format("measured step:  {} (lower median over {} steady iteration{}, F/B/W work only)\n",
                  format_duration(measured_step), c.steady, c.steady == 1 ? "" : "s");
  out += fmt::format("step time error: {}\n", error_text(predicted_step, measured_step));
  out += "per stage (busy time per iteration):\n";
  out += fmt::format("  {:<6} {:>14} {:>14} {:>9}\n", "stage", "predicted", "measured", "error");
  for (std::size_t s = 0; s < c.stages.size(); ++s) {
    const std::optional<TimeNs> p = c.stages[s].predicted_busy;
    const std::optional<TimeNs> m = c.stages[s].measured_busy;
    out += fmt::format("  {:<6} {:>14} {:>14} {:>9}\n", s, p ? format_duration(*p) : "-",
                       m ? format_duration(*m) : "-", p && m ? error_text(*p, *m) : "-");
  }
  if (!c.breakdowns.empty()) {
    out += fmt::format(
        "where the measured step went ({}, the median step; each stage's first profile):\n",
        c.breakdown_iteration < 0 ? std::string("the profile")
                                  : fmt::format("ProfilerStep#{}", c.breakdown_iteration));
    out += fmt::format("  {:<6} {:>10} {:>18} {:>18} {:>18} {:>18} {:>18}\n", "stage", "step",
                       "GPU busy: tasks", "GPU busy: other", "communication", "GPU idle in tasks",
                       "host-bound gaps");
    auto part = [](TimeNs t, TimeNs window) {
      return fmt::format(
          "{} {:>5.1f}%", format_duration(t),
          window > 0 ? 100.0 * static_cast<double>(t) / static_cast<double>(window) : 0.0);
    };
    for (const StepBreakdown& b : c.breakdowns) {
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
    for (const StepBreakdown& b : c.breakdowns) {
      const std::optional<TimeNs> p = stage_at(c, b.stage).predicted_busy;
      const std::optional<TimeNs> idle = stage_at(c, b.stage).predicted_idle;
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
  if (!timeline.empty()) out += fmt::format("timelines written to {}\n", timeline);
  return out;
}

}  // namespace perflow::reader
