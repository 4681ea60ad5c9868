#include "perflow/simulator/metrics.hpp"

#include <algorithm>
#include <utility>

#include "detail/ordered_pass.hpp"
#include "perflow/simulator/communication.hpp"
#include "perflow/simulator/memory_timeline.hpp"

namespace perflow::simulator {
namespace {

// Where `t` ran: its lane and its index among the lane's events (found by binary search on
// start times: a lane runs one task at a time, so its events are in start order). The
// critical path breaks ties by it, so the path does not depend on how a builder numbered
// the tasks.
struct LanePosition {
  std::uint32_t lane = 0;
  std::size_t index = 0;
  bool found = false;

  friend bool operator<(const LanePosition& a, const LanePosition& b) {
    return a.lane != b.lane ? a.lane < b.lane : a.index < b.index;
  }
};

LanePosition lane_position(const EventGraph& graph, const Trace& trace, TaskId t) {
  const LaneId lane = graph.lane(t);
  if (lane.value >= trace.lane_count()) return {lane.value, 0, false};
  const std::span<const TaskId> events = trace.events(lane);
  const TimeNs start = trace.start_of(t);
  auto it = std::lower_bound(events.begin(), events.end(), start,
                             [&](TaskId e, TimeNs s) { return trace.start_of(e) < s; });
  while (it != events.end() && trace.start_of(*it) == start && *it != t) ++it;  // equal starts
  if (it == events.end() || *it != t) it = std::find(events.begin(), events.end(), t);
  return {lane.value, static_cast<std::size_t>(it - events.begin()), it != events.end()};
}

// The task the critical path ends with: one that finishes at the makespan, the first by
// (lane, index in lane).
TaskId last_task(const EventGraph& graph, const Trace& trace, TimeNs makespan) {
  for (std::uint32_t l = 0; l < trace.lane_count(); ++l) {
    const std::span<const TaskId> events = trace.events(LaneId{l});
    std::size_t i = events.size();
    while (i > 0 && trace.finish_of(events[i - 1]) == makespan) --i;
    if (i < events.size()) return events[i];
  }
  // Not on any lane's list (a trace written by hand): the lowest id.
  for (std::uint32_t t = 0; t < graph.task_count(); ++t) {
    if (trace.finish[t] == makespan) return TaskId{t};
  }
  return TaskId{0};
}

std::vector<TaskId> binding_chain(const EventGraph& graph, const Trace& trace,
                                  const CommunicationCost& comm, TimeNs makespan) {
  std::vector<TaskId> chain;
  if (graph.task_count() == 0) return chain;
  const TaskId last = last_task(graph, trace, makespan);
  // What a task can wait on: its data predecessors and the task before it on its lane
  // (in ordered mode that is its program predecessor; in greedy mode whatever ran there).
  // Walk back through whichever arrival set the start; on ties, the one earliest by
  // (lane, index in lane).
  // Positions are looked up only to break a tie or to go on from a data predecessor: the
  // walk knows where it is on its lane, so the task before is one index back (a search per
  // step was a tenth of a small sweep's time). That is the position the search finds when a
  // lane lists each task once, as every simulation writes it; of a task listed twice (a
  // trace built by hand) the search found the first.
  LanePosition here = lane_position(graph, trace, last);
  std::vector<TaskId> arrivals;  // the predecessors whose arrival set the start
  for (TaskId current = last;;) {
    chain.push_back(current);
    const TimeNs start = trace.start_of(current);
    arrivals.clear();
    const double share = graph.release_share(current);
    for (const Adjacent& p : graph.predecessors(current)) {
      if (p.kind() == EdgeKind::Data &&
          EventGraph::released_at(trace.start_of(p.task()), trace.finish_of(p.task()), share) +
                  comm(p.task(), current) ==
              start) {
        arrivals.push_back(p.task());
      }
    }
    TaskId before;
    if (here.found && here.index > 0) {
      before = trace.events(LaneId{here.lane})[here.index - 1];
      if (trace.finish_of(before) == start) arrivals.push_back(before);
    }
    if (arrivals.empty()) break;
    const auto position = [&](TaskId t) {
      return t == before && graph.lane(t).value == here.lane
                 ? LanePosition{here.lane, here.index - 1, true}
                 : lane_position(graph, trace, t);
    };
    TaskId binding = arrivals.front();
    LanePosition binding_at = position(binding);
    for (std::size_t i = 1; i < arrivals.size(); ++i) {
      const LanePosition at = position(arrivals[i]);
      if (at < binding_at) {
        binding = arrivals[i];
        binding_at = at;
      }
    }
    current = binding;
    here = binding_at;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

TimeNs longest_data_path(const EventGraph& graph, const CommunicationCost& comm) {
  BigVector<TimeNs> earliest_finish(graph.task_count(), 0);
  TimeNs bound = 0;
  const auto visit = [&](TaskId t) {
    TimeNs ready = 0;
    const double share = graph.release_share(t);
    for (const Adjacent& p : graph.predecessors(t)) {
      if (p.kind() != EdgeKind::Data) continue;
      const TimeNs finish = earliest_finish[p.task().value];
      const TimeNs released =
          EventGraph::released_at(finish - graph.duration(p.task()), finish, share);
      ready = std::max(ready, released + comm(p.task(), t));
    }
    earliest_finish[t.value] = ready + graph.duration(t);
    bound = std::max(bound, earliest_finish[t.value]);
  };
  if (graph.ids_are_topological()) {  // no identity order to write out
    for (std::uint32_t t = 0; t < graph.task_count(); ++t) visit(TaskId{t});
  } else {
    for (const TaskId t : graph.topological_order()) visit(t);
  }
  return bound;
}

// Per iteration, its tasks' latest finish.
std::vector<TimeNs> iteration_finishes(const EventGraph& graph, const Trace& trace,
                                       TimeNs makespan) {
  if (!graph.has_iterations()) return {makespan};
  std::vector<TimeNs> finish;
  for (std::uint32_t t = 0; t < graph.task_count(); ++t) {
    const std::uint32_t k = graph.iteration(TaskId{t});
    if (k >= finish.size()) finish.resize(k + 1, 0);
    finish[k] = std::max(finish[k], trace.finish[t]);
  }
  return finish;
}

// Recomputation, offloading and expert all-to-alls, where the graph has them: per device its
// R time, its copies (taken out of its communication) and its peak over time (copies run on
// another lane). An all-to-all is not pipeline or data-parallel traffic either: it leaves the
// communication too (the report gives it on its own, parallel::all_to_all_time).
void add_side_work(const EventGraph& graph, const Trace& trace,
                   std::vector<DeviceMetrics>& devices) {
  const bool recomputes = graph.has_kind(TaskKind::R);
  const bool copies = graph.has_kind(TaskKind::D2H) || graph.has_kind(TaskKind::H2D);
  const bool all_to_all = graph.has_kind(TaskKind::A2A);
  if (!recomputes && !copies && !all_to_all) return;
  for (std::uint32_t l = 0; l < trace.lane_count() && l < graph.lane_count(); ++l) {
    DeviceMetrics& dm = devices[graph.lane_info(LaneId{l}).device.value];
    for (const TaskId t : trace.events(LaneId{l})) {
      const TaskKind kind = graph.kind(t);
      if (kind == TaskKind::R) dm.recompute += graph.duration(t);
      if (is_host_copy(kind)) dm.host_copy += graph.duration(t);
      if (kind == TaskKind::A2A) dm.communication -= graph.duration(t);
    }
  }
  for (std::uint32_t d = 0; d < devices.size() && copies; ++d) {
    DeviceMetrics& dm = devices[d];
    dm.communication -= dm.host_copy;
    // The compute lane's running sum does not see the copies' frees.
    dm.peak_memory = 0;
    for (const MemoryPoint& p : activation_memory(graph, trace, DeviceId{d})) {
      dm.peak_memory = std::max(dm.peak_memory, p.value);
    }
  }
}

}  // namespace

Metrics compute_metrics(const EventGraph& graph, const Trace& trace,
                        const SimulationOptions& options) {
  detail::PassTotals totals;
  for (const TimeNs f : trace.finish) totals.makespan = std::max(totals.makespan, f);
  totals.dependency_bound = longest_data_path(graph, CommunicationCost(graph, options));
  totals.devices.resize(graph.device_count());
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    DeviceMetrics& dm = totals.devices[d];
    const auto events = trace.events(DeviceId{d});
    dm.tasks = events.size();
    double memory = 0;
    for (const TaskId t : events) {
      const TaskKind kind = graph.kind(t);
      (kind == TaskKind::Send || kind == TaskKind::Recv ? dm.blocked : dm.busy) +=
          graph.duration(t);
      memory += graph.memory_delta(t);
      dm.peak_memory = std::max(dm.peak_memory, memory);
    }
    if (!events.empty()) {
      dm.first_start = trace.start_of(events.front());
      for (const TaskId t : events) dm.last_finish = std::max(dm.last_finish, trace.finish_of(t));
    }
  }
  for (std::uint32_t l = graph.device_count(); l < trace.lane_count(); ++l) {
    TimeNs& communication = totals.devices[graph.lane_info(LaneId{l}).device.value].communication;
    for (const TaskId t : trace.events(LaneId{l})) communication += graph.duration(t);
  }
  return detail::compute_metrics(graph, trace, options, std::move(totals));
}

Metrics detail::compute_metrics(const EventGraph& graph, const Trace& trace,
                                const SimulationOptions& options, PassTotals totals) {
  Metrics m;
  m.makespan = totals.makespan;
  m.dependency_bound = totals.dependency_bound;
  m.devices = std::move(totals.devices);
  add_side_work(graph, trace, m.devices);
  double bubble_sum = 0;
  for (std::uint32_t d = 0; d < m.devices.size(); ++d) {
    DeviceMetrics& dm = m.devices[d];
    dm.device = DeviceId{d};
    dm.bubble_ratio =
        m.makespan > 0 ? static_cast<double>(m.makespan - dm.busy) / static_cast<double>(m.makespan)
                       : 0.0;
    bubble_sum += dm.bubble_ratio;
    m.total_work += dm.busy;
  }
  m.bubble_ratio = m.devices.empty() ? 0.0 : bubble_sum / static_cast<double>(m.devices.size());
  m.critical_path = binding_chain(graph, trace, CommunicationCost(graph, options), m.makespan);
  m.iteration_finish = iteration_finishes(graph, trace, m.makespan);
  const auto periods = static_cast<TimeNs>(m.iteration_finish.size() - 1);
  m.iteration_time =
      periods == 0
          ? m.makespan
          : (m.iteration_finish.back() - m.iteration_finish.front() + periods / 2) / periods;
  return m;
}

}  // namespace perflow::simulator
