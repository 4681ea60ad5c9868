#pragma once

#include <string>
#include <vector>

#include "measured_config.hpp"
#include "perflow/core/event_graph.hpp"
#include "perflow/study/config.hpp"
#include "profile_input.hpp"
#include "study.hpp"

namespace perflow::cli::detail {

/// What `perflow costs` is asked besides its outputs (-o, --format); Python's perflow.costs
/// takes the same. Reshaping options are kept as the text given ("" : not given), so that
/// errors show what was given: `--stages: expected a whole number from 1 to 65536, found '0'`.
struct CostsRequest {
  ProfileOptions profiles;
  std::string schedule;
  std::string stages;
  std::string microbatches;
  std::string scale;
  std::string layers_per_stage;
  std::string profiled_layers;
};

/// A measured config, checked as `perflow simulate` checks it.
struct CostsRun {
  Measurement measurement;
  MeasuredConfigOptions reshape;  ///< the reshaping options, parsed
  MeasuredConfig config;
  std::string text;  ///< the config file's text, byte for byte what `-o` writes
  Config checked;    ///< `text` parsed
  EventGraph graph;  ///< its task graph
  /// The readers' notes, then the config's.
  std::vector<std::string> notes;
};

/// Checks the options (before any profile is read), measures the profiles, writes the config
/// and checks it exactly as `perflow simulate` would; `config_file` names the config in the
/// message of a config the chosen schedule refuses (the -o path; "<costs>" from Python).
/// Throws Error (UnknownNameError for a --schedule or --preset not known).
CostsRun run_costs(const CostsRequest& request, const std::string& config_file);

}  // namespace perflow::cli::detail
