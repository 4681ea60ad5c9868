#pragma once

#include <cstdint>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/time.hpp"

namespace perflow::parallel {

/// Fully sharded data parallelism (ZeRO-3: Rajbhandari et al., "ZeRO: Memory Optimizations
/// Toward Training Trillion Parameter Models", SC 2020; PyTorch FSDP2's fully_shard, as
/// torchtitan applies it; Megatron-FSDP's optim_grads_params): each (stage, chunk)'s
/// parameters live sharded over the data-parallel ranks, in units (a transformer layer
/// each, the embedding and the head their own) that are all-gathered before they run and
/// whose gradients are reduce-scattered as soon as the backward has produced them. The
/// collectives' times are priced by the caller (study prices them over the placed network).
struct FsdpSpec {
  /// true: the units are freed after each forward and gathered again before each backward,
  /// and each gradient task reduce-scatters its gradients (FSDP2's reshard_after_forward
  /// and per-backward reduction, without pipelining); false: each (stage, chunk) is gathered
  /// once, before its first F, and reduces once, after its last gradient task (torchtitan
  /// with pipeline parallelism: reshard_after_forward off, the gradient sync deferred to the
  /// last microbatch).
  bool reshard_after_forward = true;
  /// Per (stage, chunk), stage-major with `chunks` per stage: its units, and per unit the
  /// time of its parameters' all-gather and of its gradients' reduction (the reduce-scatter,
  /// plus HSDP's all-reduce of the shard across the replicas). Missing entries count as 0:
  /// a (stage, chunk) without units has no collectives.
  std::uint32_t chunks = 1;
  std::vector<std::uint32_t> units;
  std::vector<TimeNs> gather;
  std::vector<TimeNs> reduce;
  /// HSDP: per unit, the all-reduce of its reduced gradient shard across the replicas,
  /// after the (stage, chunk)'s last gradient task only (Megatron-FSDP all-reduces the
  /// outer group in the last backward), in the same task as that reduce-scatter.
  std::vector<TimeNs> replica_reduce;
};

/// Adds, per device, FSDP's collectives on two lanes, "fsdp all-gather" and "fsdp
/// reduce-scatter" (FSDP2's all-gather and reduce-scatter streams), each running its
/// collectives one at a time in the order of the compute they serve:
///
///  - Before each F and each backward (B or BW; the R that recomputes for it, when there is
///    one) of a (stage, chunk) with units (before its first F only, without
///    reshard_after_forward): an ALLGATHER of its first unit, which the task waits for,
///    prefetched one unit ahead: issued once the device's previous compute task has begun
///    its last unit (release share (u - 1) / u of it, u its units); then one ALLGATHER of
///    the other units back to back (units - 1 gathers), issued when the task starts, each
///    unit's gather running under the unit before it; the device's next task waits for it.
///  - After each gradient task (W or BW; the last one only, without reshard_after_forward):
///    a REDUCESCATTER per unit, unit j (the last layers first) released when j + 1 of the
///    task's units have run (release share (j + 1) / units); after the last one, each also
///    takes its unit's replica_reduce.
///  - The device's optimizer step (OPT), if any, waits for its last reduction.
///
/// The prefetch bounds what is held: a unit running and the next one gathered. When a
/// unit's gather takes longer than its compute, the lane falls behind and the next task's
/// first gather waits for it: the compute waits on the lane. Without units the graph comes
/// back unchanged. Needs a graph with program order (ScheduleError otherwise); a paired task
/// (DualPipe's overlapped pairs) is a ScheduleError.
EventGraph add_fsdp(const EventGraph& graph, const FsdpSpec& spec);
/// The same, taking `graph`'s arrays instead of copying them.
EventGraph add_fsdp(EventGraph&& graph, const FsdpSpec& spec);

}  // namespace perflow::parallel
