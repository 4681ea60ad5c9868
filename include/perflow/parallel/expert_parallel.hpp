#pragma once

#include <cstdint>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/pipeline.hpp"

namespace perflow::parallel {

/// True when some (stage, chunk) gives an all-to-all time (TaskCosts::all_to_all).
bool any_all_to_all(const CostTable& costs, std::uint32_t stages, std::uint32_t chunks);

/// True when `plan` has overlapped pairs and the costs give them something to overlap: an
/// all-to-all or a measured forward_backward on some (stage, chunk). Without either a pair
/// has nothing to hide and runs as its F then its backward, as the reference runtime does
/// when the model has no overlapped_forward_backward.
bool overlaps_pairs(const PipelinePlan& plan, const CostTable& costs);

/// Runs each of `plan`'s overlapped pairs (PipelinePlan::overlapped_pairs) as one unit: the
/// pair starts once its device is free and both the F's input and the backward's gradient
/// have arrived, and both results leave when it ends (DualPipe's _forward_backward_chunk
/// waits on both receives, computes, then sends both). The F's box holds the pair's time,
/// TaskCosts::pair_duration of the F's chunk; the backward follows it with no time of its
/// own and is marked TaskSpec::paired. `graph` is build_pipeline_graph(plan, costs): its
/// compute programs are the plan's. Throws ScheduleError if they are not.
EventGraph overlap_pairs(const EventGraph& graph, const PipelinePlan& plan, const CostTable& costs);
/// The same, taking `graph`'s arrays instead of copying them.
EventGraph overlap_pairs(EventGraph&& graph, const PipelinePlan& plan, const CostTable& costs);

/// Megatron-Core's expert-parallel communication overlap (--overlap-moe-expert-parallel-comm,
/// combined_1f1b.py): each device runs one more warm-up forward than `plan` does, then each
/// steady-state forward together with the backward after it, one's dispatch and combine
/// under the other's compute, layer by layer. 1F1B plans each program as F^L (B F)^r B^c
/// (its L - 1 warm-up forwards and the first steady one, then backward-forward steps, B or
/// BW backwards); the overlap rewrites it as F^L (F B)^r B^c, each (F B) an overlapped pair
/// (PipelinePlan::overlapped_pairs) whose forward and backward are of different
/// microbatches. Throws ScheduleError for a program of another form (W tasks, say).
PipelinePlan overlap_expert_all_to_all(PipelinePlan plan);

/// Expert parallelism: before each F, B and BW whose chunk has an all-to-all time (and that
/// is not in an overlapped pair, whose all-to-alls hide inside it), an A2A task on its
/// device's lane `ep a2a` for that time. The A2A takes over the task's dependences on other
/// devices and starts once the device has finished the task before; the task waits for it.
/// So the compute lane idles while it runs: the all-to-all is exposed, as when a MoE layer's
/// experts wait for their tokens. The MoE layers' dispatches and combines of one task are
/// one A2A, the sum of their times.
EventGraph add_all_to_all(const EventGraph& graph, const CostTable& costs);
/// The same, taking `graph`'s arrays instead of copying them.
EventGraph add_all_to_all(EventGraph&& graph, const CostTable& costs);

/// The overlapped pairs in `graph` (its tasks marked TaskSpec::paired).
std::size_t overlapped_pair_count(const EventGraph& graph);

/// A device's all-to-all time, and how much of it its compute waited for.
struct AllToAllTime {
  TimeNs total = 0;
  TimeNs exposed = 0;

  [[nodiscard]] TimeNs hidden() const { return total - exposed; }
};

/// Per device: every A2A task's time (exposed), and each overlapped pair's all-to-alls (the
/// F's and the backward's), exposed by as much as the pair lasts beyond the two tasks'
/// compute (at most their all-to-all). Exposed + hidden = total.
std::vector<AllToAllTime> all_to_all_time(const EventGraph& graph, const CostTable& costs);

}  // namespace perflow::parallel
