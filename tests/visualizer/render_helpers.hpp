#pragma once

// Helpers shared by the visualizer tests: simulated schedules and hand-built graphs, and
// readers for what the renderers write (cairo's SVG paths, PNG pixels).

#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <cairo.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/visualizer/timeline.hpp"

namespace perflow::visualizer::test_support {

// The palette as cairo writes it: `fill:rgb(R%,G%,B%)` with up to 6 decimals.
inline constexpr std::string_view kForward = "rgb(0%,44.705882%,69.803922%)";      // #0072B2
inline constexpr std::string_view kBackward = "rgb(90.196078%,62.352941%,0%)";     // #E69F00
inline constexpr std::string_view kWeight = "rgb(0%,61.960784%,45.098039%)";       // #009E73
inline constexpr std::string_view kFused = "rgb(80%,47.45098%,65.490196%)";        // #CC79A7
inline constexpr std::string_view kSend = "rgb(33.72549%,70.588235%,91.372549%)";  // #56B4E9
inline constexpr std::string_view kHighlight = "rgb(75.294118%,0%,0%)";            // #C00000
inline constexpr std::string_view kActivations = "rgb(36.862745%,37.647059%,65.882353%)";

struct Simulated {
  EventGraph graph;
  simulator::SimulationResult result;

  [[nodiscard]] std::string svg(const TimelineOptions& options = {}) const {
    return render_timeline_svg(graph, result.trace, result.metrics, options);
  }
  [[nodiscard]] std::string render(ImageFormat format, const TimelineOptions& options = {}) const {
    return render_timeline(graph, result.trace, result.metrics, options, format);
  }
};

/// Two devices; device 0 runs F0.0, then F1.0 overlapped with BW0.0 (DualPipe's F&B: F1.0
/// holds the pair's 2500 ns, BW0.0 is paired and takes none); device 1 runs F0.0 and BW0.0.
/// As overlap_pairs builds it, the pair waits for the backward's gradient too.
inline Simulated run_with_pair(bool paired = true) {
  EventGraphBuilder builder(2);
  const auto add = [&](TaskKind kind, std::uint32_t device, std::uint32_t microbatch,
                       TimeNs duration, bool second = false) {
    TaskSpec spec{kind, DeviceId{device}, StageId{device}, microbatch, 0, duration};
    spec.paired = second;
    const TaskId id = builder.add_task(spec);
    builder.append_to_program(id);
    return id;
  };
  const TaskId f0 = add(TaskKind::F, 0, 0, 1000);
  const TaskId f1 = add(TaskKind::F, 0, 1, 2500);
  const TaskId b0 = add(TaskKind::BW, 0, 0, 0, paired);
  const TaskId g0 = add(TaskKind::F, 1, 0, 1000);
  const TaskId c0 = add(TaskKind::BW, 1, 0, 2000);
  builder.add_dependence(f0, g0);
  builder.add_dependence(g0, c0);
  builder.add_dependence(c0, b0);
  builder.add_dependence(c0, f1);
  builder.add_dependence(f0, b0);
  Simulated run{std::move(builder).freeze(), {}};
  run.result = simulator::simulate(run.graph);
  return run;
}

inline Simulated run_schedule(std::string schedule, std::uint32_t stages,
                              std::uint32_t microbatches, bool split_backward = false,
                              std::uint32_t chunks = 1) {
  parallel::PipelineSpec spec;
  spec.schedule = std::move(schedule);
  spec.stages = stages;
  spec.microbatches = microbatches;
  spec.chunks = chunks;
  spec.split_backward = split_backward;
  const parallel::CostTable costs(parallel::TaskCosts{1000, 1500, 500, 1.0, 0.5});
  Simulated run{parallel::build_schedule(spec, costs), {}};
  run.result = simulator::simulate(run.graph);
  return run;
}

inline TaskSpec task(TaskKind kind, std::uint32_t microbatch, std::uint32_t chunk, TimeNs duration,
                     double memory = 0.0) {
  return TaskSpec{kind, DeviceId{0}, StageId{0}, microbatch, chunk, duration, memory};
}

/// One device running `tasks` back to back, in the given order.
inline Simulated run_program(const std::vector<TaskSpec>& tasks) {
  EventGraphBuilder builder(1);
  for (const TaskSpec& spec : tasks) builder.append_to_program(builder.add_task(spec));
  Simulated run{std::move(builder).freeze(), {}};
  run.result = simulator::simulate(run.graph);
  return run;
}

/// Two devices with lowered communication, as a runtime runs it: F on device 0, a SEND on
/// its lane "send 0>1", then F on device 1; and back: B on device 1, a SEND on "send 1>0",
/// B on device 0. The lanes are created in the order 1>0, 0>1 (not device order).
inline Simulated run_with_streams() {
  EventGraphBuilder builder(2);
  const LaneId back = builder.add_lane(DeviceId{1}, "send 1>0");
  const LaneId forth = builder.add_lane(DeviceId{0}, "send 0>1");
  const auto add = [&](TaskKind kind, std::uint32_t device, TimeNs duration, LaneId lane,
                       double memory) {
    TaskSpec spec{kind, DeviceId{device}, StageId{device}, 0, 0, duration, memory, lane};
    const TaskId id = builder.add_task(spec);
    builder.append_to_program(id);
    return id;
  };
  const TaskId f0 = add(TaskKind::F, 0, 1000, {}, 1.0);
  const TaskId s01 = add(TaskKind::Send, 0, 300, forth, 0.0);
  const TaskId f1 = add(TaskKind::F, 1, 1000, {}, 1.0);
  const TaskId b1 = add(TaskKind::BW, 1, 2000, {}, -1.0);
  const TaskId s10 = add(TaskKind::Send, 1, 300, back, 0.0);
  const TaskId b0 = add(TaskKind::BW, 0, 2000, {}, -1.0);
  builder.add_dependence(f0, s01);
  builder.add_dependence(s01, f1);
  builder.add_dependence(f1, b1);
  builder.add_dependence(b1, s10);
  builder.add_dependence(s10, b0);
  builder.add_dependence(f0, b0);
  Simulated run{std::move(builder).freeze(), {}};
  run.result = simulator::simulate(run.graph);
  return run;
}

inline std::size_t count(std::string_view haystack, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t pos = haystack.find(needle); pos != std::string_view::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

/// Filled shapes per fill colour: cairo writes every fill as one `<path ...fill:rgb(..);`
/// line (text is drawn as `<use>` glyphs inside a `<g>`, so it is not counted).
inline std::map<std::string, std::size_t> fills_by_colour(const std::string& svg) {
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

inline std::size_t fills_of(const std::string& svg, std::string_view colour) {
  const auto fills = fills_by_colour(svg);
  const auto it = fills.find(std::string(colour));
  return it == fills.end() ? 0 : it->second;
}

/// Every `<path` element (fills and strokes) the SVG draws.
inline std::size_t paths_of(const std::string& svg) { return count(svg, "<path "); }

/// A filled rectangle as cairo writes it: `d="M x0 y0 L x1 y0 L x1 y1 L x0 y1 Z ..."`.
struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

/// The rectangles filled with `colour`, in drawing order.
inline std::vector<Box> boxes_of(const std::string& svg, std::string_view colour) {
  std::vector<Box> boxes;
  std::istringstream lines(svg);
  const std::string fill = fmt::format("fill:{};", colour);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("<path") || line.find(fill) == std::string::npos) continue;
    const std::size_t d = line.find(" d=\"M ");
    if (d == std::string::npos) continue;
    std::istringstream numbers(line.substr(d + 6));
    Box box;
    std::string l;
    double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
    numbers >> box.x0 >> box.y0 >> l >> x1 >> y1 >> l >> x2 >> y2;
    box.x1 = x2;
    box.y1 = y2;
    boxes.push_back(box);
  }
  return boxes;
}

/// The lines of the SVG that contain `needle` (cairo writes one element per line).
inline std::vector<std::string> lines_with(const std::string& svg, std::string_view needle) {
  std::vector<std::string> found;
  std::istringstream lines(svg);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(needle) != std::string::npos) found.push_back(line);
  }
  return found;
}

