#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "perflow/core/time.hpp"
#include "perflow/reader/cost_extraction.hpp"

namespace perflow::reader {

/// Which profiles to measure and how to find the tasks in them: what `perflow costs`,
/// `measured` and `compare-measured` take as PROFILE..., --preset | --pattern and
/// --rank-stage, and Python's perflow.costs and compare_measured as keyword arguments.
struct ProfileRequest {
  std::vector<std::string> profiles;
  std::string preset;   ///< a marker preset's name ("": not given)
  std::string pattern;  ///< a marker pattern ("": not given); excludes `preset`
  /// "RANK=STAGE" items, one each: the pipeline stage a rank ran.
  std::vector<std::string> rank_stage;
};

/// Profiles read and measured.
struct Measurement {
  ExtractedCosts costs;
  /// How the markers were chosen: "--preset ddp", "--pattern '...'", or "ddp (detected: the
  /// preset matching the most ranges)".
  std::string marker_choice;
};

/// Reads every profile (read_profile picks the format), picks the markers (the preset or
/// pattern given; otherwise the preset that matches the most ranges, ties to the first
/// listed) and extracts the costs. Errors name the file; a bad request is an OptionError
/// naming its field (preset, pattern, rank_stage), before any file is read.
Measurement measure_profiles(const ProfileRequest& request);

/// The measured step of one iteration: from its first task's first op to its last task's
/// last op over all profiles (ranks' clocks are not aligned: skew adds to it).
struct MeasuredStep {
  std::int64_t iteration = -1;  ///< ProfilerStep number; -1: no steps
  bool warmup = false;
  TimeNs time = 0;
};
std::vector<MeasuredStep> measured_steps(const ExtractedCosts& costs);

/// The lower median of the steady steps' times (every step's when all are warm-up).
TimeNs median_step_time(const std::vector<MeasuredStep>& steps);

/// Per stage (index = stage): its busy time in one iteration, summed over its tasks, the
/// lower median over its profiles and steady iterations; -1 for a stage not measured.
std::vector<TimeNs> measured_stage_busy(const ExtractedCosts& costs);

/// An exact duration for a config: "1315us", "2.5us", "1234.567us" (decimal microseconds,
/// which the config reads back exactly).
std::string exact_duration(TimeNs ns);

}  // namespace perflow::reader
