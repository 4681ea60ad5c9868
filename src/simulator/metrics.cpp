#include "perflow/simulator/metrics.hpp"

#include <algorithm>

#include "perflow/simulator/communication.hpp"

namespace perflow::simulator {
namespace {

std::vector<TaskId> binding_chain(const EventGraph& graph, const Trace& trace,
                                  const CommunicationCost& comm) {
  std::vector<TaskId> chain;
  if (graph.task_count() == 0) return chain;
  TaskId last{0};
  for (std::uint32_t t = 1; t < graph.task_count(); ++t) {
    if (trace.finish[t] > trace.finish[last.value]) last = TaskId{t};
  }
  // What a task can wait on: its data predecessors and the task before it on its lane
  // (in ordered mode that is its program predecessor; in greedy mode whatever ran there).
  BigVector<TaskId> previous_on_device(graph.task_count());
  for (const auto& events : trace.lane_events) {
    for (std::size_t i = 1; i < events.size(); ++i)
      previous_on_device[events[i].value] = events[i - 1];
  }
  // Walk back through whichever arrival set the start (lowest id on ties).
  for (TaskId current = last;;) {
    chain.push_back(current);
    const TimeNs start = trace.start_of(current);
    TaskId binding;
    const auto consider = [&](TaskId candidate, TimeNs arrival) {
      if (arrival == start && (!binding.valid() || candidate < binding)) binding = candidate;
    };
    for (const Adjacent& p : graph.predecessors(current)) {
      if (p.kind() == EdgeKind::Data) {
        consider(p.task(), trace.finish_of(p.task()) + comm(p.task(), current));
      }
    }
    if (const TaskId before = previous_on_device[current.value]; before.valid()) {
      consider(before, trace.finish_of(before));
    }
    if (!binding.valid()) break;
    current = binding;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

TimeNs longest_data_path(const EventGraph& graph, const CommunicationCost& comm) {
  BigVector<TimeNs> earliest_finish(graph.task_count(), 0);
  TimeNs bound = 0;
  for (const TaskId t : graph.topological_order()) {
    TimeNs ready = 0;
    for (const Adjacent& p : graph.predecessors(t)) {
      if (p.kind() != EdgeKind::Data) continue;
      ready = std::max(ready, earliest_finish[p.task().value] + comm(p.task(), t));
    }
    earliest_finish[t.value] = ready + graph.duration(t);
    bound = std::max(bound, earliest_finish[t.value]);
  }
  return bound;
}

}  // namespace

Metrics compute_metrics(const EventGraph& graph, const Trace& trace,
                        const SimulationOptions& options) {
  Metrics m;
  for (const TimeNs f : trace.finish) m.makespan = std::max(m.makespan, f);
  m.devices.resize(graph.device_count());
  double bubble_sum = 0;
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    DeviceMetrics& dm = m.devices[d];
    dm.device = DeviceId{d};
    const auto events = trace.events(DeviceId{d});
    dm.tasks = events.size();
    double memory = 0;
    for (const TaskId t : events) {
      dm.busy += graph.duration(t);
      memory += graph.memory_delta(t);
      dm.peak_memory = std::max(dm.peak_memory, memory);
    }
    if (!events.empty()) {
      dm.first_start = trace.start_of(events.front());
      for (const TaskId t : events) dm.last_finish = std::max(dm.last_finish, trace.finish_of(t));
    }
    dm.bubble_ratio =
        m.makespan > 0 ? static_cast<double>(m.makespan - dm.busy) / static_cast<double>(m.makespan)
                       : 0.0;
    bubble_sum += dm.bubble_ratio;
    m.total_work += dm.busy;
  }
  m.bubble_ratio = m.devices.empty() ? 0.0 : bubble_sum / static_cast<double>(m.devices.size());
  for (std::uint32_t l = graph.device_count(); l < trace.lane_count(); ++l) {
    TimeNs& communication = m.devices[graph.lane_info(LaneId{l}).device.value].communication;
    for (const TaskId t : trace.events(LaneId{l})) communication += graph.duration(t);
  }
  const CommunicationCost comm(graph, options);
  m.critical_path = binding_chain(graph, trace, comm);
  m.dependency_bound = longest_data_path(graph, comm);
  return m;
}

}  // namespace perflow::simulator
