#include "perflow/visualizer/comparison.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "render_helpers.hpp"

namespace perflow::visualizer {
namespace {

using namespace test_support;

constexpr std::string_view kBar = "rgb(41.960784%,48.627451%,57.647059%)";  // #6B7C93

ComparedRun compared(const Simulated& run, std::string name) {
  return {std::move(name), "", run.graph, run.result.trace, run.result.metrics};
}

TEST(Comparison, StackedTimelinesAndBars) {
  const Simulated gpipe = run_schedule("gpipe", 4, 8);
  const Simulated one_f_one_b = run_schedule("1f1b", 4, 8);
  const std::vector<ComparedRun> runs = {compared(gpipe, "gpipe"), compared(one_f_one_b, "1f1b")};
  const std::string svg = render_comparison(runs, {}, ImageFormat::Svg);
  EXPECT_TRUE(svg.starts_with("<?xml"));
  // Both timelines: every task's box, plus one legend swatch per kind.
  EXPECT_EQ(fills_of(svg, kForward), 2u * 32u + 1u);
  EXPECT_EQ(fills_of(svg, kFused), 2u * 32u + 1u);
  // Three bar charts of two bars.
  EXPECT_EQ(fills_of(svg, kBar), 3u * 2u);
  EXPECT_EQ(svg, render_comparison(runs, {}, ImageFormat::Svg));

  const std::vector<ComparedRun> one = {compared(gpipe, "gpipe")};
  EXPECT_LT(height_of(render_comparison(one, {}, ImageFormat::Svg)), height_of(svg));
}

TEST(Comparison, OneTimeScaleForAll) {
  // p = 2 finishes sooner than p = 4 with the same microbatches: its boxes end further left.
  const Simulated short_run = run_schedule("1f1b", 2, 4);
  const Simulated long_run = run_schedule("1f1b", 4, 4);
  ASSERT_LT(short_run.result.metrics.makespan, long_run.result.metrics.makespan);
  const std::vector<ComparedRun> runs = {compared(short_run, "short"), compared(long_run, "long")};
  const std::string svg = render_comparison(runs, {}, ImageFormat::Svg);
  const auto boxes = boxes_of(svg, kFused);  // legend swatch, short run's 8, long run's 16
  ASSERT_EQ(boxes.size(), 1u + 8u + 16u);
  double short_end = 0, long_end = 0;
  for (std::size_t i = 1; i < boxes.size(); ++i) {
    (i <= 8 ? short_end : long_end) = std::max(i <= 8 ? short_end : long_end, boxes[i].x1);
  }
  EXPECT_LT(short_end, long_end);
  // Same start: the first forward of both runs at the same x.
  const auto forward = boxes_of(svg, kForward);
  EXPECT_DOUBLE_EQ(forward[1].x0, forward[1 + 8].x0);
}

TEST(Comparison, FormatsAndErrors) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  const std::vector<ComparedRun> runs = {compared(run, "a"), compared(run, "b")};
  EXPECT_TRUE(render_comparison(runs, {}, ImageFormat::Png).starts_with("\x89PNG"));
  EXPECT_TRUE(render_comparison(runs, {}, ImageFormat::Pdf).starts_with("%PDF-"));
  EXPECT_THROW((void)render_comparison({}, {}, ImageFormat::Svg), std::invalid_argument);
  const TempDir dir;
  EXPECT_THROW(write_comparison(dir.path() / "c.gif", runs, {}), UnknownNameError);
  EXPECT_THROW(write_comparison(dir.path() / "no" / "c.svg", runs, {}), IoError);
  EXPECT_TRUE(dir.entries().empty());
  write_comparison(dir.path() / "c.svg", runs, {});
  EXPECT_EQ(read_bytes(dir.path() / "c.svg"), render_comparison(runs, {}, ImageFormat::Svg));
}

TEST(Comparison, LongNamesAreCutInTheBarChart) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  const std::string name(300, 'x');
  const std::vector<ComparedRun> runs = {compared(run, name), compared(run, "b")};
  const std::string svg = render_comparison(runs, {}, ImageFormat::Svg);
  // The bars start well inside the page, though the name is wider than it.
  const auto bars = boxes_of(svg, kBar);
  ASSERT_EQ(bars.size(), 6u);
  EXPECT_LT(bars[0].x0, 1600 * 0.4);
}

TEST(Comparison, AnOutOfMemoryRunIsMarked) {
  const Simulated run = run_schedule("1f1b", 2, 4);
  std::vector<ComparedRun> runs = {compared(run, "fits"), compared(run, "too big")};
  EXPECT_EQ(count(render_comparison(runs, {}, ImageFormat::Svg), kHighlight), 0u);
  runs[1].out_of_memory = true;
  // Its heading's OUT OF MEMORY and its bar chart name, in the highlight colour.
  EXPECT_GT(count(render_comparison(runs, {}, ImageFormat::Svg), kHighlight), 0u);
}

TEST(Comparison, ActivationUnitsAndBytesAreNotOnOneScale) {
  // The same schedule in activation units (each F holds 1) and in bytes (each F 2 GB): both
  // peaks span their bar's room, each on its own scale, not 4 beside 8 GB.
  const Simulated units = run_schedule("1f1b", 2, 4);
  Simulated bytes = run_schedule("1f1b", 2, 4);
  for (auto& device : bytes.result.metrics.devices) device.peak_memory *= 2e9;
  ASSERT_GT(units.result.metrics.devices[0].peak_memory, 0);
  const std::vector<ComparedRun> runs = {compared(units, "units"), compared(bytes, "bytes")};
  const auto bars = boxes_of(render_comparison(runs, {}, ImageFormat::Svg), kBar);
  ASSERT_EQ(bars.size(), 3u * 2u);  // makespan, bubble ratio, memory; two runs each
  EXPECT_DOUBLE_EQ(bars[4].x1 - bars[4].x0, bars[5].x1 - bars[5].x0);
  // On one scale (both in bytes), the smaller peak has the shorter bar.
  Simulated half = run_schedule("1f1b", 2, 4);
  for (auto& device : half.result.metrics.devices) device.peak_memory *= 1e9;
  const std::vector<ComparedRun> same = {compared(half, "half"), compared(bytes, "bytes")};
  const auto same_bars = boxes_of(render_comparison(same, {}, ImageFormat::Svg), kBar);
  ASSERT_EQ(same_bars.size(), 6u);
  EXPECT_LT(same_bars[4].x1 - same_bars[4].x0, same_bars[5].x1 - same_bars[5].x0);
}

}  // namespace
}  // namespace perflow::visualizer
