#include "perflow/parallel/iterations.hpp"

#include <span>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::parallel {

EventGraph repeat_iterations(const EventGraph& graph, const IterationSpec& spec) {
  if (spec.count == 0) throw ScheduleError("the number of iterations must be at least 1");
  if (graph.task_count() > 0 && !graph.has_program_order()) {
    throw ScheduleError("iterations need a graph with program order");
  }
  if (graph.has_iterations()) throw ScheduleError("the graph already holds several iterations");
  if (spec.count == 1) return graph;
  const auto n = static_cast<std::uint32_t>(graph.task_count());
  if (std::uint64_t{n} * spec.count + spec.count > (std::uint64_t{1} << 31)) {
    throw ScheduleError(fmt::format("{} iterations of {} tasks exceed the 2^31 tasks a graph holds",
                                    spec.count, n));
  }
  const std::uint32_t lanes = graph.lane_count();
  const std::uint32_t devices = graph.device_count();

  EventGraphBuilder builder = EventGraphBuilder::with_lanes_of(graph);
  const LaneId sync_lane = spec.optimizer_sync && devices > 0
                               ? builder.add_lane(DeviceId{0}, "iteration sync")
                               : LaneId{};
  std::size_t data_edges = 0;
  for (std::uint32_t v = 0; v < n; ++v) {
    for (const Adjacent& s : graph.successors(TaskId{v})) data_edges += s.kind() == EdgeKind::Data;
  }
  builder.reserve(std::size_t{n} * spec.count + spec.count,
                  (data_edges + 2 * std::size_t{lanes}) * spec.count);

  const auto copy_of = [n](std::uint32_t k, TaskId t) { return TaskId{k * n + t.value}; };
  for (std::uint32_t k = 0; k < spec.count; ++k) {
    for (std::uint32_t v = 0; v < n; ++v) {
      TaskSpec task = graph.spec(TaskId{v});
      task.iteration = k;
      (void)builder.add_task(task);
    }
  }
  for (std::uint32_t k = 0; k < spec.count; ++k) {
    for (std::uint32_t v = 0; v < n; ++v) {
      for (const Adjacent& s : graph.successors(TaskId{v})) {
        if (s.kind() == EdgeKind::Data) {
          builder.add_dependence(copy_of(k, TaskId{v}), copy_of(k, s.task()));
        }
      }
    }
    for (std::uint32_t l = 0; l < lanes; ++l) {
      for (const TaskId t : graph.program(LaneId{l})) builder.append_to_program(copy_of(k, t));
    }
  }

  // The iteration boundaries. A device's communication lanes (its all-reduces) end its
  // iteration too: its next compute waits for them, as its optimizer step would. A copy to
  // the host (the optimizer state written back) does not: nothing of the next iteration
  // reads it before its own optimizer step.
  const auto writes_back = [&](std::span<const TaskId> program) {
    return graph.kind(program.back()) == TaskKind::D2H;
  };
  for (std::uint32_t k = 0; k + 1 < spec.count; ++k) {
    for (std::uint32_t l = devices; l < lanes; ++l) {
      const auto program = graph.program(LaneId{l});
      const auto next = graph.program(LaneId{graph.lane_info(LaneId{l}).device.value});
      if (program.empty() || next.empty() || writes_back(program)) continue;
      builder.add_dependence(copy_of(k, program.back()), copy_of(k + 1, next.front()));
      // A lane that begins by gathering parameters (the distributed optimizer's overlapped
      // all-gather) gathers what the device's step before wrote.
      if (graph.kind(program.front()) == TaskKind::AllGather) {
        builder.add_dependence(copy_of(k, next.back()), copy_of(k + 1, program.front()));
      }
    }
    if (!sync_lane.valid()) continue;
    const TaskId sync = builder.add_task(
        TaskSpec{TaskKind::Sync, DeviceId{0}, StageId{0}, 0, 0, 0, 0.0, sync_lane, k});
    builder.append_to_program(sync);
    for (std::uint32_t l = 0; l < lanes; ++l) {
      const auto program = graph.program(LaneId{l});
      if (program.empty()) continue;
      if (!writes_back(program)) builder.add_dependence(copy_of(k, program.back()), sync);
      builder.add_dependence(sync, copy_of(k + 1, program.front()));
    }
  }
  return std::move(builder).freeze();
}

}  // namespace perflow::parallel
