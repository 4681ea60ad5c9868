#include "perflow/visualizer/timeline.hpp"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "render_helpers.hpp"

namespace perflow::visualizer {
namespace {

using namespace test_support;

TEST(Timeline, RendersAnSvgDocumentOfTheRequestedWidth) {
  const Simulated run = run_schedule("1f1b", 4, 8);
  TimelineOptions options;
  options.width = 1234;
  const std::string svg = run.svg(options);
  EXPECT_TRUE(svg.starts_with("<?xml")) << svg.substr(0, 80);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("width=\"1234pt\""), std::string::npos);
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
}

TEST(Timeline, SameInputGivesIdenticalBytes) {
  const Simulated run = run_schedule("1f1b", 4, 8);
  const Simulated other = run_schedule("gpipe", 2, 3, true);
  TimelineOptions options;
  options.title = "1F1B";
  options.subtitle = "p=4, m=8";
  const std::string first = run.svg(options);
  (void)other.svg(options);  // cairo numbers surfaces process-wide; must not leak into output
  const std::string second = run.svg(options);
  EXPECT_EQ(first, second);
  EXPECT_EQ(count(first, "id=\"surface1\""), 1u);
}

TEST(Timeline, OneBoxPerTaskInItsKindColour) {
  // Fused backward: 32 F and 32 BW; each kind also has one legend swatch.
  const std::string fused = run_schedule("1f1b", 4, 8).svg();
  EXPECT_EQ(fills_of(fused, kForward), 32u + 1u);
  EXPECT_EQ(fills_of(fused, kFused), 32u + 1u);
  EXPECT_EQ(fills_of(fused, kBackward), 0u);
  EXPECT_EQ(fills_of(fused, kWeight), 0u);

  const std::string split = run_schedule("1f1b", 4, 8, true).svg();
  EXPECT_EQ(fills_of(split, kForward), 32u + 1u);
  EXPECT_EQ(fills_of(split, kBackward), 32u + 1u);
  EXPECT_EQ(fills_of(split, kWeight), 32u + 1u);
  EXPECT_EQ(fills_of(split, kFused), 0u);
}

TEST(Timeline, CountsFollowTheGraphNotTheSchedule) {
  const Simulated run = run_program({task(TaskKind::F, 0, 0, 1000), task(TaskKind::F, 1, 0, 1000),
                                     task(TaskKind::F, 2, 0, 1000), task(TaskKind::B, 0, 0, 1000),
                                     task(TaskKind::B, 1, 0, 1000), task(TaskKind::W, 0, 0, 1000)});
  const std::string svg = run.svg();
  EXPECT_EQ(fills_of(svg, kForward), 3u + 1u);
  EXPECT_EQ(fills_of(svg, kBackward), 2u + 1u);
  EXPECT_EQ(fills_of(svg, kWeight), 1u + 1u);
  EXPECT_EQ(fills_of(svg, kFused), 0u);
}

TEST(Timeline, ChunkShadesTheKindColour) {
  const auto base = fills_by_colour(run_program({task(TaskKind::F, 0, 0, 1000)}).svg());
  const auto shaded = fills_by_colour(run_program({task(TaskKind::F, 0, 1, 1000)}).svg());
  EXPECT_EQ(base.at(std::string(kForward)), 2u);  // the box and the legend swatch
  // With two chunks present the legend shows a chunk-0 and a chunk-1 swatch.
  EXPECT_EQ(shaded.at(std::string(kForward)), 1u);
  std::vector<std::pair<std::string, std::size_t>> new_colours;
  for (const auto& [colour, n] : shaded) {
    if (!base.contains(colour)) new_colours.emplace_back(colour, n);
  }
  ASSERT_EQ(new_colours.size(), 1u);
  EXPECT_NE(new_colours[0].first, kForward);
  EXPECT_EQ(new_colours[0].second, 2u);  // the box and its legend swatch
}

TEST(Timeline, LabelsOnlyWhereTheyFit) {
  // Same makespan, kinds and metrics; only the F box's width differs. "F0.0" is 4 glyphs.
  const Simulated wide =
      run_program({task(TaskKind::F, 0, 0, 1000), task(TaskKind::BW, 0, 0, 1000)});
  const Simulated narrow =
      run_program({task(TaskKind::F, 0, 0, 1), task(TaskKind::BW, 0, 0, 1999)});
  const std::string wide_svg = wide.svg();
  const std::string narrow_svg = narrow.svg();
  EXPECT_EQ(count(wide_svg, "<use "), count(narrow_svg, "<use ") + 4);
  EXPECT_EQ(fills_of(narrow_svg, kForward), 2u);  // a box is drawn even when it is tiny
}

TEST(Timeline, TitleAndSubtitleAreDrawn) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  TimelineOptions options;
  const std::string plain = run.svg(options);
  options.title = "abc";
  const std::string titled = run.svg(options);
  options.subtitle = "de";
  const std::string both = run.svg(options);
  EXPECT_EQ(count(titled, "<use "), count(plain, "<use ") + 3);
  EXPECT_EQ(count(both, "<use "), count(titled, "<use ") + 2);
  EXPECT_GT(height_of(titled), height_of(plain));
  EXPECT_GT(height_of(both), height_of(titled));
}

