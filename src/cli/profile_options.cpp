// The command line face of reading profiles: the options every profile command takes
// (PROFILE..., --preset | --pattern, --rank-stage) and the profiles as inputs that no output
// may overwrite. The reading itself is the reader's (perflow/reader/measurement.hpp), which
// Python's perflow.costs and compare_measured share.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "detail/profile_input.hpp"
#include "perflow/reader/markers.hpp"

namespace perflow::cli::detail {

void add_profile_options(CLI::App& command, ProfileOptions& options) {
  command
      .add_option("profiles", options.profiles,
                  "Profiles, one per rank: PyTorch profiler (Kineto) JSON, Nsight Systems "
                  "SQLite or CSV, rocprof CSV/JSON, rocpd SQLite (ROCm 7)")
      ->required();
  std::string presets;
  for (const reader::MarkerPreset& preset : reader::marker_presets()) {
    presets += fmt::format("{}{}", presets.empty() ? "" : ", ", preset.name);
  }
  CLI::Option* preset =
      command.add_option("--preset", options.preset,
                         "Marker preset (" + presets + "); default: the one matching most ranges");
  CLI::Option* pattern = command.add_option(
      "--pattern", options.pattern,
      "Regular expression with named captures (?<kind>..) and optional (?<stage>..) "
      "(?<mb>..) (?<chunk>..)");
  preset->excludes(pattern);
  // One value per flag (or a comma-separated list), so that profiles after it stay
  // positional.
  command
      .add_option("--rank-stage", options.rank_stage,
                  "RANK=STAGE: the pipeline stage a rank ran (repeatable, or comma-separated; "
                  "default: the marker's stage, else the rank)")
      ->expected(1)
      ->allow_extra_args(false)
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

std::vector<InputFile> profile_inputs(const ProfileOptions& options) {
  std::vector<InputFile> inputs;
  for (const std::string& profile : options.profiles) inputs.push_back({"a profile", profile});
  return inputs;
}

}  // namespace perflow::cli::detail
