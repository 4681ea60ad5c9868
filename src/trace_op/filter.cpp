// filter: keeps the tasks of some stages, with their program order and the dependences among
// them; the data dependences that leave the kept set become open boundaries.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "detail/graph_copy.hpp"
#include "perflow/core/error.hpp"
#include "perflow/trace_op/operators.hpp"

namespace perflow::trace_op {

GraphPart filter(const EventGraph& graph, std::span<const StageId> stages) {
  detail::require_compute_lanes_only(graph, "filter");
  const auto n = static_cast<std::uint32_t>(graph.task_count());

  // The graph's stages, sorted (O(n log n); stage values need not be dense).
  std::vector<StageId> present;
  present.reserve(n);
  for (std::uint32_t v = 0; v < n; ++v) present.push_back(graph.stage(TaskId{v}));
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());

  if (stages.empty()) {
    throw ScheduleError(fmt::format("filter: no stages given (the graph has stages {})",
                                    detail::format_stages(present)));
  }
  std::vector<StageId> kept(stages.begin(), stages.end());
  std::sort(kept.begin(), kept.end());
  if (const auto twice = std::adjacent_find(kept.begin(), kept.end()); twice != kept.end()) {
    throw ScheduleError(fmt::format("filter: stage {} is listed twice", twice->value));
  }
  for (const StageId s : stages) {  // in the caller's order: report the first unknown given
    if (!std::binary_search(present.begin(), present.end(), s)) {
      throw ScheduleError(fmt::format("filter: stage {} is not in the graph (it has stages {})",
                                      s.value, detail::format_stages(present)));
    }
  }

  // New dense ids in the original order.
  constexpr std::uint32_t kDropped = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> new_id(n, kDropped);
  EventGraphBuilder builder(graph.device_count());
  for (std::uint32_t v = 0; v < n; ++v) {
    if (std::binary_search(kept.begin(), kept.end(), graph.stage(TaskId{v}))) {
      new_id[v] = builder.add_task(detail::task_spec(graph, TaskId{v})).value;
    }
  }

  std::vector<Boundary> open;
  detail::for_each_data_edge(graph, [&](TaskId from, TaskId to) {
    const bool from_kept = new_id[from.value] != kDropped;
    const bool to_kept = new_id[to.value] != kDropped;
    if (from_kept && to_kept) {
      builder.add_dependence(TaskId{new_id[from.value]}, TaskId{new_id[to.value]});
    } else if (from_kept || to_kept) {
      open.push_back(Boundary{detail::task_key(graph, from), detail::task_key(graph, to)});
    }
  });
  std::sort(open.begin(), open.end());
  open.erase(std::unique(open.begin(), open.end()), open.end());

  // Each device's program restricted to the kept tasks: still a valid order (a subsequence
  // of one that respects every dependence among them).
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    for (const TaskId t : graph.program(DeviceId{d})) {
      if (new_id[t.value] != kDropped) builder.append_to_program(TaskId{new_id[t.value]});
    }
  }

  return GraphPart{std::move(builder).freeze(), std::move(kept), std::move(open)};
}

}  // namespace perflow::trace_op