TEST(Timeline, HeightFollowsDeviceCount) {
  TimelineOptions options;
  options.row_height = 30;
  const double two = height_of(run_schedule("1f1b", 2, 4).svg(options));
  const double four = height_of(run_schedule("1f1b", 4, 4).svg(options));
  EXPECT_EQ(four - two, 2 * 30.0);
}

TEST(Timeline, WriteStoresExactlyTheRenderedBytes) {
  const Simulated run = run_schedule("1f1b", 4, 8);
  const TempDir dir;
  const std::filesystem::path path = dir.path() / "timeline.svg";
  write_timeline_svg(path, run.graph, run.result.trace, run.result.metrics, {});
  EXPECT_EQ(read_bytes(path), run.svg());
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"timeline.svg"});
}

TEST(Timeline, WriteIntoMissingDirectoryThrowsAndLeavesNothing) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  const TempDir dir;
  const std::filesystem::path path = dir.path() / "missing" / "timeline.svg";
  EXPECT_THROW(write_timeline_svg(path, run.graph, run.result.trace, run.result.metrics, {}),
               IoError);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "missing"));
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Timeline, EmptyGraphRendersAnEmptyAxis) {
  const EventGraph graph = EventGraphBuilder(1).freeze();
  const simulator::SimulationResult result = simulator::simulate(graph);
  ASSERT_EQ(result.metrics.makespan, 0);
  const std::string svg = render_timeline_svg(graph, result.trace, result.metrics, {});
  EXPECT_TRUE(svg.starts_with("<?xml"));
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  for (const std::string_view colour : {kForward, kBackward, kWeight, kFused}) {
    EXPECT_EQ(fills_of(svg, colour), 0u) << colour;
  }
}

TEST(Timeline, ZeroMakespanWithTasksDoesNotDivideByZero) {
  const Simulated run = run_program({task(TaskKind::F, 0, 0, 0), task(TaskKind::W, 0, 0, 0)});
  ASSERT_EQ(run.result.metrics.makespan, 0);
  const std::string svg = run.svg();
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_EQ(fills_of(svg, kForward), 2u);
  EXPECT_EQ(fills_of(svg, kWeight), 2u);
}

TEST(Timeline, ExtremeExtentsRender) {
  for (const TimeNs duration : {TimeNs{1}, TimeNs{7}, TimeNs{4'000'000'000'000'000'000}}) {
    const Simulated run = run_program({task(TaskKind::F, 0, 0, duration)});
    const std::string svg = run.svg();
    EXPECT_EQ(fills_of(svg, kForward), 2u) << duration;
    EXPECT_EQ(svg.find("nan"), std::string::npos) << duration;
  }
}

TEST(Timeline, ManyDevicesAndMicrobatches) {
  const Simulated run = run_schedule("1f1b", 16, 64);
  const std::string svg = run.svg();
  EXPECT_EQ(fills_of(svg, kForward), 16u * 64u + 1u);
  EXPECT_EQ(fills_of(svg, kFused), 16u * 64u + 1u);
  EXPECT_EQ(svg, run.svg());
}

