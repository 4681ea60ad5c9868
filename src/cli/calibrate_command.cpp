// `perflow calibrate CONFIG MEASURED`: fits the GEMM efficiency of each GPU type of a /model
// config to measured costs (study::calibrate).
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "detail/set_option.hpp"
#include "detail/study.hpp"
#include "perflow/study/calibrate.hpp"
#include "perflow/study/config.hpp"

namespace perflow::cli::detail {
namespace {

struct CalibrateOptions {
  std::string config;
  std::string measured;
  std::string format = "text";
  std::vector<std::string> set;  // --set, on the config (not the measured costs)
};

void run_calibrate(const CalibrateOptions& options) {
  const Config config = load_config(options.config, parse_overrides(options.set));
  const Config measured = load_config(options.measured);
  const Calibration calibration = calibrate(config, measured);
  fmt::print("{}", options.format == "json" ? calibration_json(calibration)
                                            : calibration_text(calibration));
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
  add_set_option(*cmd, options->set);
  cmd->callback([options] { run_calibrate(*options); });
}

}  // namespace perflow::cli::detail
