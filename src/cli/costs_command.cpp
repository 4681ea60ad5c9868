// `perflow costs PROFILE... -o costs.json`: per-stage F / B / W costs measured in profiles,
// written as a config that `perflow simulate` runs as is.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/commands.hpp"
#include "detail/measured_config.hpp"
#include "detail/output_paths.hpp"
#include "detail/profile_input.hpp"
#include "perflow/cli/config.hpp"
#include "perflow/cli/summary.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::cli::detail {
namespace {

using reader::MarkerKind;

struct CostsOptions {
  ProfileOptions profiles;
  std::string output;
  std::string schedule;
  std::string format = "text";
};

/// JSON names of the marker kinds, by MarkerKind.
constexpr std::array<std::string_view, reader::kMarkerKindCount> kKindKeys = {
    "forward", "backward", "weight", "full_backward"};

std::string kind_counts(const std::array<std::size_t, reader::kMarkerKindCount>& counts) {
  std::string out;
  for (int k = 0; k < reader::kMarkerKindCount; ++k) {
    out += fmt::format("{}{} {}", k == 0 ? "" : ", ", to_string(static_cast<MarkerKind>(k)),
                       counts[static_cast<std::size_t>(k)]);
  }
  return out;
}

std::string iterations_text(const reader::ProfileSummary& profile) {
  if (profile.iterations.empty()) return "no ProfilerStep ranges: one iteration";
  std::string steps;
  for (const std::int64_t n : profile.iterations) {
    steps += fmt::format("{}#{}", steps.empty() ? "ProfilerStep" : ", ", n);
  }
  return fmt::format("{}{}", steps,
                     profile.warmup_dropped
                         ? fmt::format(" (#{} is warm-up: not used)", profile.iterations.front())
                         : std::string());
}

std::string format_found(const Measurement& measurement) {
  const reader::ExtractedCosts& costs = measurement.costs;
  std::string out = fmt::format("markers: {}\n", measurement.marker_choice);
  out += fmt::format("profiles: {}\n", costs.profiles.size());
  for (const reader::ProfileSummary& p : costs.profiles) {
    out +=
        fmt::format("  {}: {}, rank {}{} -> stage {}, {} GPU ops ({} communication), {} ranges\n",
                    p.path, p.format, p.rank, p.rank_from_position ? " (by position)" : "", p.stage,
                    p.ops, p.communication_ops, p.ranges);
    out += fmt::format("    matched: {}; GPU ops attributed by {}\n", kind_counts(p.matched),
                       to_string(p.method));
    out += fmt::format("    iterations: {}\n", iterations_text(p));
    out += fmt::format(
        "    ignored: {} marked ranges without GPU compute, {} compute ops outside marked ranges, "
        "{} ops without a launch{}\n",
        p.empty_ranges, p.compute_ops_outside, p.ops_without_launch,
        p.tasks_outside_steps > 0
            ? fmt::format(", {} tasks outside ProfilerStep ranges (kept)", p.tasks_outside_steps)
            : std::string());
  }
  out +=
      "costs (per task: GPU busy time of its compute ops, lower median over microbatches and "
      "steady iterations; samples in parentheses):\n";
  for (const reader::StageCost& cost : costs.stages) {
    std::string line;
    for (int k = 0; k < reader::kMarkerKindCount; ++k) {
      const auto kind = static_cast<MarkerKind>(k);
      if (const auto value = cost.of(kind)) {
        line += fmt::format("{}{} {} ({})", line.empty() ? "" : ", ", to_string(kind),
                            format_duration(*value), cost.samples[static_cast<std::size_t>(k)]);
      }
    }
    out += fmt::format("  stage {}{}: {}\n", cost.stage,
                       costs.chunk_count > 1 ? fmt::format(" chunk {}", cost.chunk) : "", line);
  }
  if (!costs.communication.empty()) {
    out += "communication (per kernel; NCCL kernel time includes waiting for peers):\n";
    for (const reader::CommunicationCost& c : costs.communication) {
      out += fmt::format("  {} ({}): {} calls per rank on {} rank{}, {}median {} ({})\n", c.name,
                         reader::to_string(c.kind), c.count, c.ranks, c.ranks == 1 ? "" : "s",
                         c.bytes >= 0 ? fmt::format("{} bytes, ", c.bytes) : std::string(),
                         format_duration(c.median), c.method);
    }
  }
  return out;
}

/// What format_found says, as JSON.
nlohmann::json found_json(const Measurement& measurement) {
  const reader::ExtractedCosts& costs = measurement.costs;
  nlohmann::json profiles = nlohmann::json::array();
  for (const reader::ProfileSummary& p : costs.profiles) {
    nlohmann::json matched = nlohmann::json::object();
    for (std::size_t k = 0; k < kKindKeys.size(); ++k) matched[kKindKeys[k]] = p.matched[k];
    profiles.push_back(
        {{"path", p.path},
         {"format", p.format},
         {"rank", p.rank},
         {"rank_from_position", p.rank_from_position},
         {"stage", p.stage},
         {"gpu_ops", p.ops},
         {"communication_ops", p.communication_ops},
         {"ranges", p.ranges},
         {"matched", matched},
         {"attribution", p.method == reader::AttributionMethod::Launch ? "launch" : "time_overlap"},
         {"iterations", p.iterations},
         {"warmup_dropped", p.warmup_dropped},
         {"ignored",
          {{"empty_ranges", p.empty_ranges},
           {"compute_ops_outside", p.compute_ops_outside},
           {"ops_without_launch", p.ops_without_launch},
           {"tasks_outside_steps", p.tasks_outside_steps}}}});
  }
  nlohmann::json stages = nlohmann::json::array();
  for (const reader::StageCost& cost : costs.stages) {
    nlohmann::json stage = {{"stage", cost.stage}, {"chunk", cost.chunk}};
    for (std::size_t k = 0; k < kKindKeys.size(); ++k) {
      const std::optional<TimeNs> value = cost.cost[k];
      stage[kKindKeys[k]] = value
                                ? nlohmann::json{{"cost_ns", *value}, {"samples", cost.samples[k]}}
                                : nlohmann::json(nullptr);
    }
    stages.push_back(std::move(stage));
  }
  nlohmann::json communication = nlohmann::json::array();
  for (const reader::CommunicationCost& c : costs.communication) {
    communication.push_back({{"name", c.name},
                             {"kind", reader::to_string(c.kind)},
                             {"calls_per_rank", c.count},
                             {"ranks", c.ranks},
                             {"bytes", c.bytes >= 0 ? nlohmann::json(c.bytes) : nlohmann::json()},
                             {"median_ns", c.median},
                             {"median_method", c.method}});
  }
  return {{"markers", costs.marker},
          {"marker_choice", measurement.marker_choice},
          {"profiles", profiles},
          {"stages", stages},
          {"communication", communication}};
}

void run_costs(const CostsOptions& options) {
  const OutputFile output = {"-o", options.output};
  check_output_paths(profile_inputs(options.profiles), {&output, 1});

  if (!options.schedule.empty()) {  // before any profile is read
    try {
      (void)parallel::builtin_schedules().get(options.schedule);
    } catch (const UnknownNameError& e) {
      throw UnknownNameError(fmt::format("--schedule: {}", e.what()));
    }
  }
  const Measurement measurement = measure_profiles(options.profiles);
  const reader::ExtractedCosts& costs = measurement.costs;
  const std::string description =
      fmt::format("costs measured by perflow costs from {} profile{} ({} markers)",
                  costs.profiles.size(), costs.profiles.size() == 1 ? "" : "s", costs.marker);
  const MeasuredConfig config = measured_config(costs, options.schedule, description);
  const std::string text = config.document.dump(2) + "\n";

  // The file must be one `perflow simulate` accepts: check it exactly as simulate would.
  Config checked;
  EventGraph graph;
  try {
    checked = parse_config(nlohmann::json::parse(text), options.output);
    graph = build_graph(checked);
  } catch (const Error& e) {
    throw Error(
        fmt::format("the measured pipeline (stages {}, microbatches {}, chunks {}) "
                    "does not run as '{}': {}; choose a schedule with --schedule",
                    costs.stage_count, costs.microbatches, costs.chunk_count,
                    config.document["pipeline"]["schedule"].get<std::string>(), e.what()));
  }
  write_file_atomically(options.output, text);

  std::vector<std::string> notes = costs.notes;
  notes.insert(notes.end(), config.notes.begin(), config.notes.end());
  if (options.format == "json") {
    nlohmann::json out = found_json(measurement);
    const parallel::PipelineSpec& p = checked.pipeline;
    out["notes"] = notes;
    out["output"] = options.output;
    out["config"] = {{"schedule", p.schedule},
                     {"stages", p.stages},
                     {"microbatches", p.microbatches},
                     {"chunks", p.chunks},
                     {"split_backward", p.split_backward},
                     {"tasks", graph.task_count()}};
    fmt::print("{}\n", out.dump(1));
    return;
  }
  std::string out = format_found(measurement);
  if (!notes.empty()) {
    out += "notes:\n";
    for (const std::string& note : notes) out += fmt::format("  - {}\n", note);
  }
  out += fmt::format("costs written to {}: {}\n", options.output, describe_run(checked, graph));
  fmt::print("{}", out);
}

}  // namespace

void add_costs_command(CLI::App& app) {
  auto options = std::make_shared<CostsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "costs",
      "Measure per-stage F / B / W costs in GPU profiles and write them as a config that "
      "simulate runs as is");
  add_profile_options(*cmd, options->profiles);
  cmd->add_option("-o,--output", options->output, "The config to write (JSON)")->required();
  cmd->add_option("--schedule", options->schedule,
                  "The config's schedule (default: 1f1b; interleaved-1f1b with several chunks)");
  cmd->add_option("--format", options->format,
                  "Standard output: a text summary of what was found, or the same as JSON")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] { run_costs(*options); });
}

}  // namespace perflow::cli::detail
