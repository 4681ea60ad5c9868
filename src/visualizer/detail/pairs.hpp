#pragma once

#include <cstdint>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"

namespace perflow::visualizer::detail {

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
  const TaskId first = graph.paired(t) ? graph.pair_partner(t) : t;
  const TaskId f = first.valid() ? first : t;
  return {trace.start_of(f), trace.finish_of(f)};
}

}  // namespace perflow::visualizer::detail
