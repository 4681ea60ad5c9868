// What `perflow costs` computes before it writes anything: the options checked, the
// profiles measured, the config written and checked. The CLI and Python's perflow.costs
// both call run_costs, so the two give the same file and the same errors.
#include "detail/costs_run.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::cli::detail {
namespace {

// A whole number in [min, max] given to `option`, or an error naming both.
std::uint32_t whole_option(std::string_view option, const std::string& text, std::uint32_t min,
                           std::uint32_t max) {
  std::uint64_t value = 0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < min || value > max) {
    throw Error(fmt::format("{}: expected a whole number from {} to {}, found '{}'", option, min,
                            max, text));
  }
  return static_cast<std::uint32_t>(value);
}

// --scale, or --layers-per-stage over --profiled-layers, checked before any profile is read.
MeasuredConfigOptions reshape_options(const CostsRequest& options) {
  // The CLI's parser refuses both together too; Python reaches here directly.
  if (!options.scale.empty() && !options.layers_per_stage.empty()) {
    throw Error("--scale excludes --layers-per-stage");
  }
  MeasuredConfigOptions out;
  out.schedule = options.schedule;
  constexpr std::uint32_t kMaxStages = 1 << 16;
  constexpr std::uint32_t kMaxMicrobatches = 1 << 24;
  if (!options.stages.empty()) out.stages = whole_option("--stages", options.stages, 1, kMaxStages);
  if (!options.microbatches.empty()) {
    out.microbatches = whole_option("--microbatches", options.microbatches, 1, kMaxMicrobatches);
  }
  if (!options.scale.empty()) {
    double value = 0;
    const char* const end = options.scale.data() + options.scale.size();
    const auto [ptr, ec] = std::from_chars(options.scale.data(), end, value);
    if (ec != std::errc() || ptr != end || !std::isfinite(value) || value <= 0 || value > 1e6) {
      throw Error(fmt::format(
          "--scale: expected a factor > 0 and at most 1e6 (e.g. 0.25), found '{}'", options.scale));
    }
    out.scale = value;
    out.scale_origin = fmt::format("--scale {}", options.scale);
  }
  if (!options.layers_per_stage.empty() || !options.profiled_layers.empty()) {
    if (options.layers_per_stage.empty() || options.profiled_layers.empty()) {
      throw Error(fmt::format(
          "{} needs {} as well: the layers one stage runs over the layers the profile ran",
          options.layers_per_stage.empty() ? "--profiled-layers" : "--layers-per-stage",
          options.layers_per_stage.empty() ? "--layers-per-stage" : "--profiled-layers"));
    }
    const std::uint32_t per_stage =
        whole_option("--layers-per-stage", options.layers_per_stage, 1, kMaxStages);
    const std::uint32_t profiled =
        whole_option("--profiled-layers", options.profiled_layers, 1, kMaxStages);
    out.scale = static_cast<double>(per_stage) / static_cast<double>(profiled);
    out.scale_origin =
        fmt::format("--layers-per-stage {} of --profiled-layers {}", per_stage, profiled);
    if (out.stages == 0) {
      if (profiled % per_stage != 0) {
        throw Error(fmt::format(
            "--layers-per-stage {}: the {} profiled layers do not split into stages of {} "
            "(found a remainder of {}); give --stages",
            per_stage, profiled, per_stage, profiled % per_stage));
      }
      out.stages = profiled / per_stage;
    }
  }
  return out;
}

}  // namespace

CostsRun run_costs(const CostsRequest& request, const std::string& config_file) {
  CostsRun run;
  run.reshape = reshape_options(request);
  if (!request.schedule.empty()) {  // before any profile is read
    try {
      (void)parallel::builtin_schedules().get(request.schedule);
    } catch (const UnknownNameError& e) {
      throw UnknownNameError(fmt::format("--schedule: {}", e.what()));
    }
  }
  run.measurement = measure_profiles(request.profiles);
  const reader::ExtractedCosts& costs = run.measurement.costs;
  const std::string description =
      fmt::format("costs measured by perflow costs from {} profile{} ({} markers)",
                  costs.profiles.size(), costs.profiles.size() == 1 ? "" : "s", costs.marker);
  if (run.reshape.stages > 0 && run.reshape.stages < costs.stage_count) {
    throw Error(
        fmt::format("--stages {}: expected at least the {} stages the profiles measured, found {}",
                    run.reshape.stages, costs.stage_count, run.reshape.stages));
  }
  run.config = measured_config(costs, run.reshape, description);
  run.text = run.config.document.dump(2) + "\n";

  // The file must be one `perflow simulate` accepts: check it exactly as simulate would.
  try {
    run.checked = parse_config(nlohmann::json::parse(run.text), config_file);
    run.graph = build_graph(run.checked);
  } catch (const Error& e) {
    const nlohmann::ordered_json& pipeline = run.config.document["pipeline"];
    throw Error(fmt::format(
        "the measured pipeline (stages {}, microbatches {}, chunks {}) "
        "does not run as '{}': {}; choose a schedule with --schedule",
        pipeline["stages"].get<std::uint32_t>(), pipeline["microbatches"].get<std::uint32_t>(),
        costs.chunk_count, pipeline["schedule"].get<std::string>(), e.what()));
  }
  run.notes = costs.notes;
  run.notes.insert(run.notes.end(), run.config.notes.begin(), run.config.notes.end());
  return run;
}

}  // namespace perflow::cli::detail
