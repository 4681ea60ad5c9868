#include "perflow/parallel/recompute.hpp"

#include <utility>
#include <vector>

#include "perflow/core/error.hpp"

namespace perflow::parallel {

bool any_recompute(const CostTable& costs, std::uint32_t stages, std::uint32_t chunks) {
  return any_costs(costs, stages, chunks, [](const TaskCosts& c) { return c.recompute; });
}

EventGraph add_recompute(const EventGraph& graph, const CostTable& costs) {
  const auto n = static_cast<std::uint32_t>(graph.task_count());
  if (n > 0 && !graph.has_program_order()) {
    throw ScheduleError("activation recomputation needs a graph with program order");
  }
  const auto recomputes = [&](TaskId t) {
    return costs.at(graph.stage(t), graph.chunk(t)).recompute;
  };
  // Per task: the R inserted before it (invalid if none).
  std::vector<TaskId> recompute_of(n);
  std::uint32_t added = 0;
  for (std::uint32_t t = 0; t < n; ++t) {
    const TaskKind kind = graph.kind(TaskId{t});
    if (kind == TaskKind::R) throw ScheduleError("activation recomputation: already added");
    if ((kind == TaskKind::B || kind == TaskKind::BW) && recomputes(TaskId{t})) ++added;
  }
  if (added == 0) return graph;

  EventGraphBuilder builder = EventGraphBuilder::with_lanes_of(graph);
  builder.reserve(std::size_t{n} + added, graph.edge_count() + std::size_t{added} * 2);
  for (std::uint32_t t = 0; t < n; ++t) {
    TaskSpec spec = graph.spec(TaskId{t});
    if (is_compute(spec.kind) && recomputes(TaskId{t})) {
      spec.memory_delta = costs.at(spec.stage, spec.chunk).recomputed_memory_delta(spec.kind);
    }
    (void)builder.add_task(spec);
  }
  for (std::uint32_t t = 0; t < n; ++t) {
    const TaskKind kind = graph.kind(TaskId{t});
    if ((kind != TaskKind::B && kind != TaskKind::BW) || !recomputes(TaskId{t})) continue;
    TaskSpec spec = graph.spec(TaskId{t});
    const TaskCosts& c = costs.at(spec.stage, spec.chunk);
    spec.kind = TaskKind::R;
    spec.paired = false;
    spec.duration = c.duration(TaskKind::R);
    spec.memory_delta = c.recomputed_memory_delta(TaskKind::R);
    recompute_of[t] = builder.add_task(spec);
  }

  for (std::uint32_t u = 0; u < n; ++u) {
    for (const Adjacent& s : graph.successors(TaskId{u})) {
      if (s.kind() != EdgeKind::Data) continue;
      const TaskId r = recompute_of[s.task().value];
      builder.add_dependence(TaskId{u}, r.valid() ? r : s.task());
    }
  }
  for (std::uint32_t t = 0; t < n; ++t) {
    if (recompute_of[t].valid()) builder.add_dependence(recompute_of[t], TaskId{t});
  }
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    const auto program = graph.program(LaneId{l});
    for (std::size_t i = 0; i < program.size(); ++i) {
      const TaskId t = program[i];
      // The backward of an overlapped pair recomputes before the pair: its R goes right
      // before the pair's F, so the two stay one unit.
      const TaskId next = i + 1 < program.size() ? program[i + 1] : TaskId{};
      if (next.valid() && graph.paired(next) && recompute_of[next.value].valid()) {
        builder.append_to_program(recompute_of[next.value]);
      }
      if (recompute_of[t.value].valid() && !graph.paired(t)) {
        builder.append_to_program(recompute_of[t.value]);
      }
      builder.append_to_program(t);
    }
  }
  return std::move(builder).freeze();
}

}  // namespace perflow::parallel
