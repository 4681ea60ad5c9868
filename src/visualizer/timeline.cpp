#include "perflow/visualizer/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "detail/cairo_document.hpp"
#include "detail/draw.hpp"
#include "detail/legend.hpp"
#include "detail/memory_chart.hpp"
#include "detail/pairs.hpp"
#include "detail/palette.hpp"
#include "detail/time_axis.hpp"
#include "detail/timeline_panel.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/core/units.hpp"

namespace perflow::visualizer {
namespace {

using namespace detail;

constexpr double kRightPadding = 12;  // past the plot: the last tick label overhangs it

std::string caption_text(const EventGraph& graph, const simulator::Metrics& metrics) {
  double peak = 0;
  for (std::size_t i = 0; i < metrics.devices.size(); ++i) {
    peak = i == 0 ? metrics.devices[i].peak_memory : std::max(peak, metrics.devices[i].peak_memory);
  }
  const std::size_t tasks = graph.task_count();
  const std::string iterations =
      metrics.iteration_finish.size() > 1
          ? fmt::format("   \u00b7   iteration time {} ({} iterations)",
                        format_duration(metrics.iteration_time), metrics.iteration_finish.size())
          : std::string();
  return fmt::format(
      "makespan {}{}   \u00b7   bubble ratio {:.2f}%   \u00b7   peak memory {}   "
      "\u00b7   {} task{}",
      format_duration(metrics.makespan), iterations, metrics.bubble_ratio * 100.0,
      format_memory(peak), tasks, tasks == 1 ? "" : "s");
}

void check_options(const TimelineOptions& options) {
  if (!std::isfinite(options.width) || options.width <= 0 || options.width > 1e6) {
    throw std::invalid_argument(
        fmt::format("timeline width must be in (0, 1e6] points, got {}", options.width));
  }
  if (!std::isfinite(options.row_height) || options.row_height <= 0 || options.row_height > 1e4) {
    throw std::invalid_argument(
        fmt::format("timeline row height must be in (0, 1e4] points, got {}", options.row_height));
  }
  if (!std::isfinite(options.png_scale) || options.png_scale <= 0 || options.png_scale > 16) {
    throw std::invalid_argument(
        fmt::format("timeline PNG scale must be in (0, 16], got {}", options.png_scale));
  }
}

/// Where everything goes on the page, measured before the page exists.
struct Page {
  double width = 0;
  double height = 0;
  double title_baseline = 0;
  double subtitle_baseline = 0;
  double legend_top = 0;
  double rows_top = 0;
  double axis_y = 0;
  double memory_top = 0;
  double memory_axis_y = 0;
  double caption_baseline = 0;
  TimeScale scale;
};

/// The legend: kinds present, then what the options add to the picture.
Legend make_legend(const EventGraph& graph, const TimelinePanel& panel,
                   const TimelineOptions& options) {
  KindsPresent present;
  present.add(graph);
  Legend legend(present);
  if (graph.has_pairs()) legend.add(Swatch::Pair, kPairLegend, pair_backward_kind(graph));
  if (options.critical_path) legend.add(Swatch::CriticalPath, "critical path");
  if (options.dependency_arrows) {
    const std::size_t n = panel.cross_device_dependences();
    if (panel.draws_arrows()) {
      legend.add(Swatch::Arrow, "dependence between devices");
    } else if (n > 0) {
      legend.add(Swatch::None, fmt::format("{} dependences between devices: too many to draw "
                                           "(limit {})",
                                           n, options.max_arrows));
    }
  }
  if (panel.aggregates()) {
    legend.add(Swatch::Aggregate,
               "boxes under a point wide: per kind, a band as tall as its share of the time");
  }
  return legend;
}

Page make_page(cairo_t* measure, const Trace& trace, const simulator::Metrics& metrics,
               const TimelineOptions& options, const TimelinePanel& panel, Legend& legend,
               const std::optional<MemoryChart>& memory) {
  Page page;
  page.width = options.width;
  double y = kMargin;
  if (!options.title.empty()) {
    page.title_baseline = y + kTitleSize * 0.8;
    y += kTitleSize + 6;
  }
  if (!options.subtitle.empty()) {
    page.subtitle_baseline = y + kSubtitleSize * 0.8;
    y += kSubtitleSize + 6;
  }
  if (!options.title.empty() || !options.subtitle.empty()) y += 6;

  double labels = panel.label_width(measure);
  if (memory) labels = std::max(labels, memory->label_width(measure));
  const double plot_x = kMargin + labels + 10;
  const double plot_width = std::max(1.0, options.width - plot_x - kMargin - kRightPadding);

  legend.layout(measure, plot_width);
  page.legend_top = y;
  y += legend.height();

  page.rows_top = y;
  y += panel.height();

  TimeNs extent = std::max<TimeNs>(metrics.makespan, 0);
  for (const TimeNs f : trace.finish) extent = std::max(extent, f);
  page.scale = make_time_scale(measure, plot_x, plot_width, extent);

  page.axis_y = y + 4;
  y = page.axis_y + kAxisTickSpace;
  if (memory) {
    page.memory_top = y + 14;
    page.memory_axis_y = page.memory_top + memory->height() + 4;
    y = page.memory_axis_y + kAxisTickSpace;
  }
  y += kAxisCaptionSpace;
  page.caption_baseline = y + kTextSize + 12;
  page.height = std::ceil(page.caption_baseline + 4 + kMargin);
  return page;
}

void draw_header(cairo_t* cr, const Page& page, const TimelineOptions& options) {
  if (!options.title.empty()) {
    set_font(cr, kTitleSize, true);
    set_colour(cr, kInk);
    show_text(cr, kMargin, page.title_baseline, options.title);
  }
  if (!options.subtitle.empty()) {
    set_font(cr, kSubtitleSize);
    set_colour(cr, kMutedInk);
    show_text(cr, kMargin, page.subtitle_baseline, options.subtitle);
  }
}

}  // namespace

std::string render_timeline(const EventGraph& graph, const Trace& trace,
                            const simulator::Metrics& metrics, const TimelineOptions& options,
                            ImageFormat format) {
  check_options(options);
  check_trace(graph, trace);

  const TimelinePanel panel(
      graph, trace, metrics,
      PanelOptions{options.row_height, options.device_labels, options.aggregate_above,
                   options.critical_path, options.dependency_arrows, options.max_arrows});
  std::optional<MemoryChart> memory;
  if (options.memory_chart) {
    memory.emplace(graph, trace, options.static_memory, options.memory_capacity,
                   std::max(36.0, options.row_height * 1.4));
  }
  Legend legend = make_legend(graph, panel, options);
  Page page;
  {
    const MeasureContext measure;
    page = make_page(measure.get(), trace, metrics, options, panel, legend, memory);
    measure.check();
  }
  const std::string caption = caption_text(graph, metrics);

  return render_page(format, page.width, page.height, options.png_scale, [&](cairo_t* cr) {
    fill_rect(cr, 0, 0, page.width, page.height, kWhite);
    draw_header(cr, page, options);
    legend.draw(cr, page.scale.plot_x, page.legend_top);
    panel.draw(cr, page.scale, page.rows_top);
    draw_time_axis(cr, page.scale, page.axis_y, !memory);
    if (memory) {
      memory->draw(cr, page.scale, page.memory_top);
      draw_time_axis(cr, page.scale, page.memory_axis_y, true);
    }
    set_font(cr, kTextSize);
    set_colour(cr, kInk);
    show_text(cr, kMargin, page.caption_baseline, caption);
  });
}

std::string render_timeline_svg(const EventGraph& graph, const Trace& trace,
                                const simulator::Metrics& metrics, const TimelineOptions& options) {
  return render_timeline(graph, trace, metrics, options, ImageFormat::Svg);
}

void write_timeline(const std::filesystem::path& path, const EventGraph& graph, const Trace& trace,
                    const simulator::Metrics& metrics, const TimelineOptions& options) {
  const ImageFormat format = image_format_of(path);
  write_file_atomically(path, render_timeline(graph, trace, metrics, options, format));
}

void write_timeline_svg(const std::filesystem::path& path, const EventGraph& graph,
                        const Trace& trace, const simulator::Metrics& metrics,
                        const TimelineOptions& options) {
  write_file_atomically(path, render_timeline_svg(graph, trace, metrics, options));
}

}  // namespace perflow::visualizer
