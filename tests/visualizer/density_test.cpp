// Density aggregation: past a threshold, runs of boxes narrower than a point merge into
// shaded spans per lane, so a huge trace draws a bounded number of shapes that still cover
// exactly where each lane is busy.
#include "../../src/visualizer/detail/density.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "render_helpers.hpp"

namespace perflow::visualizer {
namespace {

using namespace test_support;
using detail::Density;
using detail::Mark;

/// One device running tasks of the given (gap before, duration) pairs, in order.
Simulated lane_of(const std::vector<std::pair<TimeNs, TimeNs>>& gaps_and_durations,
                  bool one_kind = false) {
  EventGraphBuilder builder(1);
  TimeNs previous_finish = 0;
  std::vector<TaskId> ids;
  for (const auto& [gap, duration] : gaps_and_durations) {
    TaskSpec spec = task(one_kind || ids.size() % 3 == 0 ? TaskKind::F : TaskKind::B,
                         static_cast<std::uint32_t>(ids.size()), 0, duration);
    ids.push_back(builder.add_task(spec));
    builder.append_to_program(ids.back());
    (void)previous_finish;
  }
  Simulated run{std::move(builder).freeze(), {}};
  // Build the trace by hand: the gaps are idle time the simulator would not leave.
  run.result.trace.start.assign(ids.size(), 0);
  run.result.trace.finish.assign(ids.size(), 0);
  run.result.trace.lane_events.assign(1, {});
  TimeNs t = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    t += gaps_and_durations[i].first;
    run.result.trace.start[i] = t;
    t += gaps_and_durations[i].second;
    run.result.trace.finish[i] = t;
    run.result.trace.lane_events[0].push_back(ids[i]);
  }
  run.result.metrics = simulator::compute_metrics(run.graph, run.result.trace, {});
  return run;
}

/// Per row of task boxes (28 pt rows: 22 pt boxes), top to bottom: the leftmost and the
/// rightmost x any box or span (a stack of bands within the 22 pt) reaches.
std::vector<std::pair<double, double>> row_extents(const std::string& svg) {
  std::vector<std::vector<std::pair<double, double>>> paths;  // each path's vertices
  std::set<double> tops;                                      // rows: where their boxes start
  for (const std::string& line : lines_with(svg, "fill:rgb(")) {
    if (!line.starts_with("<path")) continue;
    paths.push_back(vertices_of(line));
    const auto& v = paths.back();
    // A row's background is 26 pt tall from 1 pt below its top; its boxes start at 3 pt.
    if (v.size() >= 4 && v[2].second - v[0].second == 26) tops.insert(v[0].second + 2);
  }
  std::map<double, std::pair<double, double>> rows;
  for (const auto& v : paths) {
    if (v.size() < 4 || v[2].second - v[0].second > 22 || v[2].second <= v[0].second) continue;
    const auto top = tops.upper_bound(v[0].second);
    if (top == tops.begin()) continue;
    const double row = *std::prev(top);
    if (v[2].second > row + 22 + 1e-9) continue;  // not inside that row's boxes
    auto [it, inserted] = rows.try_emplace(row, v[0].first, v[1].first);
    it->second.first = std::min(it->second.first, v[0].first);
    it->second.second = std::max(it->second.second, v[1].first);
  }
  std::vector<std::pair<double, double>> extents;
  for (const auto& [y, extent] : rows) extents.push_back(extent);
  return extents;
}

/// 1 ns = 1 point: makes widths in the tests read as points.
detail::TimeScale unit_scale(TimeNs extent) {
  detail::TimeScale scale;
  scale.plot_x = 0;
  scale.plot_width = static_cast<double>(extent);
  scale.extent = extent;
  scale.scale = 1.0;
  return scale;
}

detail::LaneMarks marks_of(const Simulated& run, bool aggregate, double narrow = 1.0,
                           double max_span = 6.0) {
  const TimeNs extent = run.result.metrics.makespan;
  return detail::lane_marks(run.graph, run.result.trace, run.result.trace.events(LaneId{0}),
                            unit_scale(extent), Density{aggregate, narrow, max_span});
}

TEST(Density, WithoutAggregationEveryTaskIsABox) {
  const Simulated run = lane_of({{0, 1}, {0, 1}, {5, 10}, {0, 1}});
  const auto marks = marks_of(run, false).marks;
  ASSERT_EQ(marks.size(), 4u);
  for (std::size_t i = 0; i < marks.size(); ++i) {
    EXPECT_EQ(marks[i].task, TaskId{static_cast<std::uint32_t>(i)});
    EXPECT_EQ(marks[i].x0, static_cast<double>(run.result.trace.start[i]));
    EXPECT_EQ(marks[i].x1, static_cast<double>(run.result.trace.finish[i]));
  }
}

TEST(Density, NarrowNeighboursMergeWideBoxesStay) {
  // Widths in points with narrow = 10: three narrow back to back, a wide one, one narrow
  // alone (after a gap of 20), two narrow separated by a gap of 10 (not merged).
  const Simulated run = lane_of({{0, 3}, {0, 3}, {1, 3}, {0, 50}, {20, 4}, {20, 2}, {10, 2}});
  const auto marks = marks_of(run, true, 10.0, 60.0).marks;
  ASSERT_EQ(marks.size(), 5u);
  EXPECT_FALSE(marks[0].task.valid());  // the span of the first three
  EXPECT_EQ(marks[0].tasks, 3u);
  EXPECT_EQ(marks[0].x0, 0.0);
  EXPECT_EQ(marks[0].x1, 10.0);
  EXPECT_EQ(marks[1].task, TaskId{3});  // wide: its own box
  EXPECT_EQ(marks[2].task, TaskId{4});  // a lone narrow task stays a box
  EXPECT_EQ(marks[3].task, TaskId{5});
  EXPECT_EQ(marks[4].task, TaskId{6});
}

TEST(Density, SpansOfOnePhaseAreDrawnAsOne) {
  // 60 forwards, then 90 of F, B, B, ...: spans of at most 10 points, merged by phase.
  EventGraphBuilder builder(1);
  for (std::uint32_t i = 0; i < 150; ++i) {
    const TaskKind kind = i < 60 || (i - 60) % 3 == 0 ? TaskKind::F : TaskKind::B;
    builder.append_to_program(builder.add_task(task(kind, i, 0, 1)));
  }
  Simulated phases{std::move(builder).freeze(), {}};
  phases.result = simulator::simulate(phases.graph);
  const auto marks = marks_of(phases, true, 2.0, 10.0);
  ASSERT_EQ(marks.marks.size(), 2u);
  EXPECT_EQ(marks.marks[0].tasks, 60u);
  EXPECT_EQ(marks.marks[0].x0, 0.0);
  EXPECT_EQ(marks.marks[0].x1, 60.0);
  EXPECT_EQ(marks.marks[1].tasks, 90u);
  EXPECT_EQ(marks.marks[1].x1, 150.0);
  const auto forward = marks.bands_of(marks.marks[0]);
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(forward[0].share, 1.0);
  const auto mixed = marks.bands_of(marks.marks[1]);
  ASSERT_EQ(mixed.size(), 2u);
  EXPECT_NEAR(mixed[0].share, 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(mixed[1].share, 2.0 / 3.0, 1e-12);
  for (const Mark& mark : marks.marks) EXPECT_FALSE(mark.task.valid());
}

TEST(Density, SpanBandsShowEachKindsShareOfTheTime) {
  // A busy span of forwards, then one idle for 3 of its 7 points.
  const Simulated solid_then_sparse =
      lane_of({{0, 1}, {0, 1}, {0, 1}, {0, 1}, {20, 1}, {1, 1}, {1, 1}, {1, 1}}, true);
  const auto marks = marks_of(solid_then_sparse, true, 2.0, 100.0);
  ASSERT_EQ(marks.marks.size(), 2u);
  const auto solid = marks.bands_of(marks.marks[0]);
  const auto sparse = marks.bands_of(marks.marks[1]);
  ASSERT_EQ(solid.size(), 1u);
  ASSERT_EQ(sparse.size(), 1u);
  EXPECT_EQ(solid[0].share, 1.0);
  EXPECT_DOUBLE_EQ(sparse[0].share, 4.0 / 7.0);  // busy 4 of its 7 points
  EXPECT_EQ(solid[0].colour, sparse[0].colour);
  // Mixed kinds: a band per kind, in kind order, sharing the height by time.
  const auto mixed = marks_of(lane_of({{0, 1}, {0, 1}, {0, 1}, {0, 1}}), true, 2.0, 100.0);
  ASSERT_EQ(mixed.marks.size(), 1u);
  const auto bands = mixed.bands_of(mixed.marks[0]);  // F, B, B, F
  ASSERT_EQ(bands.size(), 2u);
  EXPECT_EQ(bands[0].share, 0.5);
  EXPECT_EQ(bands[1].share, 0.5);
  EXPECT_FALSE(bands[0].colour == bands[1].colour);
}

// Property, over seeded random lanes: the marks are in order and disjoint, every task lies
// inside exactly one mark, no span hides an idle stretch of `narrow` or more, and their
// number is bounded by the width, not by the number of tasks.
TEST(Density, PropertiesOnRandomLanes) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::mt19937 random(seed);
    std::uniform_int_distribution<int> kind(0, 9);
    std::vector<std::pair<TimeNs, TimeNs>> lane;
    for (int i = 0; i < 20000; ++i) {
      const int k = kind(random);
      const TimeNs gap = k < 6   ? 0
                         : k < 9 ? std::uniform_int_distribution<TimeNs>(0, 3)(random)
                                 : std::uniform_int_distribution<TimeNs>(0, 400)(random);
      const TimeNs duration = k == 0 ? std::uniform_int_distribution<TimeNs>(20, 300)(random)
                                     : std::uniform_int_distribution<TimeNs>(0, 4)(random);
      lane.emplace_back(gap, duration);
    }
    const Simulated run = lane_of(lane);
    const Trace& trace = run.result.trace;
    const double narrow = 10.0;  // a point is 10 ns here
    detail::TimeScale scale = unit_scale(run.result.metrics.makespan);
    scale.scale = 0.1;
    scale.plot_width = static_cast<double>(run.result.metrics.makespan) * 0.1;
    const auto lane_marks = detail::lane_marks(run.graph, trace, trace.events(LaneId{0}), scale,
                                               Density{true, 1.0, 6.0});
    const std::vector<Mark>& marks = lane_marks.marks;
    std::size_t covered = 0;
    std::size_t next = 0;  // the next task to place
    for (std::size_t m = 0; m < marks.size(); ++m) {
      const Mark& mark = marks[m];
      if (m > 0) {
        EXPECT_GE(mark.x0, marks[m - 1].x1);
      }
      ASSERT_LE(next + mark.tasks, trace.events(LaneId{0}).size());
      for (std::uint32_t i = 0; i < mark.tasks; ++i, ++next) {
        const TaskId t = trace.events(LaneId{0})[next];
        EXPECT_GE(scale.x_of(trace.start_of(t)), mark.x0);
        EXPECT_LE(scale.x_of(trace.finish_of(t)), mark.x1);
        if (i > 0) {  // inside a span: the idle time before this task is under a point
          const TaskId before = trace.events(LaneId{0})[next - 1];
          EXPECT_LT(static_cast<double>(trace.start_of(t) - trace.finish_of(before)), narrow);
        }
      }
      if (mark.task.valid()) {
        EXPECT_EQ(mark.tasks, 1u);
      }

      covered += mark.tasks;
    }
    EXPECT_EQ(covered, lane.size());
    EXPECT_LE(static_cast<double>(marks.size()), 2.0 * scale.plot_width / 1.0 + 2.0);
    EXPECT_LT(marks.size(), lane.size() / 2);
  }
}

