// `perflow compare-measured CONFIG PROFILE...` (and Python's perflow.compare_measured): a
// prediction against the execution measured in profiles: step time, per-stage busy time,
// where the measured step went.
#include "perflow/reader/compare_measured.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perflow/core/error.hpp"
#include "perflow/simulator/options.hpp"
#include "perflow/study/config_overrides.hpp"

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

// A step's parts as the JSON names them.
nlohmann::json parts_json(const StepBreakdown& b) {
  return {{"window_ns", b.window},
          {"gpu_busy_tasks_ns", b.task_compute},
          {"gpu_busy_other_ns", b.other_compute},
          {"communication_ns", b.communication},
          {"gpu_idle_in_tasks_ns", b.idle_in_tasks},
          {"host_gaps_ns", b.host_gaps}};
}

// A difference with its sign: "+5.285ms", "-752.342us", "+0ns".
std::string signed_duration(TimeNs t) {
  return t < 0 ? format_duration(t) : fmt::format("+{}", format_duration(t));
}

// Refuses a config whose pipeline is not the measured one: its step and per-stage times
// would be compared with another run's.
void check_shape(const study::Config& config, const ExtractedCosts& costs) {
  const parallel::PipelineSpec& p = config.pipeline;
  auto refuse = [&](const std::string& field, std::uint32_t configured, std::uint32_t measured,
                    const std::string& what) {
    throw study::name_override(
        ConfigError(config.file, "/pipeline/" + field,
                    fmt::format("the config has {} {}, the profiles measured {}: a prediction "
                                "is compared with the run it describes (perflow costs "
                                "PROFILE... -o CONFIG writes a config of the measured shape)",
                                configured, what, measured)),
        config.overrides);
  };
  if (costs.stage_count != p.stages) refuse("stages", p.stages, costs.stage_count, "stages");
  if (costs.chunk_count != p.chunks) {
    refuse("chunks", p.chunks, costs.chunk_count, "chunks per device");
  }
  if (costs.microbatches != p.microbatches) {
    refuse("microbatches", p.microbatches, costs.microbatches, "microbatches per iteration");
  }
}

}  // namespace

