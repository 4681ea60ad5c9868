#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "perflow/core/time.hpp"
#include "perflow/explore/sweep.hpp"
#include "perflow/study/config.hpp"

namespace perflow::explore {

/// What one run of a sweep gives: its figures, or why its configuration is invalid.
struct RunOutcome {
  std::uint64_t run = 0;
  std::string error;  ///< empty when the run simulated
  TimeNs makespan = 0;
  TimeNs iteration_time = 0;  ///< the steady-state step (the makespan for one iteration)
  double bubble_ratio = 0;
  std::optional<double> tokens_per_s;  ///< with /model
  std::optional<double> mfu;           ///< with /model and every stage's GPU known
  double peak_memory = 0;              ///< the devices' largest peak of activations
  double peak_total_memory = 0;        ///< the devices' largest static + activation peak
  bool out_of_memory = false;          ///< a device beyond its memory capacity
  /// With out_of_memory: the device furthest beyond its capacity (largest peak / capacity).
  struct Overshoot {
    std::uint32_t device = 0;  ///< its index, the pipeline stage
    double needed = 0;         ///< its static + activation peak, bytes
    double capacity = 0;       ///< its memory, bytes
  };
  std::optional<Overshoot> overshoot;
  /// The process could not give the run the memory it needs (`error` says why): a limit of
  /// this machine, not a fact of the configuration. run_in_order retries such a run alone
  /// when others ran beside it, so that what is written does not depend on --jobs.
  bool refused_for_memory = false;
};

/// Builds and simulates a parsed config and fills the outcome's figures (`run` and `error`
/// untouched). Throws what build_graph and simulate throw.
void evaluate_config(const study::Config& config, RunOutcome& outcome);

/// Reads, builds and simulates run `run` of the sweep. A configuration the config reader,
/// a schedule or the simulator refuses is an outcome with its message, not an exception.
/// The memory the run is granted counts against the budget concurrent runs share
/// (SharedMemoryScope).
RunOutcome run_point(const Sweep& sweep, std::uint64_t run);

}  // namespace perflow::explore
