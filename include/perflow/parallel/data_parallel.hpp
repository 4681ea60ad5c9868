#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/time.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/parallel/nccl_collectives.hpp"

namespace perflow::parallel {

/// Data parallelism around a pipeline: `degree` identical replicas of the pipeline, each
/// device all-reducing its gradients with its peers in the other replicas, then stepping
/// its optimizer. Replicas run alike, so one replica's graph stands for all of them.
struct DataParallelSpec {
  std::uint32_t degree = 1;
  /// Context-parallel ranks of each replica: they hold the same parameters (each a share of
  /// the sequence), so each collective spans degree x context ranks (Megatron-Core's
  /// data-parallel group with context parallelism).
  std::uint32_t context = 1;
  [[nodiscard]] std::uint32_t ranks() const { return degree * context; }
  /// The link a data-parallel all-reduce runs over (usually between nodes).
  TimeNs latency = 0;
  double bandwidth = 0;  ///< bytes/s; 0 means unlimited
  /// When set, each collective takes nccl_collective_time over this network instead of the
  /// ring over `latency` and `bandwidth`.
  std::optional<NcclNetwork> nccl;
  /// true: each (stage, chunk)'s gradients are reduced bucket by bucket as the backward
  /// produces them, overlapping the device's remaining backward work (Megatron-LM's
  /// overlap_grad_reduce, PyTorch DDP's bucketed reduction); false: in one collective per
  /// (stage, chunk), after the device's last compute task.
  bool overlap = true;
  /// With `overlap`, per (stage, chunk) as below: the most gradient bytes one bucket reduces
  /// (Megatron-Core's DistributedDataParallel bucket_size, in bytes); 0 or missing means one
  /// bucket for the (stage, chunk).
  std::vector<double> bucket_bytes;
  /// The distributed optimizer (Megatron-LM's ZeRO-1): each bucket is reduce-scattered
  /// instead of all-reduced, each replica steps its shard, and the updated parameters
  /// (`parameter_bytes`) are all-gathered back, bucket by bucket.
  bool sharded = false;
  /// With `sharded`: true gathers each bucket's parameters at the start of the iteration,
  /// under its forward (Megatron-LM's overlap_param_gather: the step before's update, which
  /// a chunk's first forward waits for); false gathers them right after the optimizer step.
  bool overlap_param_gather = false;
  /// Per (stage, chunk), stage-major with `chunks` per stage: the gradient bytes it reduces,
  /// the parameter bytes it gathers (sharded only) and its optimizer step. Missing entries
  /// count as 0.
  std::uint32_t chunks = 1;
  std::vector<double> gradient_bytes;
  std::vector<double> parameter_bytes;
  std::vector<TimeNs> optimizer;
  /// Per stage: the fixed host work of one iteration on its device (the step overhead),
  /// added to the device's optimizer step. Missing entries count as 0.
  std::vector<TimeNs> step_overhead;
};

/// Adds, per device, the data-parallel collectives of each (stage, chunk) it runs, on its
/// lane "dp all-reduce" ("dp collectives" when sharded), and one OPT task at the end of its
/// compute program that waits for the gradient collectives and lasts the sum of its (stage,
/// chunk)s' optimizer steps plus its stages' step overheads.
///
/// A (stage, chunk)'s gradients are produced by its last gradient task in program order (its
/// last W or BW: the last microbatch's backward, which completes the accumulation), at an
/// even rate over that task, last layers first. With `overlap` they are split into
/// ceil(bytes / bucket_bytes) buckets (at most kMaxGradientBuckets), each full but the last (the
/// first layers'), each an ALLREDUCE (REDUCESCATTER when sharded) released when the share of the
/// gradient task that produces its last gradient has run (TaskSpec::release_share), taking
/// ring_all_reduce_time (ring_reduce_scatter_time) of its bytes over `degree` ranks (or
/// nccl_collective_time, with `nccl`); the lane
/// runs them one at a time, in the order they are released. Without `overlap`, one per
/// (stage, chunk), after the device's last compute task. Sharded, each bucket's parameters
/// (its share of `parameter_bytes`) are then gathered by an ALLGATHER of
/// ring_all_gather_time: after OPT, or, with `overlap_param_gather`, first on the lane, the
/// chunk's first forward waiting for the bucket of its first layers. With degree 1 there are
/// no collectives; without optimizer or step overhead no OPT. Needs a graph with program
/// order (ScheduleError otherwise).
EventGraph add_data_parallel(const EventGraph& graph, const DataParallelSpec& spec);
/// The same, taking `graph`'s arrays instead of copying them.
EventGraph add_data_parallel(EventGraph&& graph, const DataParallelSpec& spec);

/// The most buckets a (stage, chunk) may reduce its gradients in.
inline constexpr std::uint64_t kMaxGradientBuckets = std::uint64_t{1} << 20;

/// The buckets `bytes` of gradients of the (stage, chunk) at stage-major `index` are reduced
/// in, as add_data_parallel splits them: ceil(bytes / bucket_bytes[index]) when the
/// reduction overlaps the backward and the entry is set, else 1.
std::uint64_t gradient_bucket_count(const DataParallelSpec& spec, std::size_t index, double bytes);

/// A device's data-parallel collectives (ALLREDUCE, REDUCESCATTER, ALLGATHER): their time, and
/// the part of it its compute lane spent idle (exposed) rather than computing (hidden).
struct DataParallelTime {
  TimeNs total = 0;
  TimeNs exposed = 0;

  [[nodiscard]] TimeNs hidden() const { return total - exposed; }
};

/// Per device, from a simulated trace of `graph`: one pass over its lanes. All zero without
/// data-parallel collectives.
std::vector<DataParallelTime> data_parallel_time(const EventGraph& graph, const Trace& trace);

}  // namespace perflow::parallel