std::vector<StepBreakdown> predicted_breakdown(const study::Config& config, const EventGraph& graph,
                                               const simulator::SimulationResult& predicted) {
  const simulator::Metrics& metrics = predicted.metrics;
  const Trace& trace = predicted.trace;
  const std::size_t n = metrics.iteration_finish.size();
  const TimeNs from = n >= 2 ? metrics.iteration_finish[n - 2] : 0;
  const TimeNs to = n >= 1 ? metrics.iteration_finish[n - 1] : metrics.makespan;
  auto clipped = [&](TaskId t) {
    return TimeInterval{std::max(trace.start_of(t), from), std::min(trace.finish_of(t), to)};
  };

  std::vector<StepBreakdown> out(graph.device_count());
  // Per device, its compute lane's busy intervals and its communication lanes' (both in
  // the window; the compute lane's are disjoint and in order).
  std::vector<std::vector<TimeInterval>> computing(graph.device_count());
  std::vector<std::vector<TimeInterval>> communicating(graph.device_count());
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    out[d].stage = d;
    out[d].window = to - from;
  }
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    const LaneId lane{l};
    const std::uint32_t d = graph.lane_info(lane).device.value;
    const bool compute_lane = l == d;
    StepBreakdown& b = out[d];
    for (const TaskId t : trace.events(lane)) {
      const TimeInterval i = clipped(t);
      if (i.end <= i.start) continue;
      const TaskKind kind = graph.kind(t);
      if (is_host_copy(kind)) continue;  // over the host link, not on the GPU's lanes
      if (!compute_lane) {
        communicating[d].push_back(i);
        continue;
      }
      computing[d].push_back(i);
      const TimeNs overlap = i.end - i.start;
      if (is_compute(kind) || kind == TaskKind::R) {
        const TimeNs duration = trace.finish_of(t) - trace.start_of(t);
        const TimeNs launch =
            std::min(config.costs.at(graph.stage(t), graph.chunk(t)).launch_overhead, duration);
        // In proportion when the window cuts the task (exact when it does not).
        const TimeNs idle =
            overlap == duration
                ? launch
                : static_cast<TimeNs>(static_cast<double>(overlap) * static_cast<double>(launch) /
                                      static_cast<double>(duration));
        b.idle_in_tasks += idle;
        b.task_compute += overlap - idle;
      } else if (kind == TaskKind::Send || kind == TaskKind::Recv || kind == TaskKind::AllReduce ||
                 kind == TaskKind::A2A || kind == TaskKind::ReduceScatter ||
                 kind == TaskKind::AllGather) {
        b.communication += overlap;
      } else {
        b.other_compute += overlap;
      }
    }
  }
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    StepBreakdown& b = out[d];
    // Communication lanes count where the compute lane is idle: the union of their
    // intervals less its overlap with the compute lane's.
    std::vector<TimeInterval>& comm = communicating[d];
    std::sort(comm.begin(), comm.end(),
              [](const TimeInterval& x, const TimeInterval& y) { return x.start < y.start; });
    std::vector<TimeInterval> merged;
    for (const TimeInterval& i : comm) {
      if (!merged.empty() && i.start <= merged.back().end) {
        merged.back().end = std::max(merged.back().end, i.end);
      } else {
        merged.push_back(i);
      }
    }
    const std::vector<TimeInterval>& busy = computing[d];
    std::size_t k = 0;
    for (const TimeInterval& i : merged) {
      TimeNs hidden = 0;
      while (k < busy.size() && busy[k].end <= i.start) ++k;
      for (std::size_t j = k; j < busy.size() && busy[j].start < i.end; ++j) {
        hidden += std::min(i.end, busy[j].end) - std::max(i.start, busy[j].start);
      }
      b.communication += (i.end - i.start) - hidden;
    }
    b.host_gaps = b.window - b.task_compute - b.idle_in_tasks - b.other_compute - b.communication;
  }
  return out;
}

