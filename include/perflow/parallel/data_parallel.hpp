#pragma once

#include <cstdint>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/time.hpp"

namespace perflow::parallel {

/// Data parallelism around a pipeline: `degree` identical replicas of the pipeline, each
/// device all-reducing its gradients with its peers in the other replicas, then stepping
/// its optimizer. Replicas run alike, so one replica's graph stands for all of them.
struct DataParallelSpec {
  std::uint32_t degree = 1;
  /// The link a data-parallel all-reduce runs over (usually between nodes).
  TimeNs latency = 0;
  double bandwidth = 0;  ///< bytes/s; 0 means unlimited
  /// true: each (stage, chunk) all-reduces as soon as its last weight gradient is done,
  /// overlapping the device's remaining backward work (Megatron-LM's overlap_grad_reduce,
  /// PyTorch DDP's bucketed reduction); false: after the device's last compute task.
  bool overlap = true;
  /// Per (stage, chunk), stage-major with `chunks` per stage: the gradient bytes it reduces
  /// and its optimizer step. Missing entries count as 0.
  std::uint32_t chunks = 1;
  std::vector<double> gradient_bytes;
  std::vector<TimeNs> optimizer;
  /// Per stage: the fixed host work of one iteration on its device (the step overhead),
  /// added to the device's optimizer step. Missing entries count as 0.
  std::vector<TimeNs> step_overhead;
};

/// Adds, per device, one ALLREDUCE per (stage, chunk) it runs, on its lane "dp all-reduce"
/// (one at a time, in the order their last gradients complete in its program), each taking
/// ring_all_reduce_time(gradient bytes, degree, link), and one OPT task at the end of its
/// compute program that waits for all of its all-reduces and lasts the sum of its (stage,
/// chunk)s' optimizer steps plus its stages' step overheads. A (stage, chunk)'s last gradient is
/// its last W or BW in program order. With degree 1 there is no all-reduce; without optimizer or
/// step overhead no OPT. Needs a graph with program order (ScheduleError otherwise).
EventGraph add_data_parallel(const EventGraph& graph, const DataParallelSpec& spec);
/// The same, taking `graph`'s arrays instead of copying them.
EventGraph add_data_parallel(EventGraph&& graph, const DataParallelSpec& spec);

}  // namespace perflow::parallel