TEST(Timeline, RejectsBadOptionsAndMismatchedTraces) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  TimelineOptions options;
  options.width = 0;
  EXPECT_THROW((void)run.svg(options), std::invalid_argument);
  options.width = 800;
  options.row_height = -1;
  EXPECT_THROW((void)run.svg(options), std::invalid_argument);
  Trace truncated = run.result.trace;
  truncated.finish.pop_back();
  EXPECT_THROW((void)render_timeline_svg(run.graph, truncated, run.result.metrics, {}),
               std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// Lanes, labels, legend

TEST(Timeline, StreamLanesSitUnderTheirDevice) {
  const Simulated run = run_with_streams();
  const std::string svg = run.svg();
  // Rows top to bottom: dev 0, send 0>1, dev 1, send 1>0 (lane ids are 0, 1, 3, 2).
  // The legend's swatch first, then the boxes row by row.
  const auto forward = boxes_of(svg, kForward);  // swatch, F0.0 on dev 0, F0.0 on dev 1
  const auto sends = boxes_of(svg, kSend);       // swatch, send 0>1, send 1>0
  ASSERT_EQ(forward.size(), 3u);
  ASSERT_EQ(sends.size(), 3u);
  const double dev0 = forward[1].y0;
  const double dev1 = forward[2].y0;
  EXPECT_LT(dev0, sends[1].y0);
  EXPECT_LT(sends[1].y0, dev1);
  EXPECT_GT(sends[2].y0, dev1);
  // A stream's row is shorter than a compute row.
  EXPECT_LT(sends[1].y1 - sends[1].y0, forward[1].y1 - forward[1].y0);
  // Each send starts where its producer ends and its consumer starts after it.
  EXPECT_DOUBLE_EQ(sends[1].x0, forward[1].x1);
  EXPECT_DOUBLE_EQ(forward[2].x0, sends[1].x1);
}

TEST(Timeline, NewKindsAppearInTheLegendOnlyWhenPresent) {
  const std::string with_sends = run_with_streams().svg();
  EXPECT_EQ(fills_of(with_sends, kSend), 2u + 1u);  // two transfers and the legend swatch
  const std::string without = run_schedule("1f1b", 2, 2).svg();
  EXPECT_EQ(fills_of(without, kSend), 0u);
}

TEST(Timeline, DeviceLabelsFollowTheDeviceNames) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  TimelineOptions options;
  const std::string plain = run.svg(options);
  options.device_labels = {"H100", "A100"};
  const std::string labelled = run.svg(options);
  EXPECT_EQ(count(labelled, "<use "), count(plain, "<use ") + 8);  // "H100", "A100"
  // The label column widens: the plot (and its first box) moves right.
  EXPECT_GT(boxes_of(labelled, kForward)[0].x0, boxes_of(plain, kForward)[0].x0);
  // Fewer labels than devices, or empty ones, are fine.
  options.device_labels = {"", "A100"};
  EXPECT_EQ(count(run.svg(options), "<use "), count(plain, "<use ") + 4);
}

TEST(Timeline, AllToAllHasItsOwnColourAndLegendEntry) {
  constexpr std::string_view kAllToAll = "rgb(53.333333%,13.333333%,33.333333%)";  // #882255
  const Simulated run =
      run_program({task(TaskKind::A2A, 0, 0, 1000), task(TaskKind::F, 0, 0, 1000)});
  const std::string svg = run.svg();
  EXPECT_EQ(fills_of(svg, kAllToAll), 1u + 1u);  // the box and its legend swatch
  EXPECT_EQ(fills_of(run_program({task(TaskKind::F, 0, 0, 2000)}).svg(), kAllToAll), 0u);
}

// ---------------------------------------------------------------------------------------
// Overlapped forward-backward pairs

