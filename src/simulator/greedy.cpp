// Greedy (list-scheduling) mode: program order is ignored; only data dependences count.
// Whenever a lane (a device's compute stream, or a communication stream) is free, it starts,
// among its tasks whose inputs have all arrived, the one of highest priority:
//   1. backward work first (B and BW), then forwards (F), then weight gradients (W): freeing
//      activations and unblocking upstream devices before admitting new microbatches, and
//      letting W fill bubbles as the ZeroBubble schedules do;
//   2. then the lower microbatch;
//   3. then, for backward work, the higher chunk (nearer the loss), for F and W the lower;
//   4. then the lower task id.
// Communication and optimizer tasks rank after W (they have lanes of their own but for OPT).
// Events are processed in time order with ties broken by (time, completion before start,
// task or device id), so results are deterministic. O((tasks + edges) log tasks).
#include <algorithm>
#include <queue>
#include <tuple>
#include <vector>

#include "perflow/simulator/communication.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::simulator {
namespace {

// Smaller is more urgent.
struct Priority {
  std::uint8_t kind_rank;
  std::uint32_t microbatch;
  std::uint32_t chunk_rank;
  std::uint32_t task;

  friend auto operator<=>(const Priority&, const Priority&) = default;
};

Priority priority_of(const EventGraph& g, TaskId t) {
  const TaskKind kind = g.kind(t);
  // An R is the start of its backward.
  const bool backward = kind == TaskKind::B || kind == TaskKind::BW || kind == TaskKind::R;
  const std::uint8_t rank = backward ? 0 : kind == TaskKind::F ? 1 : kind == TaskKind::W ? 2 : 3;
  const std::uint32_t chunk = backward ? ~g.chunk(t) : g.chunk(t);
  return {rank, g.microbatch(t), chunk, t.value};
}

// Release: a successor whose release share is below 1 gets its input part-way through a task.
enum class EventType : std::uint8_t { Finish = 0, Release = 1, Wake = 2 };

struct Event {
  TimeNs time;
  EventType type;
  std::uint32_t id;        // task for Finish and Release, lane for Wake
  std::uint32_t from = 0;  // for Release: the predecessor

  friend auto operator<=>(const Event&, const Event&) = default;
};

template <class T>
using MinHeap = std::priority_queue<T, std::vector<T>, std::greater<>>;

}  // namespace

Trace simulate_greedy(const EventGraph& graph, const SimulationOptions& options) {
  const std::size_t n = graph.task_count();
  const std::uint32_t lanes = graph.lane_count();
  Trace trace;
  trace.start.assign(n, 0);
  trace.finish.assign(n, 0);
  trace.lane_events.resize(lanes);

  std::vector<std::uint32_t> pending(n, 0);
  std::vector<TimeNs> ready_time(n, 0);
  for (std::uint32_t t = 0; t < n; ++t) {
    for (const Adjacent& p : graph.predecessors(TaskId{t})) {
      pending[t] += p.kind() == EdgeKind::Data ? 1u : 0u;
    }
  }
  // Per lane: tasks whose inputs are complete, by arrival time; and those arrived, by
  // priority.
  std::vector<MinHeap<std::pair<TimeNs, std::uint32_t>>> arriving(lanes);
  std::vector<MinHeap<Priority>> available(lanes);
  std::vector<bool> busy(lanes, false);
  MinHeap<Event> events;
  const CommunicationCost comm(graph, options);
  check_time_range(graph, comm);
  const bool has_shares = !graph.release_shares().empty();

  const auto release = [&](TaskId t) {
    const std::uint32_t l = graph.lane(t).value;
    arriving[l].emplace(ready_time[t.value], t.value);
    events.push({ready_time[t.value], EventType::Wake, l});
  };
  for (std::uint32_t t = 0; t < n; ++t) {
    if (pending[t] == 0) release(TaskId{t});
  }

  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    if (e.type == EventType::Finish) {
      const TaskId done{e.id};
      const LaneId here = graph.lane(done);
      busy[here.value] = false;
      for (const Adjacent& s : graph.successors(done)) {
        if (s.kind() != EdgeKind::Data || graph.release_share(s.task()) < 1.0) continue;
        const TimeNs arrival = e.time + comm(done, s.task());
        ready_time[s.task().value] = std::max(ready_time[s.task().value], arrival);
        if (--pending[s.task().value] == 0) release(s.task());
      }
      events.push({e.time, EventType::Wake, here.value});
      continue;
    }
    if (e.type == EventType::Release) {
      const TaskId to{e.id};
      const TimeNs arrival = e.time + comm(TaskId{e.from}, to);
      ready_time[to.value] = std::max(ready_time[to.value], arrival);
      if (--pending[to.value] == 0) release(to);
      continue;
    }
    const std::uint32_t d = e.id;
    if (busy[d]) continue;
    while (!arriving[d].empty() && arriving[d].top().first <= e.time) {
      available[d].push(priority_of(graph, TaskId{arriving[d].top().second}));
      arriving[d].pop();
    }
    if (available[d].empty()) continue;  // a Wake is queued for the next arrival
    const TaskId t{available[d].top().task};
    available[d].pop();
    busy[d] = true;
    trace.start[t.value] = e.time;
    trace.finish[t.value] = e.time + graph.duration(t);
    trace.lane_events[d].push_back(t);
    events.push({trace.finish[t.value], EventType::Finish, t.value});
    if (has_shares) {
      for (const Adjacent& s : graph.successors(t)) {
        const double share = graph.release_share(s.task());
        if (s.kind() != EdgeKind::Data || share >= 1.0) continue;
        events.push({EventGraph::released_at(e.time, trace.finish[t.value], share),
                     EventType::Release, s.task().value, t.value});
      }
    }
  }
  return trace;
}

}  // namespace perflow::simulator
