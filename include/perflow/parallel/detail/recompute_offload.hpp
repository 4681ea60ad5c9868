#pragma once

#include <span>
#include <vector>

#include "perflow/core/detail/graph_extension.hpp"
#include "perflow/core/event_graph.hpp"
#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/offload.hpp"

namespace perflow::parallel::detail {

/// Recomputation's part of add_recompute, on an extension of `x.graph()`: the R tasks, their
/// dependences, program places and the forwards' memory changes. Returns, per base task,
/// the R inserted before it (invalid if none); empty when no task recomputes (nothing was
/// added). Throws as add_recompute does.
std::vector<TaskId> recompute_into(perflow::detail::GraphExtension& x, const CostTable& costs);

/// A lane's program after recomputation: `emit(task, anchor)` for each task in order, an R
/// with the base task it is inserted before, a base task with itself.
template <class Emit>
void with_recomputes(const EventGraph& graph, const std::vector<TaskId>& recompute_of,
                     std::span<const TaskId> program, Emit&& emit) {
  for (std::size_t i = 0; i < program.size(); ++i) {
    const TaskId t = program[i];
    // The backward of an overlapped pair recomputes before the pair: its R goes right
    // before the pair's F, so the two stay one unit.
    const TaskId next = i + 1 < program.size() ? program[i + 1] : TaskId{};
    if (next.valid() && graph.paired(next) && recompute_of[next.value].valid()) {
      emit(recompute_of[next.value], t);
    }
    if (recompute_of[t.value].valid() && !graph.paired(t)) emit(recompute_of[t.value], t);
    emit(t, t);
  }
}

/// The rewrite add_recompute freezes with: a backward's data dependences move to its R.
struct MoveToRecompute {
  const std::vector<TaskId>* recompute_of;
  template <class Emit>
  void operator()(TaskId /*from*/, TaskId to, Emit&& emit) const {
    const TaskId r = (*recompute_of)[to.value];
    emit(r.valid() ? r : to);
  }
};

/// add_offload(add_recompute(base, costs), spec) in one extension of `base`, frozen once:
/// the same tasks, ids, lanes, programs and dependences in the same order (the topological
/// order may differ; every use of it is order-independent). What a recipe asking for both
/// runs.
EventGraph add_recompute_and_offload(EventGraph&& base, const CostTable& costs,
                                     const OffloadSpec& spec);

}  // namespace perflow::parallel::detail
