// `perflow calibrate CONFIG MEASURED`: fits the GEMM efficiency of each GPU type of a /model
// config to measured costs (a config `perflow costs` wrote from profiles of the same run).
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/commands.hpp"
#include "detail/study.hpp"
#include "perflow/core/error.hpp"
#include "perflow/study/config.hpp"

namespace perflow::cli::detail {
namespace {

struct CalibrateOptions {
  std::string config;
  std::string measured;
  std::string format = "text";
};

// Per GPU type: the model's durations split into GEMM and the rest, against the measured.
struct TypeFit {
  std::vector<model::Observation> observations;
  double used = 0;
};

double mean_error(const std::vector<model::Observation>& observations, double scale) {
  double total = 0;
  for (const model::Observation& o : observations) {
    total += std::abs(o.gemm_ns * scale + o.other_ns - o.measured_ns) / o.measured_ns;
  }
  return total / double(observations.size());
}

void calibrate(const CalibrateOptions& options) {
  const Config config = load_config(options.config);
  const Config measured = load_config(options.measured);
  if (!config.model || config.model->positions.empty() ||
      std::find(config.model->timed.begin(), config.model->timed.end(), false) !=
          config.model->timed.end()) {
    throw ConfigError(options.config, "",
                      "calibrate fits a /model config's GPUs: give /model and a GPU on every "
                      "stage (/device or a device type's preset)");
  }
  const std::uint32_t stages = config.pipeline.stages;
  const std::uint32_t chunks = config.pipeline.chunks;
  if (measured.pipeline.stages != stages || measured.pipeline.chunks != chunks) {
    throw ConfigError(
        options.measured, "/pipeline",
        fmt::format("measured {} stages x {} chunks; {} has {} x {}", measured.pipeline.stages,
                    measured.pipeline.chunks, options.config, stages, chunks));
  }
  std::map<std::string, TypeFit> fits;  // by GPU type, in name order
  for (std::uint32_t s = 0; s < stages; ++s) {
    TypeFit& fit = fits[config.devices[s].type];
    fit.used = config.model->gemm_max[s];
    for (std::uint32_t c = 0; c < chunks; ++c) {
      const model::PositionCosts& p = config.model->positions[std::size_t{s} * chunks + c];
      double gemm_f = 0;
      double gemm_bw = 0;
      for (const model::OperatorTime& op : p.operators) {
        if (!op.gemm) continue;
        gemm_f += op.seconds[model::kForward] * 1e9;
        gemm_bw += (op.seconds[model::kBackward] + op.seconds[model::kWeight]) * 1e9;
      }
      // The config's durations include what the model adds beyond the operators (the
      // tensor-parallel all-reduces); B and W are compared together, as a profile without
      // a split backward measures them.
      const parallel::TaskCosts& model_costs = config.costs.at(StageId{s}, c);
      const parallel::TaskCosts& m = measured.costs.at(StageId{s}, c);
      const double model_bw = double(model_costs.backward + model_costs.weight);
      if (m.forward > 0) {
        fit.observations.push_back(
            {gemm_f, double(model_costs.forward) - gemm_f, double(m.forward)});
      }
      if (m.backward + m.weight > 0) {
        fit.observations.push_back({gemm_bw, model_bw - gemm_bw, double(m.backward + m.weight)});
      }
    }
  }
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  for (const auto& [type, fit] : fits) {
    const std::optional<double> fitted = model::fit_gemm_max(fit.observations, fit.used);
    if (!fitted || *fitted > 1) {
      throw ConfigError(
          options.measured, "",
          fmt::format("the measured costs of {} cannot be fitted with a GEMM "
                      "efficiency in (0, 1]{}",
                      type, fitted ? fmt::format(" (the fit gives {:.3f})", *fitted) : ""));
    }
    types.push_back({{"device_type", type},
                     {"observations", fit.observations.size()},
                     {"gemm_efficiency_before", fit.used},
                     {"gemm_efficiency", std::round(*fitted * 1000) / 1000},
                     {"mean_error_before", mean_error(fit.observations, 1.0)},
                     {"mean_error_after", mean_error(fit.observations, fit.used / *fitted)}});
  }
  if (options.format == "json") {
    fmt::print("{}\n", nlohmann::ordered_json{{"device_types", types}}.dump(1));
    return;
  }
  fmt::print("{} against {} (F, and B + W, per stage and chunk):\n", options.config,
             options.measured);
  for (const auto& t : types) {
    fmt::print(
        "  {}: gemm_efficiency {:.3f} -> {:.3f}; mean |error| {:.1f}% -> {:.1f}% ({} "
        "durations)\n",
        t["device_type"].get<std::string>(), t["gemm_efficiency_before"].get<double>(),
        t["gemm_efficiency"].get<double>(), t["mean_error_before"].get<double>() * 100,
        t["mean_error_after"].get<double>() * 100, t["observations"].get<std::size_t>());
  }
  fmt::print(
      "Use it: \"device_types\": {{\"<type>\": {{\"preset\": ..., \"gemm_efficiency\": "
      "<fitted>}}}} (with /placement), instead of /device.\n");
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Fit a /model config's GEMM efficiency per GPU type to measured costs");
  cmd->add_option("config", options->config, "Config with /model (JSON)")->required();
  cmd->add_option("measured", options->measured,
                  "Measured costs: a config perflow costs wrote from profiles of the run")
      ->required();
  cmd->add_option("--format", options->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] { calibrate(*options); });
}

}  // namespace perflow::cli::detail
