#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "perflow/study/config.hpp"

namespace perflow::study {

/// One GPU type's GEMM efficiency fitted to measured costs.
struct GemmFit {
  std::string device_type;
  std::size_t observations = 0;       ///< durations compared: F, and B + W, per stage and chunk
  double gemm_efficiency_before = 0;  ///< what the config uses
  double gemm_efficiency = 0;         ///< the fit, rounded to 3 decimals
  double mean_error_before = 0;       ///< mean |model - measured| / measured, as a fraction
  double mean_error_after = 0;
};

/// `perflow calibrate CONFIG MEASURED`: per GPU type (in name order), its fit.
struct Calibration {
  std::string config_file;    ///< the /model config's file (Config::file)
  std::string measured_file;  ///< the measured costs' file
  std::vector<GemmFit> device_types;
};

/// Fits the GEMM efficiency of each GPU type of `config` (a /model config with a GPU on
/// every stage) to `measured` (a config `perflow costs` wrote from profiles of the same run,
/// with the same stages and chunks). Throws ConfigError naming the file at fault.
Calibration calibrate(const Config& config, const Config& measured);

/// What `perflow calibrate` prints: the text, or (`--format json`) the JSON document.
std::string calibration_text(const Calibration& calibration);
std::string calibration_json(const Calibration& calibration);

}  // namespace perflow::study
