#include "perflow/parallel/expert_parallel.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::parallel {

bool any_all_to_all(const CostTable& costs, std::uint32_t stages, std::uint32_t chunks) {
  return any_costs(costs, stages, chunks, [](const TaskCosts& c) { return c.all_to_all > 0; });
}

bool overlaps_pairs(const PipelinePlan& plan, const CostTable& costs) {
  const bool pairs = std::any_of(plan.overlapped_pairs.begin(), plan.overlapped_pairs.end(),
                                 [](const auto& positions) { return !positions.empty(); });
  return pairs && any_costs(costs, plan.stages, plan.chunks, [](const TaskCosts& c) {
           return c.all_to_all > 0 || c.forward_backward.has_value();
         });
}

EventGraph overlap_pairs(const EventGraph& graph, const PipelinePlan& plan,
                         const CostTable& costs) {
  const auto n = static_cast<std::uint32_t>(graph.task_count());
  // Per task: for a pair's backward, the pair's F; for a pair's F, its backward.
  std::vector<TaskId> partner(n);
  std::vector<std::uint8_t> second(n, 0);
  for (std::uint32_t d = 0; d < plan.overlapped_pairs.size(); ++d) {
    if (plan.overlapped_pairs[d].empty()) continue;
    const auto program = graph.program(DeviceId{d});
    if (d >= plan.programs.size() || program.size() != plan.programs[d].size()) {
      throw ScheduleError(
          fmt::format("overlapped pairs: device {}'s program is not its plan's", d));
    }
    for (const std::uint32_t i : plan.overlapped_pairs[d]) {
      const TaskId f = i + 1 < program.size() ? program[i] : TaskId{};
      const TaskId b = i + 1 < program.size() ? program[i + 1] : TaskId{};
      if (!f.valid() || graph.kind(f) != TaskKind::F ||
          (graph.kind(b) != TaskKind::B && graph.kind(b) != TaskKind::BW)) {
        throw ScheduleError(fmt::format(
            "overlapped pairs: position {} of device {} is not an F followed by a backward", i, d));
      }
      partner[f.value] = b;
      partner[b.value] = f;
      second[b.value] = 1;
    }
  }

  EventGraphBuilder builder = EventGraphBuilder::with_lanes_of(graph);
  builder.reserve(n, graph.edge_count() + n);
  for (std::uint32_t t = 0; t < n; ++t) {
    TaskSpec spec = graph.spec(TaskId{t});
    if (second[t]) {
      spec.duration = 0;
      spec.paired = true;
    } else if (partner[t].valid()) {
      const TaskId b = partner[t];
      spec.duration = costs.at(spec.stage, spec.chunk)
                          .pair_duration(graph.kind(b), costs.at(graph.stage(b), graph.chunk(b)));
    }
    (void)builder.add_task(spec);
  }
  for (std::uint32_t u = 0; u < n; ++u) {
    for (const Adjacent& s : graph.successors(TaskId{u})) {
      if (s.kind() != EdgeKind::Data) continue;
      builder.add_dependence(TaskId{u}, s.task());
      // The pair starts once the backward's inputs are there too.
      if (second[s.task().value]) builder.add_dependence(TaskId{u}, partner[s.task().value]);
    }
  }
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    for (const TaskId t : graph.program(LaneId{l})) builder.append_to_program(t);
  }
  return std::move(builder).freeze();
}

namespace {

// Whether task t of a compute program gets an A2A: an F, B or BW with all-to-all time that
// is in no overlapped pair.
bool gets_all_to_all(const EventGraph& graph, const CostTable& costs, TaskId t) {
  const TaskKind kind = graph.kind(t);
  if (kind != TaskKind::F && kind != TaskKind::B && kind != TaskKind::BW) return false;
  if (graph.pair_partner(t).valid()) return false;
  return costs.at(graph.stage(t), graph.chunk(t)).all_to_all > 0;
}

}  // namespace

EventGraph add_all_to_all(const EventGraph& graph, const CostTable& costs) {
  const auto n = static_cast<std::uint32_t>(graph.task_count());
  if (n > 0 && !graph.has_program_order()) {
    throw ScheduleError("expert-parallel all-to-alls need a graph with program order");
  }
  std::vector<std::uint8_t> gets(n, 0);
  std::vector<std::uint8_t> device_has(graph.device_count(), 0);
  std::size_t added = 0;
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    for (const TaskId t : graph.program(DeviceId{d})) {
      if (!gets_all_to_all(graph, costs, t)) continue;
      gets[t.value] = 1;
      device_has[d] = 1;
      ++added;
    }
  }
  if (added == 0) return graph;

  // The task's dependences on other devices move to its A2A.
  EventGraphBuilder builder = EventGraphBuilder::extend(graph, [&](TaskId from, TaskId to) {
    return !gets[to.value] || graph.device(from) == graph.device(to);
  });
  builder.reserve(n + added, graph.edge_count() + 3 * added);
  std::vector<LaneId> lane(graph.device_count());
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    if (device_has[d]) lane[d] = builder.add_lane(DeviceId{d}, "ep a2a");
  }
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    const auto program = graph.program(DeviceId{d});
    for (std::size_t i = 0; i < program.size(); ++i) {
      const TaskId t = program[i];
      if (!gets[t.value]) continue;
      TaskSpec spec = graph.spec(t);
      spec.kind = TaskKind::A2A;
      spec.duration = costs.at(spec.stage, spec.chunk).all_to_all;
      spec.memory_delta = 0;
      spec.lane = lane[d];
      const TaskId a = builder.add_task(spec);
      for (const Adjacent& p : graph.predecessors(t)) {
        if (p.kind() == EdgeKind::Data && graph.device(p.task()) != graph.device(t)) {
          builder.add_dependence(p.task(), a);
        }
      }
      if (i > 0) builder.add_dependence(program[i - 1], a);  // the device is done before it
      builder.add_dependence(a, t);
      builder.append_to_program(a);
    }
  }
  return std::move(builder).freeze();
}

std::size_t overlapped_pair_count(const EventGraph& graph) {
  if (!graph.has_pairs()) return 0;
  std::size_t count = 0;
  for (std::uint32_t t = 0; t < graph.task_count(); ++t) count += graph.paired(TaskId{t}) ? 1u : 0u;
  return count;
}

std::vector<AllToAllTime> all_to_all_time(const EventGraph& graph, const CostTable& costs) {
  std::vector<AllToAllTime> out(graph.device_count());
  // Most graphs have neither (the summary asks for every run).
  const bool a2a = graph.has_kind(TaskKind::A2A);
  if (!a2a && !graph.has_pairs()) return out;
  for (std::uint32_t i = 0; i < graph.task_count(); ++i) {
    const TaskId t{i};
    AllToAllTime& device = out[graph.device(t).value];
    if (graph.kind(t) == TaskKind::A2A) {
      device.total += graph.duration(t);
      device.exposed += graph.duration(t);
    } else if (const TaskId f = graph.paired(t) ? graph.pair_partner(t) : TaskId{}; f.valid()) {
      const TaskCosts& cf = costs.at(graph.stage(f), graph.chunk(f));
      const TaskCosts& cb = costs.at(graph.stage(t), graph.chunk(t));
      const TimeNs total = cf.all_to_all + cb.all_to_all;
      const TimeNs compute = cf.duration(TaskKind::F) + cb.duration(graph.kind(t));
      device.total += total;
      device.exposed += std::clamp<TimeNs>(graph.duration(f) - compute, 0, total);
    }
  }
  return out;
}

}  // namespace perflow::parallel
