// What `perflow costs` computes before it writes anything: the request checked, the
// profiles measured, the config written and checked. The CLI and Python's perflow.costs
// both call run_costs, so the two give the same file and the same errors.
#include "perflow/reader/costs.hpp"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perflow/core/error.hpp"
#include "perflow/core/option_error.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::reader {
namespace {

// A whole number in [min, max] given to `field`, or an error naming both.
std::uint32_t whole_option(const char* field, std::int64_t value, std::int64_t min,
                           std::int64_t max) {
  if (value < min || value > max)
    throw whole_number_error(field, min, max, fmt::format("{}", value));
  return static_cast<std::uint32_t>(value);
}

// scale, or layers_per_stage over profiled_layers, checked before any profile is read.
MeasuredConfigOptions reshape_options(const CostsRequest& options) {
  // The CLI's parser refuses both together too; Python reaches here directly.
  if (options.scale && options.layers_per_stage) {
    throw OptionError("scale", {OptionError::field("scale"), OptionError::text(" excludes "),
                                OptionError::field("layers_per_stage")});
  }
  MeasuredConfigOptions out;
  out.schedule = options.schedule;
  if (options.stages) out.stages = whole_option("stages", *options.stages, 1, kMaxStages);
  if (options.microbatches) {
    out.microbatches = whole_option("microbatches", *options.microbatches, 1, kMaxMicrobatches);
  }
  if (options.scale) {
    const double value = *options.scale;
    if (!scale_in_range(value)) throw scale_error(fmt::format("{}", value));
    out.scale = value;
    out.scale_origin = fmt::format(
        "--scale {}", options.scale_text.empty() ? fmt::format("{}", value) : options.scale_text);
  }
  if (options.layers_per_stage || options.profiled_layers) {
    if (!options.layers_per_stage || !options.profiled_layers) {
      const char* given = options.layers_per_stage ? "layers_per_stage" : "profiled_layers";
      const char* missing = options.layers_per_stage ? "profiled_layers" : "layers_per_stage";
      throw OptionError(given, {OptionError::field(given), OptionError::text(" needs "),
                                OptionError::field(missing),
                                OptionError::text(" as well: the layers one stage runs over "
                                                  "the layers the profile ran")});
    }
    const std::uint32_t per_stage =
        whole_option("layers_per_stage", *options.layers_per_stage, 1, kMaxStages);
    const std::uint32_t profiled =
        whole_option("profiled_layers", *options.profiled_layers, 1, kMaxStages);
    out.scale = static_cast<double>(per_stage) / static_cast<double>(profiled);
    out.scale_origin =
        fmt::format("--layers-per-stage {} of --profiled-layers {}", per_stage, profiled);
    if (out.stages == 0) {
      if (profiled % per_stage != 0) {
        throw OptionError(
            "layers_per_stage",
            {OptionError::field("layers_per_stage", fmt::format("{}", per_stage)),
             OptionError::text(fmt::format(": the {} profiled layers do not split into stages "
                                           "of {} (found a remainder of {}); give ",
                                           profiled, per_stage, profiled % per_stage)),
             OptionError::field("stages")});
      }
      out.stages = profiled / per_stage;
    }
  }
  return out;
}

}  // namespace

OptionError whole_number_error(const std::string& field, std::int64_t min, std::int64_t max,
                               std::string_view found) {
  return OptionError(
      field, {OptionError::field(field),
              OptionError::text(fmt::format(": expected a whole number from {} to {}, found '{}'",
                                            min, max, found))});
}

bool scale_in_range(double scale) { return std::isfinite(scale) && scale > 0 && scale <= 1e6; }

OptionError scale_error(std::string_view found) {
  return OptionError(
      "scale", {OptionError::field("scale"),
                OptionError::text(fmt::format(
                    ": expected a factor > 0 and at most 1e6 (e.g. 0.25), found '{}'", found))});
}

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
  const ExtractedCosts& costs = run.measurement.costs;
  const std::string description =
      fmt::format("costs measured by perflow costs from {} profile{} ({} markers)",
                  costs.profiles.size(), costs.profiles.size() == 1 ? "" : "s", costs.marker);
  if (run.reshape.stages > 0 && run.reshape.stages < costs.stage_count) {
    throw OptionError("stages",
                      {OptionError::field("stages", fmt::format("{}", run.reshape.stages)),
                       OptionError::text(fmt::format(
                           ": expected at least the {} stages the profiles measured, found {}",
                           costs.stage_count, run.reshape.stages))});
  }
  run.config = measured_config(costs, run.reshape, description);
  run.text = run.config.document.dump(2) + "\n";
  // The file must be one `perflow simulate` accepts: check it exactly as simulate would.
  try {
    run.checked = study::parse_config(nlohmann::json::parse(run.text), config_file);
    run.graph = study::build_graph(run.checked);
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

}  // namespace perflow::reader
