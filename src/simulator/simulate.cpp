#include "perflow/simulator/simulate.hpp"

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "detail/ordered_pass.hpp"
#include "perflow/core/detail/graph_storage.hpp"
#include "perflow/core/error.hpp"
#include "perflow/simulator/communication.hpp"

namespace perflow::simulator {

namespace {

// Where the pass reads a task's duration and memory delta: the graph's columns, or its
// costs by place (a pipeline graph's), indexed by the task's device, chunk and kind. The
// pass is compiled once for each, so neither pays for the other's test. Release shares
// (TaskSpec::release_share) come with columns only (the passes that add them write the
// columns out), and are read only by the variant that has them.
template <bool kReleaseShares>
struct ColumnCosts {
  static constexpr bool kShares = kReleaseShares;
  static constexpr bool kColumns = true;
  const TimeNs* duration;
  const double* memory_delta;
  const double* shares = nullptr;
  [[nodiscard]] std::size_t at(std::uint32_t t) const { return t; }
};

// With one chunk per device (kChunks false) the chunk is not read.
template <bool kChunks>
struct CostsByPlace {
  static constexpr bool kShares = false;
  static constexpr bool kColumns = false;
  const ::perflow::detail::PlacedCosts& placed;
  const DeviceId* device;
  const TaskKind* kind;
  const std::uint32_t* chunk;
  const TimeNs* duration = placed.duration.data();
  const double* memory_delta = placed.memory_delta.data();

