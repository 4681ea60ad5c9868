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
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

namespace perflow::reader {

/// One stage's busy time per step, predicted and measured (nullopt where there is none):
/// the GPU time of its tasks' kernels, launch gaps not included on either side; and the
/// predicted idle time (the predicted step minus that busy time).
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
  /// The predicted step's breakdown per device, in the measured one's terms
  /// (predicted_breakdown).
  std::vector<StepBreakdown> predicted_breakdowns;

  /// The picture's captions: "predicted: FILE" / "schedule, S stages x M microbatches" and
  /// "measured: N profiles" / "ProfilerStep#K, the median steady step" (the measured
  /// timeline holds that step only, when the profiles have steps).
  std::string predicted_title;
  std::string predicted_subtitle;
  std::string measured_title;
  std::string measured_subtitle;
};

/// Where one predicted step went on each device, in StepBreakdown's terms, so that it sets
/// beside a measured one part for part: the window is the last simulated iteration's
/// period (the makespan with one iteration); task_compute is its F, B, W, BW and R tasks'
/// time less their launch overhead (TaskCosts::launch_overhead), which is idle_in_tasks, as
/// a profile shows it between a task's kernels; communication is blocking transfers on the
/// compute lane plus the time the device's communication lanes run while its compute lane
/// is idle; other_compute is the rest of the compute lane's work (the optimizer);
/// host_gaps is what is left (bubbles: nothing runs). A task cut by the window counts its
/// launch overhead in proportion. The parts add up to the window exactly.
std::vector<StepBreakdown> predicted_breakdown(const study::Config& config, const EventGraph& graph,
                                               const simulator::SimulationResult& predicted);

/// Measures `profiles` and compares them with `predicted`, the simulated run of `config`
/// (its `graph`). The predicted step is the steady-state step (Metrics::iteration_time);
/// the measured one, the lower median over steady iterations. Throws ConfigError at the
/// config's /pipeline field when the profiles measured another pipeline shape (stages,
/// chunks per device, microbatches per iteration): a prediction is compared with the run
/// it describes.
MeasuredComparison compare_measured(const study::Config& config, const EventGraph& graph,
                                    const simulator::SimulationResult& predicted,
                                    const ProfileRequest& profiles);

/// What `perflow compare-measured` prints: the text, or (`--format json`) the JSON document;
/// `timeline` names the picture written beside it ("": none).
std::string comparison_text(const MeasuredComparison& comparison, std::string_view timeline);
std::string comparison_json(const MeasuredComparison& comparison, std::string_view timeline);

}  // namespace perflow::reader
