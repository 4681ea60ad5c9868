// Property tests over seeded random pipelines (the seed is printed on failure): every
// task runs once on its device, every dependence is respected (with communication), no
// device runs two tasks at once, the makespan lies between the dependency bound and the
// serial work, the critical path is a real chain, the result equals an independent
// longest-path computation over a Boost.Graph topological order, and reruns are identical.
#include <algorithm>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::simulator {
namespace {

TimeNs comm(const EventGraph& g, TaskId from, TaskId to, EdgeKind kind, TimeNs latency) {
  return kind == EdgeKind::Data && g.device(from) != g.device(to) ? latency : 0;
}

// Start times by longest path over an order Boost computes, independently of our Kahn pass.
BigVector<TimeNs> boost_oracle_starts(const EventGraph& g, TimeNs latency) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph bg(g.task_count());
  for (std::uint32_t v = 0; v < g.task_count(); ++v) {
    for (const Adjacent& s : g.successors(TaskId{v})) boost::add_edge(v, s.task().value, bg);
  }
  std::vector<std::size_t> reverse_topo;
  boost::topological_sort(bg, std::back_inserter(reverse_topo));
  BigVector<TimeNs> start(g.task_count(), 0);
  for (auto it = reverse_topo.rbegin(); it != reverse_topo.rend(); ++it) {
    const TaskId v{static_cast<std::uint32_t>(*it)};
    for (const Adjacent& p : g.predecessors(v)) {
      start[v.value] = std::max(start[v.value], start[p.task().value] + g.duration(p.task()) +
                                                    comm(g, p.task(), v, p.kind(), latency));
    }
  }
  return start;
}

TEST(SimulatorProperties, RandomPipelines) {
  const auto& registry = parallel::builtin_schedules();
  for (std::uint32_t seed = 1; seed <= 120; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
      return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
    };
    parallel::PipelineSpec spec;
    spec.schedule =
        registry.all()[pick(0, static_cast<std::uint32_t>(registry.all().size()) - 1)].name;
    spec.stages = pick(1, 8);
    spec.microbatches = pick(1, 16);
    spec.split_backward = pick(0, 1) == 1;
    const parallel::TaskCosts costs{pick(0, 3000), pick(0, 3000), pick(0, 3000),
                                    static_cast<double>(pick(1, 4)), 0.5};
    const TimeNs latency = pick(0, 1) == 0 ? 0 : pick(1, 2000);
    SCOPED_TRACE(fmt::format("seed={} {} p={} m={} split={} F={} B={} W={} C={}", seed,
                             spec.schedule, spec.stages, spec.microbatches, spec.split_backward,
                             costs.forward, costs.backward, costs.weight, latency));

    const EventGraph g = parallel::build_schedule(spec, parallel::CostTable(costs));
    const SimulationResult r = simulate(g, SimulationOptions{latency});
    const Trace& t = r.trace;
    const Metrics& m = r.metrics;

    // Every task exactly once, on its own device; a device never runs two at once.
    std::vector<int> seen(g.task_count(), 0);
    for (std::uint32_t d = 0; d < g.device_count(); ++d) {
      const auto events = t.events(DeviceId{d});
      for (std::size_t i = 0; i < events.size(); ++i) {
        ++seen[events[i].value];
        ASSERT_EQ(g.device(events[i]), DeviceId{d});
        ASSERT_EQ(t.finish_of(events[i]) - t.start_of(events[i]), g.duration(events[i]));
        if (i > 0) {
          ASSERT_GE(t.start_of(events[i]), t.finish_of(events[i - 1]));
        }
      }
    }
    ASSERT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));

    // Every dependence respected, with its communication cost.
    std::size_t cross_device = 0;
    for (std::uint32_t v = 0; v < g.task_count(); ++v) {
      for (const Adjacent& p : g.predecessors(TaskId{v})) {
        const TimeNs c = comm(g, p.task(), TaskId{v}, p.kind(), latency);
        cross_device += c > 0 ? 1 : 0;
        ASSERT_GE(t.start[v], t.finish_of(p.task()) + c);
      }
    }

    // Bounds: dependency bound <= makespan <= serial work + every transfer.
    EXPECT_LE(m.dependency_bound, m.makespan);
    EXPECT_LE(m.makespan, m.total_work + static_cast<TimeNs>(cross_device) * latency);

    // The critical path is a chain from t=0 to the makespan.
    ASSERT_FALSE(m.critical_path.empty());
    EXPECT_EQ(t.start_of(m.critical_path.front()), 0);
    EXPECT_EQ(t.finish_of(m.critical_path.back()), m.makespan);
    for (std::size_t i = 1; i < m.critical_path.size(); ++i) {
      const TaskId prev = m.critical_path[i - 1];
      const TaskId next = m.critical_path[i];
      bool linked = false;
      for (const Adjacent& p : g.predecessors(next)) {
        linked = linked ||
                 (p.task() == prev &&
                  t.finish_of(prev) + comm(g, prev, next, p.kind(), latency) == t.start_of(next));
      }
      ASSERT_TRUE(linked) << "critical path step " << i;
    }

    // Independent oracle and determinism.
    EXPECT_EQ(t.start, boost_oracle_starts(g, latency));
    const SimulationResult again = simulate(
        parallel::build_schedule(spec, parallel::CostTable(costs)), SimulationOptions{latency});
    EXPECT_EQ(again.trace.start, t.start);
    EXPECT_EQ(again.trace.device_events, t.device_events);
    EXPECT_EQ(again.metrics.critical_path, m.critical_path);
  }
}

}  // namespace
}  // namespace perflow::simulator
