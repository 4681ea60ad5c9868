#pragma once

#include <cstddef>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/simulator/options.hpp"

namespace perflow::simulator {

struct DeviceMetrics {
  DeviceId device;
  std::size_t tasks = 0;
  TimeNs busy = 0;  ///< sum of its compute lane's work (blocked transfers aside)
  /// Time its compute lane spends in blocking transfers (SEND and RECV on it).
  TimeNs blocked = 0;
  /// Sum of its communication lanes' task durations (host copies and all-to-alls aside).
  TimeNs communication = 0;
  TimeNs recompute = 0;    ///< the part of `busy` spent in R tasks (recomputation)
  TimeNs host_copy = 0;    ///< sum of its D2H and H2D copies (on its host link)
  TimeNs first_start = 0;  ///< 0 if the device runs nothing
  TimeNs last_finish = 0;
  double bubble_ratio = 0;  ///< (makespan - busy) / makespan
  /// Max running sum of its compute lane's memory deltas in execution order, from 0. With
  /// host copies, the max over time of the activation memory (see activation_memory).
  double peak_memory = 0;

  /// last finish - first start: the ZeroBubble papers measure bubbles over this span.
  [[nodiscard]] TimeNs span() const { return last_finish - first_start; }
  [[nodiscard]] TimeNs span_bubble() const { return span() - busy; }
};

struct Metrics {
  TimeNs makespan = 0;      ///< latest finish (every device starts at 0)
  TimeNs total_work = 0;    ///< sum of all task durations
  double bubble_ratio = 0;  ///< mean of the devices' bubble ratios
  std::vector<DeviceMetrics> devices;
  /// The chain of tasks that fixes the makespan: each waits on the previous one, through
  /// a data dependence or by running right after it on the same device. The first task
  /// starts at 0.
  std::vector<TaskId> critical_path;
  /// Longest path through data dependences alone (with communication): a lower bound on
  /// the makespan of any order.
  TimeNs dependency_bound = 0;
  /// Per training iteration, the latest finish of its tasks (one entry, the makespan, when
  /// one iteration is simulated).
  std::vector<TimeNs> iteration_finish;
  /// The step: the steady-state period, the mean time between the ends of consecutive
  /// iterations after the first (rounded to the nearest ns); the makespan for one.
  TimeNs iteration_time = 0;
};

/// Derives the metrics of a trace of `graph`.
Metrics compute_metrics(const EventGraph& graph, const Trace& trace,
                        const SimulationOptions& options);

}  // namespace perflow::simulator