/// The glyphs (`<use>` elements: their glyph ids and fills) whose origin is inside `box`,
/// left to right: a box's label.
struct Glyphs {
  std::vector<std::string> ids;
  std::vector<std::string> fills;
};
Glyphs glyphs_in(const std::string& svg, const Box& box) {
  Glyphs glyphs;
  std::vector<std::tuple<double, std::string, std::string>> found;  // x, id, fill
  std::istringstream lines(svg);
  std::string fill;  // the fill of the enclosing <g>
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("<g style=\"fill:")) fill = line.substr(15, line.find(';') - 15);
    const std::size_t use = line.find("<use xlink:href=\"#");
    if (use == std::string::npos) continue;
    const std::size_t id = use + 18;
    const std::size_t x = line.find(" x=\"", id);
    const std::size_t y = line.find(" y=\"", id);
    const double gx = std::stod(line.substr(x + 4));
    const double gy = std::stod(line.substr(y + 4));
    if (gx < box.x0 || gx > box.x1 || gy < box.y0 || gy > box.y1) continue;
    found.emplace_back(gx, line.substr(id, line.find('"', id) - id), fill);
  }
  std::sort(found.begin(), found.end());
  for (const auto& [x, id, ink] : found) {
    glyphs.ids.push_back(id);
    glyphs.fills.push_back(ink);
  }
  return glyphs;
}

TEST(Timeline, OverlappedPairIsOneBoxInTwoColours) {
  const Simulated run = run_with_pair();
  ASSERT_EQ(run.result.trace.start_of(TaskId{1}), 4000);  // F1.0: after device 1's BW0.0
  ASSERT_EQ(run.result.trace.finish_of(TaskId{1}), 6500);
  ASSERT_EQ(run.result.trace.start_of(TaskId{2}), 6500);  // BW0.0: no time of its own
  ASSERT_EQ(run.result.trace.finish_of(TaskId{2}), 6500);
  const std::string svg = run.svg();

  // F: legend swatch, the pair legend's top, F0.0 on dev 0, the pair's top, F0.0 on dev 1.
  // BW: legend swatch, the pair legend's bottom, the pair's bottom, BW0.0 on dev 1; no box
  // for the paired BW0.0 on its own.
  const auto forward = boxes_of(svg, kForward);
  const auto fused = boxes_of(svg, kFused);
  ASSERT_EQ(forward.size(), 5u);
  ASSERT_EQ(fused.size(), 4u);
  const Box& f00 = forward[2];
  const Box& top = forward[3];
  const Box& bottom = fused[2];
  // The pair spans F1.0's 4000-6500 ns on a scale where F0.0 spans 0-1000 ns.
  const double per_us = f00.x1 - f00.x0;
  EXPECT_NEAR(top.x0, f00.x0 + 4 * per_us, 0.01);  // cairo rounds to 1/256 pt
  EXPECT_NEAR(top.x1, f00.x0 + 6.5 * per_us, 0.01);
  EXPECT_EQ(bottom.x0, top.x0);
  EXPECT_EQ(bottom.x1, top.x1);
  // Halves of a compute row's 22 pt box: the F on top, the backward below.
  EXPECT_EQ(top.y0, f00.y0);
  EXPECT_EQ(top.y1 - top.y0, 11.0);
  EXPECT_EQ(bottom.y0, top.y1);
  EXPECT_EQ(bottom.y1, f00.y1);
  // Legend swatches: F, BW, then the pair's, F over BW.
  EXPECT_EQ(forward[1].x0, fused[1].x0);
  EXPECT_EQ(forward[1].y1, fused[1].y0);

  // The label is "F1.0+BW0.0": its "BW0.0" is dev 1's BW0.0 label glyph for glyph, and
  // its "F", "." and "0" are F0.0's. Dark ink: the better of white and dark on both halves.
  const Glyphs pair = glyphs_in(svg, {top.x0, top.y0, top.x1, bottom.y1});
  const Glyphs f = glyphs_in(svg, f00);
  const Glyphs bw = glyphs_in(svg, fused[3]);
  ASSERT_EQ(pair.ids.size(), 10u);
  ASSERT_EQ(f.ids.size(), 4u);
  ASSERT_EQ(bw.ids.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(pair.ids.begin() + 5, pair.ids.end()), bw.ids);
  EXPECT_EQ(pair.ids[0], f.ids[0]);
  EXPECT_EQ(pair.ids[2], f.ids[2]);
  EXPECT_EQ(pair.ids[3], f.ids[3]);
  EXPECT_NE(pair.ids[1], f.ids[1]);     // "1", not "0"
  EXPECT_NE(pair.ids[4], pair.ids[2]);  // "+"
  for (const std::string& fill : pair.fills)
    EXPECT_EQ(fill, "rgb(10.196078%,10.196078%,10.196078%)");
  for (const std::string& fill : f.fills) EXPECT_EQ(fill, "rgb(100%,100%,100%)");

  // Unpaired, the same tasks draw the zero-length BW0.0 as its own sliver, after an F box
  // labelled "F1.0" only.
  const std::string unpaired = run_with_pair(false).svg();
  const auto alone = boxes_of(unpaired, kFused);
  ASSERT_EQ(alone.size(), 3u);  // swatch, BW0.0 on dev 0 (a sliver), BW0.0 on dev 1
  EXPECT_NEAR(alone[1].x0, top.x1, 0.01);
  EXPECT_NEAR(alone[1].x1 - alone[1].x0, 0.35, 0.01);
  EXPECT_EQ(glyphs_in(unpaired, boxes_of(unpaired, kForward)[2]).ids.size(), 4u);

  // The PNG draws the same halves.
  TimelineOptions options;
  options.png_scale = 2;
  const Pixels png = decode_png(run.render(ImageFormat::Png, options));
  EXPECT_EQ(png.at((top.x0 + 1.5) * 2, (top.y0 + 1.5) * 2), 0x0072B2u);
  EXPECT_EQ(png.at((bottom.x0 + 1.5) * 2, (bottom.y1 - 1.5) * 2), 0xCC79A7u);
}

