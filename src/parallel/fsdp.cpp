#include "perflow/parallel/fsdp.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/detail/graph_extension.hpp"
#include "perflow/core/error.hpp"

namespace perflow::parallel {
namespace {

template <class T>
T entry(const std::vector<T>& values, std::size_t index) {
  return index < values.size() ? values[index] : T{};
}

bool any_units(const FsdpSpec& spec) {
  return std::any_of(spec.units.begin(), spec.units.end(), [](std::uint32_t u) { return u > 0; });
}

bool is_gradient_task(TaskKind kind) { return kind == TaskKind::W || kind == TaskKind::BW; }

// The task that starts a backward: the R that recomputes for it (right before it on its
// lane, for the same microbatch of the same (stage, chunk)) or the backward itself.
bool recomputed_just_before(const EventGraph& graph, std::span<const TaskId> program,
                            std::size_t i) {
  if (i == 0) return false;
  const TaskId t = program[i];
  const TaskId r = program[i - 1];
  return graph.kind(r) == TaskKind::R && graph.stage(r) == graph.stage(t) &&
         graph.chunk(r) == graph.chunk(t) && graph.microbatch(r) == graph.microbatch(t);
}

}  // namespace

EventGraph add_fsdp(const EventGraph& graph, const FsdpSpec& spec) {
  return add_fsdp(EventGraph(graph), spec);
}

EventGraph add_fsdp(EventGraph&& base, const FsdpSpec& spec) {
  if (!any_units(spec) || base.task_count() == 0) return std::move(base);
  if (!base.has_program_order()) throw ScheduleError("FSDP needs a graph with program order");
  const std::uint32_t chunks = std::max<std::uint32_t>(spec.chunks, 1);
  detail::GraphExtension x(std::move(base));
  const EventGraph& graph = x.graph();
  const auto index = [&](TaskId t) {
    return std::size_t{graph.stage(t).value} * chunks + graph.chunk(t);
  };
  const auto units_of = [&](TaskId t) { return entry(spec.units, index(t)); };

  // Room for the most it adds, reserved once: two gathers a pass, a reduction per unit of a
  // gradient task.
  std::size_t most = 0;
  for (std::uint32_t t = 0; t < graph.task_count(); ++t) {
    const TaskKind kind = graph.kind(TaskId{t});
    if (!is_compute(kind) && kind != TaskKind::R) continue;
    most += 2 + (is_gradient_task(kind) ? units_of(TaskId{t}) : 0);
  }
  x.reserve(most, 2 * most);
  // Indexed like spec.units (a task with units has an index below its size).
  constexpr std::size_t kNone = ~std::size_t{0};
  std::vector<std::pair<std::size_t, std::size_t>> first_last(spec.units.size());

  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    const std::span<const TaskId> program = graph.program(DeviceId{d});
    if (program.empty()) continue;
    // Per (stage, chunk) with units: where its first F and its last gradient task are in
    // the program (for gathering once and reducing once).
    std::fill(first_last.begin(), first_last.end(), std::pair{kNone, kNone});
    bool any = false;
    for (std::size_t i = 0; i < program.size(); ++i) {
      const TaskId t = program[i];
      const TaskKind kind = graph.kind(t);
      if (graph.paired(t)) {
        throw ScheduleError(fmt::format(
            "FSDP's gathers are not modelled around overlapped forward-backward pairs ({} on "
            "device {})",
            graph.label(t), d));
      }
      if (!is_compute(kind) || units_of(t) == 0) continue;
      auto& [first, last] = first_last[index(t)];
      if (kind == TaskKind::F && first == kNone) first = i;
      if (is_gradient_task(kind)) last = i;
      any = true;
    }
    if (!any) continue;
    const LaneId gather_lane = x.add_lane(DeviceId{d}, "fsdp all-gather");
    const LaneId reduce_lane = x.add_lane(DeviceId{d}, "fsdp reduce-scatter");
    const auto collective = [&](TaskKind kind, TaskId of, TimeNs time, LaneId lane,
                                double release_share) {
      TaskSpec task{kind, DeviceId{d}, graph.stage(of), graph.microbatch(of), graph.chunk(of), time,
                    0.0,  lane};
      task.release_share = release_share;
      task.iteration = graph.iteration(of);
      const TaskId id = x.add_task(task);
      x.append_to_program(id);
      return id;
    };

    TaskId last_reduction;
    for (std::size_t i = 0; i < program.size(); ++i) {
      const TaskId t = program[i];
      const TaskKind kind = graph.kind(t);
      const std::uint32_t units = units_of(t);
      if (units == 0) continue;
      const auto [first_forward, last_gradient] = first_last[index(t)];
      const bool starts_backward =
          kind == TaskKind::R || ((kind == TaskKind::B || kind == TaskKind::BW) &&
                                  !recomputed_just_before(graph, program, i));
      const bool gathers_here =
          spec.reshard_after_forward ? kind == TaskKind::F || starts_backward : i == first_forward;
      if (gathers_here) {
        const TimeNs unit = entry(spec.gather, index(t));
        // The first unit, issued once the previous task has begun its last unit.
        double share = 1.0;
        if (i > 0) {
          const std::uint32_t previous = units_of(program[i - 1]);
          share = previous > 0 ? double(previous - 1) / previous : 1.0;
        }
        const TaskId first = collective(TaskKind::AllGather, t, unit, gather_lane, share);
        if (i > 0) x.add_dependence(program[i - 1], first);
        x.add_dependence(first, t);
        if (units > 1) {
          // The others, each under the unit before it: issued when the task starts.
          const TaskId rest =
              collective(TaskKind::AllGather, t, unit * (units - 1), gather_lane, 0.0);
          x.add_dependence(t, rest);
          // The device goes on once every unit is in (gathered once a step, nothing else
          // behind them on the lane would hold it back).
          if (i + 1 < program.size()) x.add_dependence(rest, program[i + 1]);
        }
      }
      const bool reduces_here =
          is_gradient_task(kind) && (spec.reshard_after_forward || i == last_gradient);
      if (reduces_here) {
        const TimeNs unit = entry(spec.reduce, index(t)) +
                            (i == last_gradient ? entry(spec.replica_reduce, index(t)) : 0);
        for (std::uint32_t j = 0; j < units; ++j) {
          last_reduction =
              collective(TaskKind::ReduceScatter, t, unit, reduce_lane, double(j + 1) / units);
          x.add_dependence(t, last_reduction);
        }
      }
    }
    // The optimizer steps the gradients once they are all reduced.
    if (last_reduction.valid()) {
      for (std::size_t i = program.size(); i-- > 0;) {
        if (graph.kind(program[i]) == TaskKind::Optimizer) {
          x.add_dependence(last_reduction, program[i]);
          break;
        }
      }
    }
  }
  return std::move(x).freeze();
}

}  // namespace perflow::parallel
