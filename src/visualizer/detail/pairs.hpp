#pragma once

#include <cstdint>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"

namespace perflow::visualizer::detail {

/// The other task of t's overlapped forward-backward pair (TaskSpec::paired): for the pair's
/// F, the paired backward after it in its lane's program; for the paired backward, that F;
/// invalid when t is in no pair. Both ends of a program's order edge come first in the
/// adjacency lists, so this is O(1).
inline TaskId pair_partner(const EventGraph& graph, TaskId t) {
  if (!graph.has_pairs()) return TaskId{};
  if (graph.paired(t)) {
    const auto before = graph.predecessors(t);
    return !before.empty() && before.front().kind() == EdgeKind::Order ? before.front().task()
                                                                       : TaskId{};
  }
  const auto after = graph.successors(t);
  return !after.empty() && after.front().kind() == EdgeKind::Order &&
                 graph.paired(after.front().task())
             ? after.front().task()
             : TaskId{};
}

/// The backward kind (B or BW) of the graph's first overlapped pair, for a legend's sample;
/// BW when it has none.
inline TaskKind pair_backward_kind(const EventGraph& graph) {
  if (!graph.has_pairs()) return TaskKind::BW;
  for (std::uint32_t t = 0; t < graph.task_count(); ++t) {
    if (graph.paired(TaskId{t})) return graph.kind(TaskId{t});
  }
  return TaskKind::BW;
}

/// The span drawn for t: its own, except that both tasks of an overlapped pair show the
/// pair's, which the F's holds (the paired backward has no time of its own).
struct Span {
  TimeNs start = 0;
  TimeNs finish = 0;
};
inline Span shown_span(const EventGraph& graph, const Trace& trace, TaskId t) {
  const TaskId first = graph.paired(t) ? pair_partner(graph, t) : t;
  const TaskId f = first.valid() ? first : t;
  return {trace.start_of(f), trace.finish_of(f)};
}

}  // namespace perflow::visualizer::detail
