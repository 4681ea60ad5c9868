#include "perflow/parallel/data_parallel.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "perflow/core/detail/graph_extension.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/collectives.hpp"

namespace perflow::parallel {
namespace {

template <class T>
T entry(const std::vector<T>& values, std::size_t index) {
  return index < values.size() ? values[index] : T{};
}

}  // namespace

EventGraph add_data_parallel(const EventGraph& graph, const DataParallelSpec& spec) {
  return add_data_parallel(EventGraph(graph), spec);
}

EventGraph add_data_parallel(EventGraph&& base, const DataParallelSpec& spec) {
  if (base.task_count() > 0 && !base.has_program_order()) {
    throw ScheduleError("data parallelism needs a graph with program order");
  }
  if (spec.degree == 0) throw ScheduleError("the data-parallel degree must be at least 1");
  const std::uint32_t chunks = std::max<std::uint32_t>(spec.chunks, 1);
  detail::GraphExtension builder(std::move(base));
  const EventGraph& graph = builder.graph();

  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    const auto program = graph.program(DeviceId{d});
    if (program.empty()) continue;
    // Per (stage, chunk) on this device: its last gradient task (W or BW) in program order;
    // a (stage, chunk) with no gradient task (a forward-only part) reduces after its last.
    constexpr std::size_t kNone = ~std::size_t{0};
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<std::size_t, std::size_t>> last;
    for (std::size_t i = 0; i < program.size(); ++i) {
      const TaskId t = program[i];
      if (!is_compute(graph.kind(t))) continue;
      auto& [any, gradient] =
          last.try_emplace({graph.stage(t).value, graph.chunk(t)}, kNone, kNone).first->second;
      any = i;
      if (graph.kind(t) == TaskKind::W || graph.kind(t) == TaskKind::BW) gradient = i;
    }
    std::vector<std::pair<std::size_t, std::pair<std::uint32_t, std::uint32_t>>> by_position;
    TimeNs optimizer = 0;
    std::uint32_t previous_stage = ~0u;
    for (const auto& [key, positions] : last) {
      by_position.emplace_back(positions.second != kNone ? positions.second : positions.first, key);
      optimizer += entry(spec.optimizer, std::size_t{key.first} * chunks + key.second);
      if (key.first != previous_stage) optimizer += entry(spec.step_overhead, key.first);
      previous_stage = key.first;  // keys are sorted: a stage's chunks are together
    }
    std::sort(by_position.begin(), by_position.end());

    std::vector<TaskId> reductions;
    if (spec.degree > 1) {
      const LaneId lane = builder.add_lane(DeviceId{d}, "dp all-reduce");
      for (const auto& [position, key] : by_position) {
        const double bytes =
            entry(spec.gradient_bytes, std::size_t{key.first} * chunks + key.second);
        const TaskId reduce = builder.add_task(TaskSpec{
            TaskKind::AllReduce, DeviceId{d}, StageId{key.first}, 0, key.second,
            ring_all_reduce_time(bytes, spec.degree, spec.latency, spec.bandwidth), 0.0, lane});
        builder.add_dependence(program[spec.overlap ? position : program.size() - 1], reduce);
        builder.append_to_program(reduce);
        reductions.push_back(reduce);
      }
    }
    if (optimizer > 0) {
      const TaskId step = builder.add_task(
          TaskSpec{TaskKind::Optimizer, DeviceId{d}, graph.stage(program.back()), 0, 0, optimizer});
      for (const TaskId reduce : reductions) builder.add_dependence(reduce, step);
      builder.append_to_program(step);
    }
  }
  return std::move(builder).freeze();
}

}  // namespace perflow::parallel
