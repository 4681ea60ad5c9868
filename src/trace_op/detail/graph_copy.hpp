#pragma once

// Helpers shared by the trace operators: task keys and labels, stage lists for messages, and
// a whole-graph copy with per-task changes (remap, scale).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "perflow/core/error.hpp"
#include "perflow/core/event_graph.hpp"
#include "perflow/trace_op/operators.hpp"

namespace perflow::trace_op::detail {

/// The operators compose schedules' compute graphs; communication lanes (lowered transfers,
/// data-parallel all-reduces) are added after composing, just before simulation.
inline void require_compute_lanes_only(const EventGraph& graph, const char* op) {
  if (graph.lane_count() != graph.device_count()) {
    throw ScheduleError(
        fmt::format("{}: the graph has communication lanes ({}); compose graphs first, then lower "
                    "communication or add data parallelism",
                    op, graph.lane_info(LaneId{graph.device_count()}).name));
  }
}

inline TaskSpec task_spec(const EventGraph& graph, TaskId t) {
  TaskSpec spec = graph.spec(t);
  spec.lane = LaneId{};  // the compute lane of its (possibly remapped) device
  return spec;
}

inline TaskKey task_key(const EventGraph& graph, TaskId t) {
  return TaskKey{graph.kind(t), graph.microbatch(t), graph.chunk(t), graph.stage(t)};
}

/// "F3.0 (stage 4)": a task named across graphs.
inline std::string key_label(const TaskKey& key) {
  return fmt::format("{} (stage {})", task_label(key.kind, key.microbatch, key.chunk),
                     key.stage.value);
}

/// "0-3, 6" for sorted, unique stages; "none" if there are none.
inline std::string format_stages(std::span<const StageId> stages) {
  if (stages.empty()) return "none";
  std::string out;
  for (std::size_t i = 0; i < stages.size();) {
    std::size_t j = i;
    while (j + 1 < stages.size() && stages[j + 1].value == stages[j].value + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? fmt::format("{}", stages[i].value)
                  : fmt::format("{}-{}", stages[i].value, stages[j].value);
    i = j + 1;
  }
  return out;
}

/// Calls visit(from, to) for every data dependence: by source id, then in adjacency order.
template <class Visit>
void for_each_data_edge(const EventGraph& graph, Visit&& visit) {
  const auto n = static_cast<std::uint32_t>(graph.task_count());
  for (std::uint32_t v = 0; v < n; ++v) {
    for (const Adjacent& s : graph.successors(TaskId{v})) {
      if (s.kind() == EdgeKind::Data) visit(TaskId{v}, s.task());
    }
  }
}

inline std::size_t data_edge_count(const EventGraph& graph) {
  std::size_t count = 0;
  for_each_data_edge(graph, [&](TaskId, TaskId) { ++count; });
  return count;
}

/// A copy of `graph` with the same task ids and data dependences, each task's spec passed
/// through `spec_of(TaskId, TaskSpec)`, and `device_count` devices. Program entries are
/// appended old device by old device, each in program order, so devices that `spec_of` moves
/// onto one device have their programs concatenated in the order of the old device ids.
template <class SpecOf>
EventGraph copy_graph(const EventGraph& graph, std::uint32_t device_count, SpecOf&& spec_of) {
  EventGraphBuilder builder(device_count);
  builder.reserve(graph.task_count(), data_edge_count(graph));
  const auto n = static_cast<std::uint32_t>(graph.task_count());
  for (std::uint32_t v = 0; v < n; ++v) {
    (void)builder.add_task(spec_of(TaskId{v}, task_spec(graph, TaskId{v})));
  }
  for_each_data_edge(graph, [&](TaskId from, TaskId to) { builder.add_dependence(from, to); });
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    for (const TaskId t : graph.program(DeviceId{d})) builder.append_to_program(t);
  }
  return std::move(builder).freeze();
}

}  // namespace perflow::trace_op::detail