/// The vertices of the first path in `line` (its `d` attribute's numbers, paired).
inline std::vector<std::pair<double, double>> vertices_of(const std::string& line) {
  std::vector<std::pair<double, double>> points;
  const std::size_t d = line.find(" d=\"");
  if (d == std::string::npos) return points;
  std::istringstream tokens(line.substr(d + 4, line.find('"', d + 4) - d - 4));
  std::vector<double> numbers;
  for (std::string token; tokens >> token;) {
    if (token == "M" || token == "L" || token == "Z" || token == "C") continue;
    numbers.push_back(std::stod(token));
  }
  for (std::size_t i = 0; i + 1 < numbers.size(); i += 2) {
    points.emplace_back(numbers[i], numbers[i + 1]);
  }
  return points;
}

/// The document's height attribute, in points.
inline double height_of(const std::string& svg) {
  const std::size_t at = svg.find("height=\"");
  EXPECT_NE(at, std::string::npos);
  return std::stod(svg.substr(at + 8));
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A decoded PNG: 0xRRGGBB per pixel, row by row.
struct Pixels {
  int width = 0;
  int height = 0;
  std::vector<std::uint32_t> rgb;

  [[nodiscard]] std::uint32_t at(double x, double y) const {
    return rgb[static_cast<std::size_t>(static_cast<int>(y) * width + static_cast<int>(x))];
  }
};

inline Pixels decode_png(const std::string& png) {
  struct Reader {
    const std::string* bytes;
    std::size_t pos = 0;
  } reader{&png};
  cairo_surface_t* surface = cairo_image_surface_create_from_png_stream(
      [](void* closure, unsigned char* data, unsigned int length) {
        auto* r = static_cast<Reader*>(closure);
        if (r->pos + length > r->bytes->size()) return CAIRO_STATUS_READ_ERROR;
        std::copy_n(r->bytes->data() + r->pos, length, data);
        r->pos += length;
        return CAIRO_STATUS_SUCCESS;
      },
      &reader);
  Pixels pixels;
  if (cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS) {
    cairo_surface_flush(surface);
    pixels.width = cairo_image_surface_get_width(surface);
    pixels.height = cairo_image_surface_get_height(surface);
    const int stride = cairo_image_surface_get_stride(surface);
    const unsigned char* data = cairo_image_surface_get_data(surface);
    for (int y = 0; y < pixels.height; ++y) {
      const auto* row = reinterpret_cast<const std::uint32_t*>(data + y * stride);
      for (int x = 0; x < pixels.width; ++x) pixels.rgb.push_back(row[x] & 0xFFFFFFu);
    }
  }
  cairo_surface_destroy(surface);
  return pixels;
}

/// A fresh, empty directory for one test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("perflow_{}_{}_{}", info->test_suite_name(), info->name(),
                        static_cast<long>(::getpid()));
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

}  // namespace perflow::visualizer::test_support
