#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/option_error.hpp"
#include "perflow/reader/measured_config.hpp"
#include "perflow/reader/measurement.hpp"
#include "perflow/study/config.hpp"

namespace perflow::reader {

/// What `perflow costs` is asked besides its outputs (-o, --format); Python's perflow.costs
/// takes the same. Unset options keep what the profiles measured.
struct CostsRequest {
  ProfileRequest profiles;
  std::string schedule;  ///< "": 1f1b, or interleaved-1f1b with several chunks
  std::optional<std::int64_t> stages;
  std::optional<std::int64_t> microbatches;
  std::optional<double> scale;  ///< excludes layers_per_stage
  /// How scale was written where it was given, for the config's note ("0.50" names it as
  /// `--scale 0.50`); "": as the number prints.
  std::string scale_text;
  /// Together: scale = layers_per_stage / profiled_layers (and, without stages, stages =
  /// profiled_layers / layers_per_stage).
  std::optional<std::int64_t> layers_per_stage;
  std::optional<std::int64_t> profiled_layers;
};

/// The bounds of CostsRequest's whole numbers: stages, layers_per_stage and profiled_layers
/// from 1 to kMaxStages, microbatches from 1 to kMaxMicrobatches; scale in (0, 1e6].
inline constexpr std::int64_t kMaxStages = 1 << 16;
inline constexpr std::int64_t kMaxMicrobatches = 1 << 24;
bool scale_in_range(double scale);

/// The errors of a value out of those bounds, or not a number at all, as given (`found`):
/// `stages: expected a whole number from 1 to 65536, found 'two'`.
OptionError whole_number_error(const std::string& field, std::int64_t min, std::int64_t max,
                               std::string_view found);
OptionError scale_error(std::string_view found);

/// A measured config, checked as `perflow simulate` checks it.
struct CostsRun {
  Measurement measurement;
  MeasuredConfigOptions reshape;  ///< the reshaping options, checked
  MeasuredConfig config;
  std::string text;                ///< the config file's text, byte for byte what `-o` writes
  study::Config checked;           ///< `text` parsed
  EventGraph graph;                ///< its task graph
  std::vector<std::string> notes;  ///< the readers' notes, then the config's
};

/// Checks the request (before any profile is read: a bad value is an OptionError naming its
/// field, an unknown schedule or preset an UnknownNameError), measures the profiles, writes
/// the config and checks it exactly as `perflow simulate` would; `config_file` names the
/// config in the message of a config the chosen schedule refuses (the -o path; "<costs>"
/// from Python).
CostsRun run_costs(const CostsRequest& request, const std::string& config_file);

}  // namespace perflow::reader
