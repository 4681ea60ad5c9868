#include "perflow/parallel/recompute.hpp"

#include <utility>
#include <vector>

#include "perflow/core/detail/graph_extension.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/detail/recompute_offload.hpp"

namespace perflow::parallel {

bool any_recompute(const CostTable& costs, std::uint32_t stages, std::uint32_t chunks) {
  return any_costs(costs, stages, chunks, [](const TaskCosts& c) { return c.recompute; });
}

EventGraph add_recompute(const EventGraph& graph, const CostTable& costs) {
  return add_recompute(EventGraph(graph), costs);
}

namespace detail {

std::vector<TaskId> recompute_into(perflow::detail::GraphExtension& x, const CostTable& costs) {
  const EventGraph& graph = x.graph();
  const auto n = static_cast<std::uint32_t>(graph.task_count());
  if (n > 0 && !graph.has_program_order()) {
    throw ScheduleError("activation recomputation needs a graph with program order");
  }
  std::uint32_t added = 0;
  for (std::uint32_t t = 0; t < n; ++t) {
    const TaskKind kind = graph.kind(TaskId{t});
    if (kind == TaskKind::R) throw ScheduleError("activation recomputation: already added");
    if ((kind == TaskKind::B || kind == TaskKind::BW) &&
        costs.at(graph.stage(TaskId{t}), graph.chunk(TaskId{t})).recompute) {
      ++added;
    }
  }
  if (added == 0) return {};

  x.reserve(added, added);
  // Per task: the R inserted before it (invalid if none). R tasks follow the originals, in
  // the order of their backwards.
  std::vector<TaskId> recompute_of(n);
  for (std::uint32_t t = 0; t < n; ++t) {
    const TaskId task{t};
    const TaskKind kind = graph.kind(task);
    if (!is_compute(kind)) continue;
    const TaskCosts& c = costs.at(graph.stage(task), graph.chunk(task));
    if (!c.recompute) continue;
    const double memory = c.recomputed_memory_delta(kind);
    if (memory != graph.memory_delta(task)) x.set_memory_delta(task, memory);
    if (kind != TaskKind::B && kind != TaskKind::BW) continue;
    TaskSpec spec = graph.spec(task);
    spec.kind = TaskKind::R;
    spec.paired = false;
    spec.release_share = 1.0;
    spec.duration = c.duration(TaskKind::R);
    spec.memory_delta = c.recomputed_memory_delta(TaskKind::R);
    recompute_of[t] = x.add_task(spec);
  }
  for (std::uint32_t t = 0; t < n; ++t) {
    if (recompute_of[t].valid()) x.add_dependence(recompute_of[t], TaskId{t});
  }
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    with_recomputes(graph, recompute_of, graph.program(LaneId{l}), [&](TaskId task, TaskId anchor) {
      if (task != anchor) x.insert_before(anchor, task);
    });
  }
  return recompute_of;
}

}  // namespace detail

EventGraph add_recompute(EventGraph&& base, const CostTable& costs) {
  perflow::detail::GraphExtension x(std::move(base));
  const std::vector<TaskId> recompute_of = detail::recompute_into(x, costs);
  if (recompute_of.empty()) return std::move(x).release();
  // A backward's data dependences move to its R.
  return std::move(x).freeze(detail::MoveToRecompute{&recompute_of});
}

}  // namespace perflow::parallel