  [[nodiscard]] std::size_t at(std::uint32_t t) const {
    return placed.index(device[t], kChunks ? chunk[t] : 0, kind[t]);
  }
};

}  // namespace

namespace detail {

Trace simulate_ordered(const EventGraph& graph, const SimulationOptions& options,
                       PassTotals& totals) {
  const std::size_t n = graph.task_count();
  if (n > 0 && !graph.has_program_order()) {
    throw ScheduleError(
        "ordered simulation needs every task in its device's program order; this graph has "
        "none (simulate it in greedy mode)");
  }
  Trace trace;
  trace.start.resize(n);
  trace.finish.resize(n);
  BigVector<TimeNs> data_finish(n);  // earliest finish through data dependences alone
  const std::span<const DeviceId> device = graph.devices();
  // Without communication lanes every task is on its compute lane: no column to read.
  const bool communication = graph.has_communication_lanes();
  const std::span<const LaneId> lane =
      communication ? graph.lanes_of_tasks() : std::span<const LaneId>{};
  const std::span<const TaskKind> kind = graph.kinds();
  // SEND and RECV on a compute lane: blocking transfers, counted apart from the busy time.
  const bool blocking = graph.has_kind(TaskKind::Recv);
  const std::uint32_t devices = graph.device_count();
  totals.devices.assign(devices, DeviceMetrics{});
  std::vector<double> memory(devices, 0.0);
  TimeNs* const start = trace.start.data();
  TimeNs* const finish = trace.finish.data();
  const CommunicationCost comm(graph, options);
  check_time_range(graph, comm);

  // Program order is encoded as `order` edges, so "lane free" is one more predecessor.
  TimeNs bound = 0;
  TimeNs makespan = 0;
  // Inlined into the loops below: a call per task costs more than the rest of its visit.
  const auto visit = [&](TaskId t, const auto& costs) __attribute__((always_inline)) {
    TimeNs ready = 0;
    TimeNs data_ready = 0;
    const DeviceId here = device[t.value];
    constexpr bool kShares = std::decay_t<decltype(costs)>::kShares;
    double share = 1.0;
    if constexpr (kShares) share = costs.shares[t.value];
    for (const Adjacent& p : graph.predecessors(t)) {
      const std::uint32_t from = p.task().value;
      if (p.kind() == EdgeKind::Order) {
        ready = std::max(ready, finish[from]);
        continue;
      }
      const TimeNs transfer = device[from] != here ? comm(p.task(), t) : 0;
      // Released part-way through the predecessor: as long before its finish, both ways.
      TimeNs early = 0;
      if constexpr (kShares) {
        if (share < 1.0) {
          early = finish[from] - EventGraph::released_at(start[from], finish[from], share);
        }
      }
      ready = std::max(ready, finish[from] - early + transfer);
      data_ready = std::max(data_ready, data_finish[from] - early + transfer);
    }
    const std::size_t cost = costs.at(t.value);
    const TimeNs length = costs.duration[cost];
    start[t.value] = ready;
    finish[t.value] = ready + length;
    data_finish[t.value] = data_ready + length;
    bound = std::max(bound, data_ready + length);
    makespan = std::max(makespan, ready + length);
    DeviceMetrics& dm = totals.devices[here.value];
    if (communication && lane[t.value].value >= devices) {  // a communication lane of `here`
      dm.communication += length;
      return;
    }
    if (dm.tasks++ == 0) dm.first_start = ready;
    dm.busy += length;  // blocked transfers are taken out after the pass
    if (blocking && (kind[t.value] == TaskKind::Send || kind[t.value] == TaskKind::Recv)) {
      dm.blocked += length;
    }
    dm.last_finish = std::max(dm.last_finish, ready + length);
    memory[here.value] += costs.memory_delta[cost];
    dm.peak_memory = std::max(dm.peak_memory, memory[here.value]);
  };
  const auto pass = [&](const auto& costs) {
    if (graph.ids_are_topological()) {
      for (std::uint32_t t = 0; t < n; ++t) visit(TaskId{t}, costs);
    } else {
      // The order jumps between the base's tasks and those a pass appended: the arrays of
      // the task a few steps ahead are fetched while this one is visited.
      const std::span<const TaskId> order = graph.topological_order();
      constexpr std::size_t kAhead = 12;
      for (std::size_t i = 0; i < n; ++i) {
        if (i + kAhead < n) {
          const std::uint32_t a = order[i + kAhead].value;
          __builtin_prefetch(graph.predecessors(TaskId{a}).data());
          __builtin_prefetch(start + a, 1);
          __builtin_prefetch(finish + a, 1);
          __builtin_prefetch(data_finish.data() + a, 1);
          __builtin_prefetch(device.data() + a);
          if constexpr (std::decay_t<decltype(costs)>::kColumns) {
            __builtin_prefetch(costs.duration + a);
            __builtin_prefetch(costs.memory_delta + a);
          }
        }
        visit(order[i], costs);
      }
    }
  };
  const ::perflow::detail::PlacedCosts* placed =
      ::perflow::detail::GraphAccess::placed_costs(graph);
  if (placed != nullptr && graph.release_shares().empty()) {
    if (placed->chunks > 1) {
      pass(CostsByPlace<true>{*placed, device.data(), kind.data(), graph.chunks().data()});
    } else {
      pass(CostsByPlace<false>{*placed, device.data(), kind.data(), nullptr});
    }
  } else if (graph.release_shares().empty()) {
    pass(ColumnCosts<false>{graph.durations().data(), graph.memory_deltas().data()});
  } else {
    pass(ColumnCosts<true>{graph.durations().data(), graph.memory_deltas().data(),
                           graph.release_shares().data()});
  }
  for (DeviceMetrics& dm : totals.devices) dm.busy -= dm.blocked;
  totals.dependency_bound = bound;
  totals.makespan = makespan;

  trace.lane_events.resize(graph.lane_count());
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    const auto program = graph.program(LaneId{l});
    trace.lane_events[l].assign(program.begin(), program.end());
  }
  return trace;
}

}  // namespace detail

Trace simulate_ordered(const EventGraph& graph, const SimulationOptions& options) {
  detail::PassTotals totals;
  return detail::simulate_ordered(graph, options, totals);
}

std::string_view to_string(SimulationMode mode) {
  return mode == SimulationMode::Greedy ? "greedy" : "ordered";
}

std::optional<SimulationMode> parse_simulation_mode(std::string_view text) {
  if (text == "ordered") return SimulationMode::Ordered;
  if (text == "greedy") return SimulationMode::Greedy;
  return std::nullopt;
}

SimulationResult simulate(const EventGraph& graph, const SimulationOptions& options) {
  SimulationResult result;
  if (options.mode == SimulationMode::Greedy) {
    result.trace = simulate_greedy(graph, options);
    result.metrics = compute_metrics(graph, result.trace, options);
  } else {
    detail::PassTotals totals;
    result.trace = detail::simulate_ordered(graph, options, totals);
    result.metrics = detail::compute_metrics(graph, result.trace, options, std::move(totals));
  }
  return result;
}

}  // namespace perflow::simulator