// The whole picture: a 1F1B of 98k tasks draws a bounded number of shapes and bytes, while
// with aggregation off every task is a shape.
TEST(Density, LargeTimelineStaysSmallAndKeepsItsShape) {
  const Simulated run = run_schedule("1f1b", 8, 4096, true);
  ASSERT_EQ(run.graph.task_count(), 8u * 4096u * 3u);
  TimelineOptions options;
  const std::string svg = run.svg(options);
  const double plot = options.width;
  EXPECT_LT(paths_of(svg), static_cast<std::size_t>(8 * 2 * plot));
  EXPECT_LT(paths_of(svg), run.graph.task_count() / 10);
  EXPECT_LT(svg.size(), 2'000'000u);
  // The shape survives: per device row, the marks start at its first task and end at its
  // last, as the boxes do without aggregation, and the rows form the warm-up staircase.
  const auto aggregated_rows = row_extents(svg);
  options.aggregate_above = run.graph.task_count();  // off
  const std::string full = run.svg(options);
  const auto full_rows = row_extents(full);
  ASSERT_EQ(aggregated_rows.size(), 8u);
  ASSERT_EQ(full_rows.size(), 8u);
  for (std::size_t d = 0; d < 8; ++d) {
    EXPECT_DOUBLE_EQ(aggregated_rows[d].first, full_rows[d].first) << d;
    EXPECT_NEAR(aggregated_rows[d].second, full_rows[d].second, 0.35) << d;
    if (d > 0) {
      EXPECT_GT(aggregated_rows[d].first, aggregated_rows[d - 1].first);
    }
  }

  EXPECT_GT(paths_of(full), run.graph.task_count());
  EXPECT_GT(full.size(), 10 * svg.size());
}

TEST(Density, AggregationLegendOnlyWhenAggregating) {
  const Simulated small = run_schedule("1f1b", 4, 8);
  TimelineOptions options;
  const std::size_t glyphs = count(small.svg(options), "<use ");
  options.aggregate_above = 10;  // aggregate, though every box here is wide
  const std::string aggregated = small.svg(options);
  EXPECT_GT(count(aggregated, "<use "), glyphs);  // the legend explains the shading
  // Wide boxes stay boxes; the legend's kind swatch and its sample of a span use blue.
  EXPECT_EQ(fills_of(aggregated, kForward), 4u * 8u + 2u);
}

}  // namespace
}  // namespace perflow::visualizer
