#pragma once

#include "perflow/core/event_graph.hpp"
#include "perflow/parallel/costs.hpp"

namespace perflow::parallel {

/// Activation recomputation (checkpointing, Chen et al. 2016; selective recomputation of the
/// attention core, Korthikanti et al. 2022) as tasks: for every (stage, chunk) whose costs
/// have `recompute`, each B or BW gets an R task (same device, stage, microbatch, chunk and
/// iteration) right before it in its lane's program, lasting costs.duration(R). The R takes
/// over the backward's data dependences (it starts once the gradient has arrived, as a
/// runtime's checkpointed backward does) and the backward waits for it. Memory: the
/// recomputing chunks' F, R, B, W and BW change memory by TaskCosts::recomputed_memory_delta
/// (F keeps less, R rebuilds, the backward frees both). The backward of an overlapped pair
/// (TaskSpec::paired) gets its R right before the pair's F instead, so the pair stays one
/// unit and starts with the activation rebuilt. Chunks without recomputation are left as
/// they are; a graph with none is returned unchanged. Original tasks keep their ids; R tasks
/// follow. Needs program order (ScheduleError otherwise) and no R tasks yet.
EventGraph add_recompute(const EventGraph& graph, const CostTable& costs);
/// The same, taking `graph`'s arrays instead of copying them.
EventGraph add_recompute(EventGraph&& graph, const CostTable& costs);

/// Whether any (stage, chunk) of `stages` x `chunks` in `costs` recomputes.
bool any_recompute(const CostTable& costs, std::uint32_t stages, std::uint32_t chunks);

}  // namespace perflow::parallel
