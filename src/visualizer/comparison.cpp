#include "perflow/visualizer/comparison.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "detail/cairo_document.hpp"
#include "detail/draw.hpp"
#include "detail/legend.hpp"
#include "detail/pairs.hpp"
#include "detail/palette.hpp"
#include "detail/time_axis.hpp"
#include "detail/timeline_panel.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/core/units.hpp"

namespace perflow::visualizer {
namespace {

using namespace detail;

constexpr Rgb kBar = from_hex(0x6B7C93);
constexpr double kRunHeading = 20;  // a run's heading line above its rows
constexpr double kRunGap = 12;      // after a run's axis
constexpr double kBarRow = 18;
constexpr double kBarHeight = 11;
constexpr double kBarPanelGap = 28;
constexpr double kBarHeadingLine = 20;
constexpr double kRightPadding = 12;

double peak_memory(const simulator::Metrics& metrics) {
  double peak = 0;
  for (const auto& d : metrics.devices) peak = std::max(peak, d.peak_memory);
  return peak;
}

/// One bar chart: a metric of every run, its text, and which run is best (lowest).
struct BarMetric {
  std::string title;
  std::vector<double> values;
  std::vector<std::string> texts;
  /// Per run, the scale its bar is drawn on; runs on different scales are not compared.
  std::vector<std::size_t> scale_of = {};
};

// format_memory's convention: amounts below 10,000 are activation units, above are bytes.
constexpr double kSmallestBytes = 1e4;

std::vector<BarMetric> bar_metrics(std::span<const ComparedRun> runs) {
  std::vector<BarMetric> metrics{
      {"makespan", {}, {}}, {"bubble ratio", {}, {}}, {"peak activation memory", {}, {}}};
  for (const ComparedRun& run : runs) {
    const auto& m = run.metrics;
    metrics[0].values.push_back(static_cast<double>(m.makespan));
    metrics[0].texts.push_back(format_duration(m.makespan));
    metrics[1].values.push_back(m.bubble_ratio);
    metrics[1].texts.push_back(fmt::format("{:.2f}%", m.bubble_ratio * 100));
    metrics[2].values.push_back(peak_memory(m));
    metrics[2].texts.push_back(format_memory(peak_memory(m)));
  }
  for (BarMetric& metric : metrics) metric.scale_of.assign(runs.size(), 0);
  // Activation units and bytes on one axis would compare 4 with 24 GB: draw them apart.
  BarMetric& memory = metrics[2];
  const auto in_bytes = [](double v) { return v >= kSmallestBytes; };
  const auto in_units = [](double v) { return v > 0 && v < kSmallestBytes; };
  if (std::any_of(memory.values.begin(), memory.values.end(), in_bytes) &&
      std::any_of(memory.values.begin(), memory.values.end(), in_units)) {
    memory.title += " (activation units and bytes: not compared)";
    for (std::size_t i = 0; i < runs.size(); ++i)
      memory.scale_of[i] = in_bytes(memory.values[i]) ? 1 : 0;
  }
  return metrics;
}

/// `text` cut to at most `width` points (with an ellipsis) in the current font.
std::string fit(cairo_t* cr, const std::string& text, double width) {
  if (text_width(cr, text) <= width) return text;
  std::string cut = text;
  while (!cut.empty() && text_width(cr, cut + "\u2026") > width) {
    cut.pop_back();
    while (!cut.empty() && (static_cast<unsigned char>(cut.back()) & 0xC0) == 0x80) {
      cut.pop_back();  // never leave half a UTF-8 sequence
    }
    if (!cut.empty() && static_cast<unsigned char>(cut.back()) >= 0xC0) cut.pop_back();
  }
  return cut + "\u2026";
}

void check_options(const ComparisonOptions& options) {
  if (!std::isfinite(options.width) || options.width < 200 || options.width > 1e6) {
    throw std::invalid_argument(
        fmt::format("comparison width must be in [200, 1e6] points, got {}", options.width));
  }
  if (!std::isfinite(options.row_height) || options.row_height <= 0 || options.row_height > 1e4) {
    throw std::invalid_argument(fmt::format(
        "comparison row height must be in (0, 1e4] points, got {}", options.row_height));
  }
  if (!std::isfinite(options.png_scale) || options.png_scale <= 0 || options.png_scale > 16) {
    throw std::invalid_argument(
        fmt::format("comparison PNG scale must be in (0, 16], got {}", options.png_scale));
  }
}

}  // namespace

std::string render_comparison(std::span<const ComparedRun> runs, const ComparisonOptions& options,
                              ImageFormat format) {
  check_options(options);
  if (runs.empty()) throw std::invalid_argument("a comparison needs at least one run");
  for (const ComparedRun& run : runs) check_trace(run.graph, run.trace);

  std::vector<TimelinePanel> panels;
  panels.reserve(runs.size());
  KindsPresent present;
  TimeNs extent = 0;
  for (const ComparedRun& run : runs) {
    panels.emplace_back(run.graph, run.trace, run.metrics,
                        PanelOptions{options.row_height, run.device_labels, options.aggregate_above,
                                     false, false, 0});
    present.add(run.graph);
    extent = std::max(extent, run.metrics.makespan);
    for (const TimeNs f : run.trace.finish) extent = std::max(extent, f);
  }
  Legend legend(present);
  if (const auto paired = std::find_if(runs.begin(), runs.end(),
                                       [](const ComparedRun& r) { return r.graph.has_pairs(); });
      paired != runs.end()) {
    legend.add(Swatch::Pair, kPairLegend, pair_backward_kind(paired->graph));
  }
  if (std::any_of(panels.begin(), panels.end(), [](const auto& p) { return p.aggregates(); })) {
    legend.add(Swatch::Aggregate,
               "boxes under a point wide: per kind, a band as tall as its share of the time");
  }
  std::vector<BarMetric> bars = bar_metrics(runs);
  if (!options.memory_bars) bars.pop_back();
  const std::string title =
      options.title.empty()
          ? fmt::format("Comparison of {} run{}", runs.size(), runs.size() == 1 ? "" : "s")
          : options.title;

  // Layout.
  const double width = options.width;
  double y = kMargin;
  const double title_baseline = y + kTitleSize * 0.8;
  y += kTitleSize + 6;
  const double subtitle_baseline = y + kSubtitleSize * 0.8;
  y += kSubtitleSize + 12;
  TimeScale scale;
  double name_column = 0;
  std::vector<std::string> bar_names;
  {
    const MeasureContext measure;
    double labels = 0;
    for (const TimelinePanel& panel : panels) {
      labels = std::max(labels, panel.label_width(measure.get()));
    }
    const double plot_x = kMargin + labels + 10;
    const double plot_width = std::max(1.0, width - plot_x - kMargin - kRightPadding);
    scale = make_time_scale(measure.get(), plot_x, plot_width, extent);
    legend.layout(measure.get(), plot_width);
    set_font(measure.get(), kTextSize);
    for (const ComparedRun& run : runs) {
      bar_names.push_back(fit(measure.get(), run.name, width * 0.3) +
                          (run.out_of_memory ? "  (out of memory)" : ""));
      name_column = std::max(name_column, text_width(measure.get(), bar_names.back()));
    }
    measure.check();
  }
  const double legend_top = y;
  y += legend.height();
  std::vector<double> run_tops;
  for (const TimelinePanel& panel : panels) {
    run_tops.push_back(y);
    y += kRunHeading + panel.height() + 4 + kAxisTickSpace + kRunGap;
  }
  const double bars_top = y + 8;
  y = bars_top + kBarHeadingLine + kBarRow * static_cast<double>(runs.size());
  const double height = std::ceil(y + kMargin);

  const double bars_x = kMargin + name_column + 10;
  const double panel_width = std::max(30.0, (width - bars_x - kMargin - 2 * kBarPanelGap) / 3.0);

  return render_page(format, width, height, options.png_scale, [&](cairo_t* cr) {
    fill_rect(cr, 0, 0, width, height, kWhite);
    set_font(cr, kTitleSize, true);
    set_colour(cr, kInk);
    show_text(cr, kMargin, title_baseline, title);
    set_font(cr, kSubtitleSize);
    set_colour(cr, kMutedInk);
    show_text(cr, kMargin, subtitle_baseline,
              options.memory_bars
                  ? "timelines on one time scale; makespan, bubble ratio and peak memory below"
                  : "timelines on one time scale; makespan and bubble ratio below");
    legend.draw(cr, scale.plot_x, legend_top);

    for (std::size_t i = 0; i < runs.size(); ++i) {
      const ComparedRun& run = runs[i];
      const double top = run_tops[i];
      const double baseline = top + 13;
      set_font(cr, kRowLabelSize, true);
      set_colour(cr, kInk);
      const std::string name = fit(cr, run.name, width * 0.45);
      show_text(cr, kMargin, baseline, name);
      const double x = kMargin + text_width(cr, name) + 10;
      set_font(cr, kTextSize);
      set_colour(cr, kMutedInk);
      std::string detail =
          fmt::format("{}{}makespan {}  \u00b7  bubble ratio {:.2f}%", run.subtitle,
                      run.subtitle.empty() ? "" : "   ", format_duration(run.metrics.makespan),
                      run.metrics.bubble_ratio * 100);
      if (options.memory_bars) {
        detail += fmt::format("  \u00b7  peak memory {}", format_memory(peak_memory(run.metrics)));
      }
      show_text(cr, x, baseline, detail);
      if (run.out_of_memory) {
        const double after = x + text_width(cr, detail) + 10;  // in the detail's font
        set_font(cr, kTextSize, true);
        set_colour(cr, kHighlight);
        show_text(cr, after, baseline, "OUT OF MEMORY");
      }
      const double rows_top = top + kRunHeading;
      panels[i].draw(cr, scale, rows_top);
      draw_time_axis(cr, scale, rows_top + panels[i].height() + 4, false);
    }

    // Bars: one panel per metric, one row per run, the lowest value in bold.
    set_font(cr, kTextSize);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double row_top = bars_top + kBarHeadingLine + kBarRow * static_cast<double>(i);
      set_colour(cr, runs[i].out_of_memory ? kHighlight : kInk);
      show_text(cr, bars_x - 10 - text_width(cr, bar_names[i]), row_top + kBarHeight - 1.5,
                bar_names[i]);
    }
    for (std::size_t m = 0; m < bars.size(); ++m) {
      const BarMetric& metric = bars[m];
      const double x0 = bars_x + (panel_width + kBarPanelGap) * static_cast<double>(m);
      set_font(cr, kTextSize, true);
      set_colour(cr, kInk);
      show_text(cr, x0, bars_top + 11, metric.title);
      // The best is the lowest of the runs that fit, on one scale; each scale has its top.
      std::optional<double> best;
      bool one_scale = true;
      std::array<double, 2> top_value{0, 0};
      for (std::size_t i = 0; i < runs.size(); ++i) {
        const std::size_t k = metric.scale_of[i];
        one_scale = one_scale && k == metric.scale_of[0];
        top_value[k] = std::max(top_value[k], metric.values[i]);
        if (!runs[i].out_of_memory && (!best || metric.values[i] < *best)) best = metric.values[i];
      }
      set_font(cr, kTextSize);
      double widest_text = 0;
      for (const std::string& text : metric.texts) {
        widest_text = std::max(widest_text, text_width(cr, text));
      }
      const double bar_room = std::max(10.0, panel_width - widest_text - 8);
      for (std::size_t i = 0; i < runs.size(); ++i) {
        const double row_top = bars_top + kBarHeadingLine + kBarRow * static_cast<double>(i);
        const double top = top_value[metric.scale_of[i]];
        const double length = top > 0 ? metric.values[i] / top * bar_room : 0.0;
        fill_rect(cr, x0, row_top, bar_room, kBarHeight, kRowBackground);
        fill_rect(cr, x0, row_top, std::max(length, 0.5), kBarHeight, kBar);
        const bool is_best = options.mark_best && one_scale && !runs[i].out_of_memory && best &&
                             metric.values[i] == *best && runs.size() > 1;
        set_font(cr, kTextSize, is_best);
        set_colour(cr, kInk);
        show_text(cr, x0 + bar_room + 6, row_top + kBarHeight - 1.5, metric.texts[i]);
      }
    }
  });
}

void write_comparison(const std::filesystem::path& path, std::span<const ComparedRun> runs,
                      const ComparisonOptions& options) {
  const ImageFormat format = image_format_of(path);
  write_file_atomically(path, render_comparison(runs, options, format));
}

}  // namespace perflow::visualizer
