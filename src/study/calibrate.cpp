// `perflow calibrate CONFIG MEASURED` (and Python's perflow.calibrate): fits the GEMM
// efficiency of each GPU type of a /model config to measured costs (a config `perflow costs`
// wrote from profiles of the same run).
#include "perflow/study/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perflow/core/error.hpp"

namespace perflow::study {
namespace {

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

}  // namespace

Calibration calibrate(const Config& config, const Config& measured) {
  if (!config.model || config.model->positions.empty() ||
      std::find(config.model->timed.begin(), config.model->timed.end(), false) !=
          config.model->timed.end()) {
    throw ConfigError(config.file, "",
                      "calibrate fits a /model config's GPUs: give /model and a GPU on every "
                      "stage (/device or a device type's preset)");
  }
  const std::uint32_t stages = config.pipeline.stages;
  const std::uint32_t chunks = config.pipeline.chunks;
  if (measured.pipeline.stages != stages || measured.pipeline.chunks != chunks) {
    throw ConfigError(
        measured.file, "/pipeline",
        fmt::format("measured {} stages x {} chunks; {} has {} x {}", measured.pipeline.stages,
                    measured.pipeline.chunks, config.file, stages, chunks));
  }
  std::map<std::string, TypeFit> fits;  // by GPU type, in name order
  for (std::uint32_t s = 0; s < stages; ++s) {
    TypeFit& fit = fits[config.devices[s].type];
    fit.used = config.model->gemm_max[s];
    for (std::uint32_t c = 0; c < chunks; ++c) {
      const model::PositionCosts& p = config.model->positions[std::size_t{s} * chunks + c];
      double gemm_f = 0;
      double gemm_bw = 0;
      // The GEMMs' arithmetic, what scales with 1 / gemm_max (not their latency, fix-ups or
      // memory-bound time).
      for (const model::OperatorTime& op : p.operators) {
        if (!op.gemm) continue;
        gemm_f += op.plans[model::kForward].arithmetic_ns * op.count;
        gemm_bw +=
            (op.plans[model::kBackward].arithmetic_ns + op.plans[model::kWeight].arithmetic_ns) *
            op.count;
      }
      // The config's durations include what the model adds beyond the operators (the
      // tensor-parallel all-reduces); B and W are compared together, as a profile without
      // a split backward measures them.
      const parallel::TaskCosts& model_costs = config.costs.at(StageId{s}, c);
      const parallel::TaskCosts& m = measured.costs.at(StageId{s}, c);
      // A task its host bounds (the host floor) says nothing of the GEMMs' efficiency: left out.
      const double model_bw =
          double(model_costs.duration(TaskKind::BW) - model_costs.launch_overhead);
      const bool forward_by_host = std::llround(p.forward_host.ns) >= model_costs.forward;
      const bool backward_by_host =
          std::llround(p.backward_host.ns + p.weight_host.ns) >= std::llround(model_bw);
      if (m.forward > 0 && !forward_by_host) {
        fit.observations.push_back(
            {gemm_f, double(model_costs.forward) - gemm_f, double(m.forward)});
      }
      if (m.backward + m.weight > 0 && !backward_by_host) {
        fit.observations.push_back({gemm_bw, model_bw - gemm_bw, double(m.backward + m.weight)});
      }
    }
  }
  Calibration out{config.file, measured.file, {}};
  for (const auto& [type, fit] : fits) {
    const std::optional<double> fitted = model::fit_gemm_max(fit.observations, fit.used);
    if (!fitted || *fitted > 1) {
      throw ConfigError(
          measured.file, "",
          fmt::format("the measured costs of {} cannot be fitted with a GEMM "
                      "efficiency in (0, 1]{}",
                      type, fitted ? fmt::format(" (the fit gives {:.3f})", *fitted) : ""));
    }
    out.device_types.push_back(
        {type, fit.observations.size(), fit.used, std::round(*fitted * 1000) / 1000,
         mean_error(fit.observations, 1.0), mean_error(fit.observations, fit.used / *fitted)});
  }
  return out;
}

std::string calibration_json(const Calibration& calibration) {
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  for (const GemmFit& t : calibration.device_types) {
    types.push_back({{"device_type", t.device_type},
                     {"observations", t.observations},
                     {"gemm_efficiency_before", t.gemm_efficiency_before},
                     {"gemm_efficiency", t.gemm_efficiency},
                     {"mean_error_before", t.mean_error_before},
                     {"mean_error_after", t.mean_error_after}});
  }
  return nlohmann::ordered_json{{"device_types", types}}.dump(1) + "\n";
}

std::string calibration_text(const Calibration& calibration) {
  std::string out = fmt::format("{} against {} (F, and B + W, per stage and chunk):\n",
                                calibration.config_file, calibration.measured_file);
  for (const GemmFit& t : calibration.device_types) {
    out += fmt::format(
        "  {}: gemm_efficiency {:.3f} -> {:.3f}; mean |error| {:.1f}% -> {:.1f}% ({} "
        "durations)\n",
        t.device_type, t.gemm_efficiency_before, t.gemm_efficiency, t.mean_error_before * 100,
        t.mean_error_after * 100, t.observations);
  }
  out +=
      "Use it: \"device_types\": {\"<type>\": {\"preset\": ..., \"gemm_efficiency\": "
      "<fitted>}} (with /placement), instead of /device.\n";
  return out;
}

}  // namespace perflow::study