TEST(Timeline, PairLabelFallsBackToItsForward) {
  // Narrow enough that "F1.0+BW0.0" does not fit but "F1.0" does: the pair shows what the
  // same F shows unpaired.
  TimelineOptions options;
  options.width = 200;
  const std::string svg = run_with_pair().svg(options);
  const auto forward = boxes_of(svg, kForward);
  ASSERT_EQ(forward.size(), 5u);
  const Box& top = forward[3];
  const Box bottom = boxes_of(svg, kFused)[2];
  const Glyphs pair = glyphs_in(svg, {top.x0, top.y0, top.x1, bottom.y1});
  const std::string unpaired = run_with_pair(false).svg(options);
  const Glyphs alone = glyphs_in(unpaired, boxes_of(unpaired, kForward)[2]);
  EXPECT_EQ(pair.ids.size(), 4u) << top.x1 - top.x0;
  EXPECT_EQ(alone.ids.size(), 4u);
  EXPECT_NE(pair.ids[2], pair.ids[3]);  // ".", "0"
}

// ---------------------------------------------------------------------------------------
// Critical path and arrows

TEST(Timeline, CriticalPathIsOutlinedOnRequest) {
  const Simulated run = run_schedule("1f1b", 4, 4);
  TimelineOptions options;
  EXPECT_EQ(count(run.svg(options), kHighlight), 0u);
  options.critical_path = true;
  const std::string svg = run.svg(options);
  // The legend's swatch, one stroked path of outlines (a rectangle per task on the path),
  // one of lane changes.
  const auto strokes = lines_with(svg, fmt::format("stroke:{}", kHighlight));
  ASSERT_EQ(strokes.size(), 3u);
  EXPECT_EQ(count(strokes[1], " Z "), run.result.metrics.critical_path.size());
}

