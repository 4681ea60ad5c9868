#include "perflow/visualizer/timeline.hpp"

#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::visualizer {
namespace {

// The palette as cairo writes it: `fill:rgb(R%,G%,B%)` with up to 6 decimals.
constexpr std::string_view kForward = "rgb(0%,44.705882%,69.803922%)";   // #0072B2
constexpr std::string_view kBackward = "rgb(90.196078%,62.352941%,0%)";  // #E69F00
constexpr std::string_view kWeight = "rgb(0%,61.960784%,45.098039%)";    // #009E73
constexpr std::string_view kFused = "rgb(80%,47.45098%,65.490196%)";     // #CC79A7

struct Simulated {
  EventGraph graph;
  simulator::SimulationResult result;

  [[nodiscard]] std::string svg(const TimelineOptions& options = {}) const {
    return render_timeline_svg(graph, result.trace, result.metrics, options);
  }
};

Simulated run_schedule(std::string schedule, std::uint32_t stages, std::uint32_t microbatches,
                       bool split_backward = false) {
  parallel::PipelineSpec spec;
  spec.schedule = std::move(schedule);
  spec.stages = stages;
  spec.microbatches = microbatches;
  spec.split_backward = split_backward;
  const parallel::CostTable costs(parallel::TaskCosts{1000, 1500, 500, 1.0, 0.5});
  Simulated run{parallel::build_schedule(spec, costs), {}};
  run.result = simulator::simulate(run.graph);
  return run;
}

/// One device running `tasks` back to back, in the given order.
Simulated run_program(const std::vector<TaskSpec>& tasks) {
  EventGraphBuilder builder(1);
  for (const TaskSpec& spec : tasks) builder.append_to_program(builder.add_task(spec));
  Simulated run{std::move(builder).freeze(), {}};
  run.result = simulator::simulate(run.graph);
  return run;
}

TaskSpec task(TaskKind kind, std::uint32_t microbatch, std::uint32_t chunk, TimeNs duration) {
  return TaskSpec{kind, DeviceId{0}, StageId{0}, microbatch, chunk, duration, 0.0};
}

std::size_t count(std::string_view haystack, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t pos = haystack.find(needle); pos != std::string_view::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

/// Filled shapes per fill colour: cairo writes every fill as one `<path ...fill:rgb(..);`
/// line (text is drawn as `<use>` glyphs inside a `<g>`, so it is not counted).
std::map<std::string, std::size_t> fills_by_colour(const std::string& svg) {
  std::map<std::string, std::size_t> fills;
  std::istringstream lines(svg);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("<path")) continue;
    const std::size_t at = line.find("fill:rgb(");
    if (at == std::string::npos) continue;
    const std::size_t begin = at + 5;
    ++fills[line.substr(begin, line.find(')', begin) + 1 - begin)];
  }
  return fills;
}

std::size_t fills_of(const std::string& svg, std::string_view colour) {
  const auto fills = fills_by_colour(svg);
  const auto it = fills.find(std::string(colour));
  return it == fills.end() ? 0 : it->second;
}

/// The document's height attribute, in points.
double height_of(const std::string& svg) {
  const std::size_t at = svg.find("height=\"");
  EXPECT_NE(at, std::string::npos);
  return std::stod(svg.substr(at + 8));
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A fresh, empty directory for one test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("perflow_timeline_{}_{}", info->name(), static_cast<long>(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

 private:
  std::filesystem::path path_;
};

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

}  // namespace
}  // namespace perflow::visualizer
