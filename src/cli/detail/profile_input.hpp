#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "output_paths.hpp"
#include "perflow/core/time.hpp"
#include "perflow/reader/cost_extraction.hpp"

// Only declared here: the library that reads profiles (shared with the Python module) does
// not depend on CLI11; the executable's profile_options.cpp defines what takes a CLI::App.
namespace CLI {
class App;
}  // namespace CLI

namespace perflow::cli::detail {

/// The options every command that reads profiles takes: PROFILE..., --preset | --pattern,
/// --rank-stage R=S (each item one R=S: a comma-separated list is split before).
struct ProfileOptions {
  std::vector<std::string> profiles;
  std::string preset;
  std::string pattern;
  std::vector<std::string> rank_stage;
};

/// Adds those options to a command (profile_options.cpp, the executable's).
void add_profile_options(CLI::App& command, ProfileOptions& options);

/// The profiles as inputs for check_output_paths ("a profile"; profile_options.cpp).
std::vector<InputFile> profile_inputs(const ProfileOptions& options);

/// Profiles read and measured.
struct Measurement {
  reader::ExtractedCosts costs;
  /// How the markers were chosen: "--preset ddp", "--pattern '...'", or "ddp (detected: the
  /// preset matching the most ranges)".
  std::string marker_choice;
};

/// Reads every profile (read_profile picks the format), picks the markers (the preset or
/// pattern given; otherwise the preset that matches the most ranges, ties to the first
/// listed) and extracts the costs. Errors name the file.
Measurement measure_profiles(const ProfileOptions& options);

/// The measured step of one iteration: from its first task's first op to its last task's
/// last op over all profiles (ranks' clocks are not aligned: skew adds to it).
struct MeasuredStep {
  std::int64_t iteration = -1;  ///< ProfilerStep number; -1: no steps
  bool warmup = false;
  TimeNs time = 0;
};
std::vector<MeasuredStep> measured_steps(const reader::ExtractedCosts& costs);

/// The lower median of the steady steps' times (every step's when all are warm-up).
TimeNs median_step_time(const std::vector<MeasuredStep>& steps);

/// Per stage (index = stage): its busy time in one iteration, summed over its tasks, the
/// lower median over its profiles and steady iterations; -1 for a stage not measured.
std::vector<TimeNs> measured_stage_busy(const reader::ExtractedCosts& costs);

/// An exact duration for a config: "1315us", "2.5us", "1234.567us" (decimal microseconds,
/// which the config reads back exactly).
std::string exact_duration(TimeNs ns);

}  // namespace perflow::cli::detail