TEST(Timeline, DependenceArrowsBetweenDevices) {
  const Simulated run = run_schedule("1f1b", 4, 4);
  std::size_t cross = 0;
  for (std::uint32_t u = 0; u < run.graph.task_count(); ++u) {
    for (const Adjacent& s : run.graph.successors(TaskId{u})) {
      cross +=
          s.kind() == EdgeKind::Data && run.graph.device(s.task()) != run.graph.device(TaskId{u});
    }
  }
  ASSERT_EQ(cross, 2u * 3u * 4u);  // F and B across each of 3 boundaries, 4 microbatches
  TimelineOptions options;
  options.dependency_arrows = true;
  const std::string svg = run.svg(options);
  // The legend's sample, then one stroked path of shafts (a move per arrow).
  const auto strokes = lines_with(svg, "stroke-opacity:0.55");
  ASSERT_EQ(strokes.size(), 2u);
  EXPECT_EQ(count(strokes[1], "M "), cross);
  // And one filled path of heads (three vertices each), after the legend's.
  const auto heads = lines_with(svg, "fill-opacity:0.55");
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_EQ(vertices_of(heads[1]).size(), 3 * cross + 1);  // and a move after the last
  // Too many to draw: nothing drawn, and the legend says so (more glyphs, no arrows).
  options.max_arrows = cross - 1;
  const std::string capped = run.svg(options);
  EXPECT_EQ(capped.find("stroke-opacity:0.55"), std::string::npos);
  EXPECT_GT(count(capped, "<use "), count(run.svg(), "<use "));
}

TEST(Timeline, ArrowsLeaveStreamsForTheirConsumers) {
  const Simulated run = run_with_streams();
  TimelineOptions options;
  options.dependency_arrows = true;
  const auto strokes = lines_with(run.svg(options), "stroke-opacity:0.55");
  ASSERT_EQ(strokes.size(), 2u);
  // send 0>1 -> F on dev 1, send 1>0 -> BW on dev 0: the only cross-device dependences.
  EXPECT_EQ(count(strokes[1], "M "), 2u);
}

// ---------------------------------------------------------------------------------------
// Memory chart

TEST(Timeline, MemoryChartAddsAStripPerDevice) {
  const Simulated run = run_schedule("1f1b", 4, 8);
  TimelineOptions options;
  const std::string plain = run.svg(options);
  options.memory_chart = true;
  const std::string chart = run.svg(options);
  EXPECT_GT(height_of(chart), height_of(plain) + 4 * 36.0);
  // One activation area per device, plus the heading's swatch.
  EXPECT_EQ(fills_of(chart, kActivations), 4u + 1u);
  EXPECT_EQ(count(chart, kHighlight), 0u);  // no capacity known: no capacity line

  options.memory_capacity = {8, 8, 0, 8};
  options.static_memory = {1, 1, 1, 1};
  const std::string capped = run.svg(options);
  // Three capacity lines plus the heading's sample; the device without one has none.
  EXPECT_EQ(count(capped, fmt::format("stroke:{}", kHighlight)), 3u + 1u);
  EXPECT_EQ(height_of(capped), height_of(chart));
}

TEST(Timeline, MemoryChartStepsFollowTheActivations) {
  // F allocates 2 for 1000 ns, W frees it: one step up and one down.
  const Simulated run =
      run_program({task(TaskKind::F, 0, 0, 1000, 2.0), task(TaskKind::W, 0, 0, 1000, -2.0)});
  TimelineOptions options;
  options.memory_chart = true;
  const std::string svg = run.svg(options);
  const auto fills = lines_with(svg, fmt::format("fill:{};", kActivations));
  ASSERT_EQ(fills.size(), 2u);  // the heading's sample, then the device's area
  // Up to 2 at 0, held while both tasks run, down at the end (2000 ns, the right edge): a
  // rectangle the width of the plot, from the strip's floor to the value's height.
  const auto area = vertices_of(fills[1]);
  double left = 1e9, right = -1e9;
  std::vector<double> heights;
  for (const auto& [x, y] : area) {
    left = std::min(left, x);
    right = std::max(right, x);
    if (std::find(heights.begin(), heights.end(), y) == heights.end()) heights.push_back(y);
  }
  EXPECT_EQ(heights.size(), 2u) << fills[1];
  const auto forward = boxes_of(svg, kForward);  // the legend's swatch, then the box
  ASSERT_EQ(forward.size(), 2u);
  EXPECT_DOUBLE_EQ(left, forward[1].x0);
  EXPECT_GT(right, forward[1].x1);
}

// ---------------------------------------------------------------------------------------
// Formats

