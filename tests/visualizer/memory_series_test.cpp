#include "perflow/visualizer/memory_series.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "render_helpers.hpp"

namespace perflow::visualizer {
namespace {

using namespace test_support;

std::vector<MemoryPoint> series(const Simulated& run, std::uint32_t device = 0) {
  return activation_memory(run.graph, run.result.trace, DeviceId{device});
}

TEST(MemorySeries, AllocatesAtStartFreesAtFinish) {
  // F (+2) 0-1000, F (+2) 1000-2000, B (-1) 2000-3000, W (-3) 3000-3500.
  const Simulated run =
      run_program({task(TaskKind::F, 0, 0, 1000, 2.0), task(TaskKind::F, 1, 0, 1000, 2.0),
                   task(TaskKind::B, 0, 0, 1000, -1.0), task(TaskKind::W, 0, 0, 500, -3.0)});
  const std::vector<MemoryPoint> expected = {{0, 2.0}, {1000, 4.0}, {3000, 3.0}, {3500, 0.0}};
  EXPECT_EQ(series(run), expected);
}

TEST(MemorySeries, SameInstantChangesCollapse) {
  // BW (-1) ends at 2000 exactly when F (+1) starts: no step at 2000.
  const Simulated run =
      run_program({task(TaskKind::F, 0, 0, 1000, 1.0), task(TaskKind::BW, 0, 0, 1000, -1.0),
                   task(TaskKind::F, 1, 0, 1000, 1.0)});
  // The free at 2000 and the allocation at 2000 cancel: 1 holds from 0 on.
  EXPECT_EQ(series(run), (std::vector<MemoryPoint>{{0, 1.0}}));
}

TEST(MemorySeries, NothingRunsNothingAllocated) {
  const EventGraph graph = EventGraphBuilder(2).freeze();
  const simulator::SimulationResult result = simulator::simulate(graph);
  EXPECT_EQ(activation_memory(graph, result.trace, DeviceId{1}),
            (std::vector<MemoryPoint>{{0, 0.0}}));
  EXPECT_EQ(activation_memory(graph, result.trace, DeviceId{7}),
            (std::vector<MemoryPoint>{{0, 0.0}}));
}

// For every registered schedule, the series' maximum is the device's peak_memory, and the
// series ends where it started (everything allocated is freed).
TEST(MemorySeries, MaximumIsThePeakForEverySchedule) {
  for (const parallel::ScheduleInfo& info : parallel::builtin_schedules().all()) {
    if (info.name == "custom") continue;
    for (const std::uint32_t chunks : {1u, 2u}) {
      parallel::PipelineSpec spec;
      spec.schedule = info.name;
      spec.stages = 4;
      spec.microbatches = 8;
      spec.chunks = chunks;
      EventGraph graph;
      try {
        graph = parallel::build_schedule(
            spec, parallel::CostTable(parallel::TaskCosts{1000, 1500, 700, 1.0, 0.5}));
      } catch (const ScheduleError&) {
        continue;
      }
      const auto result = simulator::simulate(graph);
      for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
        const auto points = activation_memory(graph, result.trace, DeviceId{d});
        double top = 0;
        for (const MemoryPoint& p : points) top = std::max(top, p.value);
        EXPECT_DOUBLE_EQ(top, result.metrics.devices[d].peak_memory) << info.name << " d" << d;
        EXPECT_NEAR(points.back().value, 0.0, 1e-9) << info.name << " d" << d;
        EXPECT_TRUE(std::is_sorted(points.begin(), points.end(),
                                   [](const auto& a, const auto& b) { return a.time < b.time; }));
      }
    }
  }
}

}  // namespace
}  // namespace perflow::visualizer