MeasuredComparison compare_measured(const study::Config& config, const EventGraph& graph,
                                    const simulator::SimulationResult& predicted,
                                    const ProfileRequest& profiles) {
  MeasuredComparison c;
  c.config_file = config.file;
  c.measurement = measure_profiles(profiles);
  const ExtractedCosts& costs = c.measurement.costs;
  check_shape(config, costs);
  c.predicted = predicted.metrics;
  c.predicted_breakdowns = predicted_breakdown(config, graph, predicted);

  c.steps = measured_steps(costs);
  c.measured_step = median_step_time(c.steps);
  c.predicted_step = predicted.metrics.iteration_time;
  c.steady = static_cast<std::size_t>(std::count_if(
      c.steps.begin(), c.steps.end(), [](const MeasuredStep& s) { return !s.warmup; }));
  c.breakdowns = measured_breakdown(costs);
  c.breakdown_iteration = c.breakdowns.empty() ? -1 : c.breakdowns.front().iteration;

  // The picture sets the predicted step beside the measured step it is compared with.
  const std::optional<std::int64_t> shown =
      c.breakdown_iteration < 0 ? std::nullopt : std::optional(c.breakdown_iteration);
  c.timeline = measured_timeline(costs, shown);
  c.measured = simulator::compute_metrics(c.timeline.graph, c.timeline.trace,
                                          simulator::SimulationOptions{});
  const parallel::PipelineSpec& p = config.pipeline;
  c.predicted_title = fmt::format("predicted: {}", config.file);
  c.predicted_subtitle = fmt::format(
      "{}, {} stage{} x {} microbatch{}{}", p.schedule, p.stages, p.stages == 1 ? "" : "s",
      p.microbatches, p.microbatches == 1 ? "" : "es",
      config.iterations.count > 1
          ? fmt::format(", {} iterations (the step: the steady period)", config.iterations.count)
          : std::string());
  c.measured_title = fmt::format("measured: {} profile{}", costs.profiles.size(),
                                 costs.profiles.size() == 1 ? "" : "s");
  c.measured_subtitle = shown ? fmt::format("{} markers, ProfilerStep#{} (the median steady step)",
                                            costs.marker, *shown)
                              : fmt::format("{} markers, every iteration", costs.marker);

  const std::vector<TimeNs> busy = measured_stage_busy(costs);
  const std::size_t count = std::max<std::size_t>(busy.size(), c.predicted_breakdowns.size());
  for (std::size_t s = 0; s < count; ++s) {
    StageComparison stage;
    stage.stage = static_cast<std::uint32_t>(s);
    if (s < c.predicted_breakdowns.size()) {
      const StepBreakdown& b = c.predicted_breakdowns[s];
      stage.predicted_busy = b.task_compute;
      stage.predicted_idle = b.window - b.task_compute;
    }
    if (s < busy.size() && busy[s] >= 0) stage.measured_busy = busy[s];
    c.stages.push_back(stage);
  }
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
    entry["predicted_step"] = s < c.predicted_breakdowns.size()
                                  ? parts_json(c.predicted_breakdowns[s])
                                  : nlohmann::json();
    if (const StepBreakdown* b = breakdown(s)) {
      entry["measured_step"] = parts_json(*b);
      entry["measured_step"]["profile"] = costs.profiles[b->profile].path;
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
  out += "per stage (the tasks' GPU busy time per step, launch gaps not included):\n";
  out += fmt::format("  {:<6} {:>14} {:>14} {:>9}\n", "stage", "predicted", "measured", "error");
  for (std::size_t s = 0; s < c.stages.size(); ++s) {
    const std::optional<TimeNs> p = c.stages[s].predicted_busy;
    const std::optional<TimeNs> m = c.stages[s].measured_busy;
    out += fmt::format("  {:<6} {:>14} {:>14} {:>9}\n", s, p ? format_duration(*p) : "-",
                       m ? format_duration(*m) : "-", p && m ? error_text(*p, *m) : "-");
  }
  if (!c.breakdowns.empty()) {
    out += fmt::format(
        "where the step went, part for part (measured: {}, the median step, each stage's "
        "first profile; each column adds up to its step):\n",
        c.breakdown_iteration < 0 ? std::string("the profile")
                                  : fmt::format("ProfilerStep#{}", c.breakdown_iteration));
    auto share = [](TimeNs t, TimeNs window) {
      return fmt::format(
          "{} {:>5.1f}%", format_duration(t),
          window > 0 ? 100.0 * static_cast<double>(t) / static_cast<double>(window) : 0.0);
    };
    using Part = TimeNs StepBreakdown::*;
    struct Row {
      const char* name;
      Part part;
    };
    static constexpr Row kRows[] = {
        {"GPU busy: tasks", &StepBreakdown::task_compute},
        {"GPU idle in tasks (launch gaps)", &StepBreakdown::idle_in_tasks},
        {"GPU busy: other", &StepBreakdown::other_compute},
        {"communication (not under compute)", &StepBreakdown::communication},
        {"idle between tasks", &StepBreakdown::host_gaps},
    };
    for (const StepBreakdown& m : c.breakdowns) {
      const StepBreakdown* p =
          m.stage < c.predicted_breakdowns.size() ? &c.predicted_breakdowns[m.stage] : nullptr;
      out += fmt::format("  {:<35} {:>18} {:>18} {:>12}\n", fmt::format("stage {}", m.stage),
                         "predicted", "measured", "difference");
      out += fmt::format("    {:<33} {:>18} {:>18} {:>12}\n", "step",
                         p ? format_duration(p->window) : "-", format_duration(m.window),
                         p ? signed_duration(p->window - m.window) : "-");
      for (const Row& row : kRows) {
        out += fmt::format("    {:<33} {:>18} {:>18} {:>12}\n", row.name,
                           p ? share(p->*row.part, p->window) : "-", share(m.*row.part, m.window),
                           p ? signed_duration(p->*row.part - m.*row.part) : "-");
      }
    }
  }
  if (!timeline.empty()) out += fmt::format("timelines written to {}\n", timeline);
  return out;
}

}  // namespace perflow::reader