TEST(Timeline, PngHasTheBoxesInTheirColours) {
  const Simulated run = run_schedule("1f1b", 2, 3, true);
  TimelineOptions options;
  options.png_scale = 2;
  const std::string svg = run.svg(options);
  const Pixels png = decode_png(run.render(ImageFormat::Png, options));
  ASSERT_GT(png.width, 0);
  EXPECT_EQ(png.width, static_cast<int>(options.width * 2));
  EXPECT_EQ(png.height, static_cast<int>(height_of(svg) * 2));
  // Sample each box from the SVG just inside its top-left corner (clear of its label).
  const std::vector<std::pair<std::string_view, std::uint32_t>> kinds = {
      {kForward, 0x0072B2}, {kBackward, 0xE69F00}, {kWeight, 0x009E73}};
  std::size_t sampled = 0;
  for (const auto& [colour, hex] : kinds) {
    for (const Box& box : boxes_of(svg, colour)) {
      EXPECT_EQ(png.at((box.x0 + 1.5) * 2, (box.y0 + 1.5) * 2), hex) << colour;
      ++sampled;
    }
  }
  EXPECT_EQ(sampled, 3u * (2u * 3u + 1u));
  // Mostly white, and idle time stays the row's grey, never a kind's colour.
  std::size_t white = 0;
  for (const std::uint32_t p : png.rgb) white += p == 0xFFFFFF;
  EXPECT_GT(white, png.rgb.size() / 3);
}

TEST(Timeline, PngScaleShrinksHugePages) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  TimelineOptions options;
  options.width = 40000;  // 2x would be 80000 pixels: over cairo's limit
  const Pixels png = decode_png(run.render(ImageFormat::Png, options));
  EXPECT_LE(png.width, 32767);
  EXPECT_GT(png.width, 20000);
}

TEST(Timeline, PdfIsAPdfAndDeterministic) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  const std::string pdf = run.render(ImageFormat::Pdf);
  EXPECT_TRUE(pdf.starts_with("%PDF-"));
  EXPECT_NE(pdf.find("%%EOF"), std::string::npos);
  EXPECT_EQ(pdf.find("CreationDate"), std::string::npos);
  EXPECT_EQ(pdf, run.render(ImageFormat::Pdf));
  EXPECT_EQ(run.render(ImageFormat::Png), run.render(ImageFormat::Png));
}

TEST(Timeline, WriteChoosesTheFormatByExtension) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  const TempDir dir;
  const auto write = [&](const std::string& name) {
    write_timeline(dir.path() / name, run.graph, run.result.trace, run.result.metrics, {});
    return read_bytes(dir.path() / name);
  };
  EXPECT_EQ(write("a.svg"), run.svg());
  EXPECT_TRUE(write("b.png").starts_with("\x89PNG"));
  EXPECT_TRUE(write("c.pdf").starts_with("%PDF-"));
  EXPECT_TRUE(write("d.SVG").starts_with("<?xml"));
}

TEST(Timeline, UnknownExtensionIsAnErrorNamingPathAndFormats) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  const TempDir dir;
  for (const std::string name : {"timeline.jpg", "timeline", "timeline.svg.tmp"}) {
    try {
      write_timeline(dir.path() / name, run.graph, run.result.trace, run.result.metrics, {});
      ADD_FAILURE() << name;
    } catch (const UnknownNameError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find((dir.path() / name).string()), std::string::npos) << message;
      EXPECT_NE(message.find(".svg, .png, .pdf"), std::string::npos) << message;
    }
  }
  EXPECT_TRUE(dir.entries().empty());
  EXPECT_EQ(image_format_of("x.Png"), ImageFormat::Png);
  EXPECT_EQ(image_formats().size(), 3u);
}

TEST(Timeline, UnwritablePathThrowsForEveryFormat) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  const TempDir dir;
  for (const std::string name : {"t.svg", "t.png", "t.pdf"}) {
    EXPECT_THROW(write_timeline(dir.path() / "missing" / name, run.graph, run.result.trace,
                                run.result.metrics, {}),
                 IoError);
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Timeline, RejectsBadPngScale) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  TimelineOptions options;
  options.png_scale = 0;
  EXPECT_THROW((void)run.render(ImageFormat::Png, options), std::invalid_argument);
}

}  // namespace
}  // namespace perflow::visualizer
