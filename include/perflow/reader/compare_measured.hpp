#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perflow/core/time.hpp"
#include "perflow/reader/measured_timeline.hpp"
#include "perflow/reader/measurement.hpp"
#include "perflow/simulator/metrics.hpp"

namespace perflow::reader {

/// One stage's busy time per iteration, predicted and measured (nullopt where there is
/// none), and the predicted idle time (the step minus the predicted busy time).
struct StageComparison {
  std::uint32_t stage = 0;
  std::optional<TimeNs> predicted_busy;
  std::optional<TimeNs> measured_busy;
  std::optional<TimeNs> predicted_idle;
};

/// A config's predicted step against the execution measured in profiles
/// (`perflow compare-measured`, Python's perflow.compare_measured).
struct MeasuredComparison {
  std::string config_file;       ///< the config, as the output names it
  Measurement measurement;       ///< the profiles measured
  simulator::Metrics predicted;  ///< the config's simulated run
  MeasuredTimeline timeline;     ///< the measured run as a graph and trace
  simulator::Metrics measured;   ///< its metrics
  std::vector<MeasuredStep> steps;
  TimeNs predicted_step = 0;
  TimeNs measured_step = 0;             ///< the lower median over the steady steps
  std::size_t steady = 0;               ///< steady (not warm-up) iterations
  std::vector<StageComparison> stages;  ///< every stage predicted or measured, in order
  /// Where the measured step went, per stage (measured_breakdown), and its iteration (-1:
  /// the profile has no steps or there is no breakdown).
  std::vector<StepBreakdown> breakdowns;
  std::int64_t breakdown_iteration = -1;

  /// The picture's captions: "predicted: FILE" / "schedule, S stages x M microbatches" and
  /// "measured: N profiles" / "MARKERS markers, every iteration".
  std::string predicted_title;
  std::string predicted_subtitle;
  std::string measured_title;
  std::string measured_subtitle;
};

/// Measures `profiles` and compares them with `predicted`, the simulated run of the config
/// named `config_file` whose pipeline is `schedule`, `stages` x `microbatches`.
MeasuredComparison compare_measured(const std::string& config_file, const std::string& schedule,
                                    std::uint32_t stages, std::uint32_t microbatches,
                                    const simulator::Metrics& predicted,
                                    const ProfileRequest& profiles);

/// What `perflow compare-measured` prints: the text, or (`--format json`) the JSON document;
/// `timeline` names the picture written beside it ("": none).
std::string comparison_text(const MeasuredComparison& comparison, std::string_view timeline);
std::string comparison_json(const MeasuredComparison& comparison, std::string_view timeline);

}  // namespace perflow::reader
