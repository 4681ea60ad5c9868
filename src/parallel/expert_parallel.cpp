#include "perflow/parallel/expert_parallel.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "perflow/core/detail/graph_extension.hpp"
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
  return overlap_pairs(EventGraph(graph), plan, costs);
}

EventGraph overlap_pairs(EventGraph&& base, const PipelinePlan& plan, const CostTable& costs) {
  detail::GraphExtension x(std::move(base));
  const EventGraph& graph = x.graph();
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

  for (std::uint32_t t = 0; t < n; ++t) {
    if (second[t]) {
      x.set_duration(TaskId{t}, 0);
      x.set_paired(TaskId{t});
    } else if (partner[t].valid()) {
      const TaskId b = partner[t];
      x.set_duration(TaskId{t},
                     costs.at(graph.stage(TaskId{t}), graph.chunk(TaskId{t}))
                         .pair_duration(graph.kind(b), costs.at(graph.stage(b), graph.chunk(b))));
    }
  }
  // The pair starts once the backward's inputs are there too.
  return std::move(x).freeze([&](TaskId, TaskId v, auto&& emit) {
    emit(v);
    if (second[v.value]) emit(partner[v.value]);
  });
}

PipelinePlan overlap_expert_all_to_all(PipelinePlan plan) {
  plan.overlapped_pairs.assign(plan.programs.size(), {});
  for (std::size_t d = 0; d < plan.programs.size(); ++d) {
    std::vector<Step>& program = plan.programs[d];
    std::vector<Step> forwards;
    std::vector<Step> backwards;
    std::size_t warmup = 0;  // the forwards before the first backward
    for (const Step& step : program) {
      if (step.kind == TaskKind::F) {
        if (backwards.empty()) ++warmup;
        forwards.push_back(step);
      } else if (step.kind == TaskKind::B || step.kind == TaskKind::BW) {
        backwards.push_back(step);
      } else {
        throw ScheduleError(fmt::format(
            "the expert-parallel overlap pairs forwards with fused or B backwards; device {} "
            "runs a {} task",
            d, to_string(step.kind)));
      }
    }
    // 1F1B's program: the leading forwards, then each backward followed by the next forward
    // while there are forwards left, then the backwards left. The overlap swaps each such
    // (backward, forward) into a pair (forward, backward): one more warm-up forward.
    std::vector<Step> out(forwards.begin(), forwards.begin() + static_cast<std::ptrdiff_t>(warmup));
    out.reserve(program.size());
    std::size_t b = 0;
    for (std::size_t f = warmup; f < forwards.size() && b < backwards.size(); ++f, ++b) {
      plan.overlapped_pairs[d].push_back(static_cast<std::uint32_t>(out.size()));
      out.push_back(forwards[f]);
      out.push_back(backwards[b]);
    }
    out.insert(out.end(), backwards.begin() + static_cast<std::ptrdiff_t>(b), backwards.end());
    if (out.size() != program.size()) {
      throw ScheduleError(fmt::format(
          "the expert-parallel overlap needs each device to run as many backwards as forwards "
          "after its warm-up; device {} does not",
          d));
    }
    for (std::size_t i = warmup, k = 0; i < program.size(); ++i, ++k) {
      const std::size_t swapped = k % 2 == 0 ? i + 1 : i - 1;  // where its slot is now
      const bool in_pairs = i < warmup + 2 * plan.overlapped_pairs[d].size();
      if (!(program[i] == out[in_pairs ? swapped : i])) {
        throw ScheduleError(fmt::format(
            "the expert-parallel overlap needs each device to alternate one backward and one "
            "forward after its warm-up forwards (1F1B); device {} does not at step {}",
            d, i));
      }
    }
    program = std::move(out);
  }
  return plan;
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
  return add_all_to_all(EventGraph(graph), costs);
}

EventGraph add_all_to_all(EventGraph&& base, const CostTable& costs) {
  const EventGraph& graph = base;
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
  if (added == 0) return std::move(base);

  detail::GraphExtension x(std::move(base));
  const EventGraph& g = x.graph();
  x.reserve(added, 3 * added);
  std::vector<LaneId> lane(g.device_count());
  for (std::uint32_t d = 0; d < g.device_count(); ++d) {
    if (device_has[d]) lane[d] = x.add_lane(DeviceId{d}, "ep a2a");
  }
  for (std::uint32_t d = 0; d < g.device_count(); ++d) {
    const auto program = g.program(DeviceId{d});
    for (std::size_t i = 0; i < program.size(); ++i) {
      const TaskId t = program[i];
      if (!gets[t.value]) continue;
      TaskSpec spec = g.spec(t);
      spec.kind = TaskKind::A2A;
      spec.duration = costs.at(spec.stage, spec.chunk).all_to_all;
      spec.memory_delta = 0;
      spec.lane = lane[d];
      const TaskId a = x.add_task(spec);
      for (const Adjacent& p : g.predecessors(t)) {
        if (p.kind() == EdgeKind::Data && g.device(p.task()) != g.device(t)) {
          x.add_dependence(p.task(), a);
        }
      }
      if (i > 0) x.add_dependence(program[i - 1], a);  // the device is done before it
      x.add_dependence(a, t);
      x.append_to_program(a);
    }
  }
  // The task's dependences on other devices move to its A2A.
  return std::move(x).freeze([&](TaskId u, TaskId v, auto&& emit) {
    if (!gets[v.value] || g.device(u) == g.device(v)) emit(v);
  });
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
