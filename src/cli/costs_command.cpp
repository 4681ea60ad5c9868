// `perflow costs PROFILE... -o costs.json`: per-stage F / B / W costs measured in profiles,
// written as a config that `perflow simulate` runs as is.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "detail/profile_input.hpp"
#include "detail/study.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/reader/costs.hpp"
#include "perflow/study/config.hpp"
#include "perflow/study/summary.hpp"

namespace perflow::cli::detail {
namespace {

using reader::MarkerKind;
using reader::Measurement;

// The profiles, the reshaping options as given ("": not given) and where the command writes
// what it found.
struct CostsOptions {
  ProfileOptions profiles;
  OutputRules rules;
  std::string schedule;
  std::string stages;
  std::string microbatches;
  std::string scale;
  std::string layers_per_stage;
  std::string profiled_layers;
  std::string output;
  std::string format = "text";
};

// A whole number option from 1 to `max`, or the error the library gives for it with the text
// as given ("found '0x'").
std::optional<std::int64_t> whole_option(const char* field, const std::string& text,
                                         std::int64_t max) {
  if (text.empty()) return std::nullopt;
  std::int64_t value = 0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < 1 || value > max) {
    throw reader::whole_number_error(field, 1, max, text);
  }
  return value;
}

// The typed request from the options' text; the library checks the rest.
reader::CostsRequest costs_request(const CostsOptions& options) {
  reader::CostsRequest request;
  request.profiles = options.profiles;
  request.schedule = options.schedule;
  request.stages = whole_option("stages", options.stages, reader::kMaxStages);
  request.microbatches =
      whole_option("microbatches", options.microbatches, reader::kMaxMicrobatches);
  if (!options.scale.empty()) {
    double value = 0;
    const char* const end = options.scale.data() + options.scale.size();
    const auto [ptr, ec] = std::from_chars(options.scale.data(), end, value);
    if (ec != std::errc() || ptr != end || !reader::scale_in_range(value)) {
      throw reader::scale_error(options.scale);
    }
    request.scale = value;
    request.scale_text = options.scale;
  }
  if (options.layers_per_stage.empty() != options.profiled_layers.empty()) {
    // One without the other: the library says which is missing (the value is not read).
    if (!options.layers_per_stage.empty()) request.layers_per_stage = 1;
    if (!options.profiled_layers.empty()) request.profiled_layers = 1;
  } else {
    request.layers_per_stage =
        whole_option("layers_per_stage", options.layers_per_stage, reader::kMaxStages);
    request.profiled_layers =
        whole_option("profiled_layers", options.profiled_layers, reader::kMaxStages);
  }
  return request;
}

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
    if (cost.activation) line += fmt::format(", activation {} bytes", *cost.activation);
    out += fmt::format("  stage {}{}: {}\n", cost.stage,
                       costs.chunk_count > 1 ? fmt::format(" chunk {}", cost.chunk) : "", line);
  }
  if (costs.launch_overhead) {
    out += fmt::format(
        "launch overhead (GPU idle between a task's kernels, lower median over tasks): {}\n",
        format_duration(*costs.launch_overhead));
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
  const reader::MeasuredCommunication& net = costs.network;
  const auto link = [](const std::optional<reader::FittedLink>& l) {
    if (!l) return std::string();
    return fmt::format(", link latency {}{} ({} calls: {})", format_duration(l->latency),
                       l->bandwidth > 0 ? fmt::format(", bandwidth {} B/s", l->bandwidth) : "",
                       l->samples, l->method);
  };
  if (net.gradient_bytes) {
    out +=
        fmt::format("data-parallel gradient all-reduce: {} bytes per iteration over {} ranks{}\n",
                    *net.gradient_bytes, net.data_parallel, link(net.data_parallel_link));
  }
  if (net.tp_allreduce_bytes) {
    out += fmt::format("tensor-parallel all-reduce (in F): {} bytes, {} per F over {} ranks{}\n",
                       *net.tp_allreduce_bytes, net.tp_allreduces, net.tensor_parallel,
                       link(net.tensor_parallel_link));
  }
  if (net.boundary_bytes) {
    out += fmt::format("point-to-point: {} bytes per transfer{}{}\n", *net.boundary_bytes,
                       link(net.p2p_link),
                       net.p2p_blocking.value_or(false) ? "; blocking compute" : "");
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
    stage["activation_bytes"] =
        cost.activation ? nlohmann::json(*cost.activation) : nlohmann::json();
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
  const reader::MeasuredCommunication& net = costs.network;
  const auto link = [](const std::optional<reader::FittedLink>& l) {
    if (!l) return nlohmann::json();
    return nlohmann::json{
        {"latency_ns", l->latency},
        {"bandwidth", l->bandwidth > 0 ? nlohmann::json(l->bandwidth) : nlohmann::json()},
        {"samples", l->samples},
        {"method", l->method}};
  };
  const auto bytes = [](const std::optional<std::int64_t>& b) {
    return b ? nlohmann::json(*b) : nlohmann::json();
  };
  const nlohmann::json network = {
      {"gradient_bytes", bytes(net.gradient_bytes)},
      {"data_parallel", net.data_parallel},
      {"data_parallel_link", link(net.data_parallel_link)},
      {"tp_allreduce_bytes", bytes(net.tp_allreduce_bytes)},
      {"tp_allreduces", net.tp_allreduces},
      {"tensor_parallel", net.tensor_parallel},
      {"tensor_parallel_link", link(net.tensor_parallel_link)},
      {"boundary_bytes", bytes(net.boundary_bytes)},
      {"p2p_link", link(net.p2p_link)},
      {"p2p_mode", net.p2p_blocking ? nlohmann::json(*net.p2p_blocking ? "blocking" : "async")
                                    : nlohmann::json()}};
  for (std::size_t i = 0; i < costs.profiles.size(); ++i) {
    profiles[i]["memory_events"] = costs.profiles[i].memory_events;
  }
  return {{"markers", costs.marker},
          {"marker_choice", measurement.marker_choice},
          {"profiles", profiles},
          {"stages", stages},
          {"communication", communication},
          {"launch_overhead_ns",
           costs.launch_overhead ? nlohmann::json(*costs.launch_overhead) : nlohmann::json()},
          {"network", network}};
}

void run_costs_command(const CostsOptions& options) {
  const OutputFile output = {"-o", options.output};
  check_output_paths(profile_inputs(options.profiles), {&output, 1}, options.rules);
  const reader::CostsRun run = reader::run_costs(costs_request(options), options.output);
  const Measurement& measurement = run.measurement;
  const Config& checked = run.checked;
  const EventGraph& graph = run.graph;
  const std::vector<std::string>& notes = run.notes;
  write_file_atomically(options.output, run.text);

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
                     {"tasks", graph.task_count()},
                     {"scale", run.reshape.scale}};
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
  output_option(cmd->add_option("-o,--output", options->output, "The config to write (JSON)"))
      ->required();
  options->rules.add_options(*cmd);
  cmd->add_option("--schedule", options->schedule,
                  "The config's schedule (default: 1f1b; interleaved-1f1b with several chunks)");
  cmd->add_option("--format", options->format,
                  "Standard output: a text summary of what was found, or the same as JSON")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--stages", options->stages,
                  "Pipeline stages of the config (default: the stages measured); stages not "
                  "measured get the uniform costs");
  cmd->add_option("--microbatches", options->microbatches,
                  "Microbatches per step (default: the most measured in one iteration)");
  CLI::Option* scale = cmd->add_option(
      "--scale", options->scale,
      "Multiply the measured durations, launch overhead, activation and gradient bytes by X");
  CLI::Option* per_stage = cmd->add_option(
      "--layers-per-stage", options->layers_per_stage,
      "Layers one stage runs: scales a profile of --profiled-layers layers (e.g. a whole "
      "model on one GPU) to a pipeline split; default --stages: profiled / per stage");
  cmd->add_option("--profiled-layers", options->profiled_layers,
                  "Layers the profiled run computed (with --layers-per-stage)");
  scale->excludes(per_stage);
  cmd->callback([options] { run_costs_command(*options); });
}

}  // namespace perflow::cli::detail
