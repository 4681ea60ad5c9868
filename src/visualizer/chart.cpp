#include "perflow/visualizer/chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "detail/cairo_document.hpp"
#include "detail/draw.hpp"
#include "detail/palette.hpp"
#include "detail/ticks.hpp"
#include "perflow/core/time.hpp"
#include "perflow/core/units.hpp"

namespace perflow::visualizer {
namespace {

using namespace detail;

constexpr double kWidth = 640;
constexpr double kPlotHeight = 300;
constexpr double kMarker = 3.2;
constexpr double kLegendRow = 16;

// Okabe-Ito without its yellow (too faint as a line on white), then greys.
constexpr Rgb kSeriesColours[] = {from_hex(0x0072B2), from_hex(0xD55E00), from_hex(0x009E73),
                                  from_hex(0xCC79A7), from_hex(0x56B4E9), from_hex(0xE69F00),
                                  from_hex(0x000000), from_hex(0x999999)};
Rgb series_colour(std::size_t i) {
  return kSeriesColours[i % (sizeof(kSeriesColours) / sizeof(kSeriesColours[0]))];
}

// Per line, a dash pattern and a marker shape besides the colour: two lines that coincide
// (equal makespans of two schedules) still show both.
constexpr std::array<std::array<double, 2>, 4> kDashes = {
    {{0, 0}, {6, 3}, {2, 2.5}, {9, 3}}};  // solid, dashed, dotted, long dashes
enum class Marker { Circle, Square, Triangle, Diamond, Cross };
constexpr std::size_t kMarkers = 5;

void set_dash(cairo_t* cr, std::size_t series) {
  const auto& dash = kDashes[series % kDashes.size()];
  if (dash[0] == 0) {
    cairo_set_dash(cr, nullptr, 0, 0);
  } else {
    cairo_set_dash(cr, dash.data(), 2, 0);
  }
}

void draw_marker(cairo_t* cr, std::size_t series, double x, double y, double r) {
  switch (static_cast<Marker>(series % kMarkers)) {
    case Marker::Circle:
      cairo_arc(cr, x, y, r, 0, 2 * M_PI);
      break;
    case Marker::Square:
      cairo_rectangle(cr, x - r * 0.9, y - r * 0.9, r * 1.8, r * 1.8);
      break;
    case Marker::Triangle:
      cairo_move_to(cr, x, y - r * 1.2);
      cairo_line_to(cr, x + r * 1.1, y + r * 0.8);
      cairo_line_to(cr, x - r * 1.1, y + r * 0.8);
      cairo_close_path(cr);
      break;
    case Marker::Diamond:
      cairo_move_to(cr, x, y - r * 1.3);
      cairo_line_to(cr, x + r * 1.1, y);
      cairo_line_to(cr, x, y + r * 1.3);
      cairo_line_to(cr, x - r * 1.1, y);
      cairo_close_path(cr);
      break;
    case Marker::Cross: {
      const double a = r * 1.1;
      cairo_set_line_width(cr, 1.6);
      cairo_move_to(cr, x - a, y - a);
      cairo_line_to(cr, x + a, y + a);
      cairo_move_to(cr, x - a, y + a);
      cairo_line_to(cr, x + a, y - a);
      cairo_stroke(cr);
      return;
    }
  }
  cairo_fill(cr);
}

// Up to 8 ticks at 1, 2 or 5 x 10^k covering [low, high].
struct Ticks {
  double low = 0;
  double high = 1;
  double step = 1;
};
Ticks nice_ticks(double low, double high) {
  if (high <= low) {
    const double pad = low == 0 ? 1 : std::abs(low) * 0.1;
    low -= pad;
    high += pad;
  }
  const double step = nice_step((high - low) / 6);
  return {std::floor(low / step + 1e-9) * step, std::ceil(high / step - 1e-9) * step, step};
}

std::string value_label(double value, ValueUnit unit) {
  if (std::abs(value) < 1e-12) value = 0;
  switch (unit) {
    case ValueUnit::Nanoseconds:
      return format_duration(static_cast<TimeNs>(std::llround(value)));
    case ValueUnit::Bytes:
      return format_memory(value);
    case ValueUnit::Plain:
      break;
  }
  return fmt::format("{:.6g}", value);
}

void check(const ChartData& chart) {
  std::size_t points = 0;
  for (const ChartSeries& s : chart.series) {
    for (const ChartSeries::Point& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) {
        throw std::invalid_argument(fmt::format("chart point ({}, {}) is not finite", p.x, p.y));
      }
      ++points;
    }
  }
  if (points == 0) throw std::invalid_argument("the chart has no point to draw");
}

}  // namespace

std::size_t usual_point_rows(const ChartData& chart) {
  std::map<std::size_t, std::size_t> points_with;  // rows averaged -> points
  for (const ChartSeries& series : chart.series) {
    for (const ChartSeries::Point& p : series.points) ++points_with[p.rows];
  }
  std::size_t usual = 1, most = 0;
  for (const auto& [rows, points] : points_with) {
    if (points >= most) {
      usual = rows;
      most = points;
    }
  }
  return usual;
}

std::string render_chart(const ChartData& chart, ImageFormat format) {
  check(chart);
  const bool categorical = !chart.categories.empty();
  double x_low = INFINITY, x_high = -INFINITY, y_low = INFINITY, y_high = -INFINITY;
  for (const ChartSeries& s : chart.series) {
    for (const ChartSeries::Point& p : s.points) {
      x_low = std::min(x_low, p.x);
      x_high = std::max(x_high, p.x);
      y_low = std::min(y_low, p.y);
      y_high = std::max(y_high, p.y);
    }
  }
  // Values that are all positive start the y axis at 0, so gaps read as ratios.
  if (y_low > 0 && y_low < y_high) y_low = 0;
  const Ticks y_ticks = nice_ticks(y_low, y_high);
  const Ticks x_ticks = categorical ? Ticks{-0.5, double(chart.categories.size()) - 0.5, 1}
                                    : nice_ticks(x_low, x_high);

  // Layout, measured before the page size is known.
  MeasureContext measure;
  set_font(measure.get(), kTickSize);
  double y_label_width = 0;
  for (double v = y_ticks.low; v <= y_ticks.high + y_ticks.step / 2; v += y_ticks.step) {
    y_label_width =
        std::max(y_label_width, text_width(measure.get(), value_label(v, chart.y_unit)));
  }
  std::size_t named = 0;
  for (const ChartSeries& s : chart.series) named += s.name.empty() ? 0u : 1u;
  const double plot_x = kMargin + kTextSize + 8 + y_label_width + 6;
  const double plot_width = kWidth - plot_x - kMargin;
  const double legend_height = named > 0 ? kLegendRow * double((named + 2) / 3) + 4 : 0;
  const double plot_top = kMargin + kTitleSize + 10 + legend_height;
  const double plot_bottom = plot_top + kPlotHeight;
  const double height = plot_bottom + 4 + kTickSize + 6 + kTextSize + 8 +
                        (chart.caption.empty() ? 0 : kSmallLabelSize + 8) + kMargin;
  const auto x_of = [&](double x) {
    return plot_x + (x - x_ticks.low) / (x_ticks.high - x_ticks.low) * plot_width;
  };
  const auto y_of = [&](double y) {
    return plot_bottom - (y - y_ticks.low) / (y_ticks.high - y_ticks.low) * kPlotHeight;
  };

  return render_page(format, kWidth, height, 2.0, [&](cairo_t* cr) {
    fill_rect(cr, 0, 0, kWidth, height, kWhite);
    set_font(cr, kTitleSize, true);
    cairo_set_source_rgb(cr, kInk.r, kInk.g, kInk.b);
    show_text(cr, kMargin, kMargin + kTitleSize, chart.title);

    // Legend: three entries per row.
    std::size_t entry = 0;
    set_font(cr, kTextSize);
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
      if (chart.series[i].name.empty()) continue;
      const double x = kMargin + double(entry % 3) * (kWidth - 2 * kMargin) / 3;
      const double y = kMargin + kTitleSize + 10 + double(entry / 3) * kLegendRow;
      const Rgb c = series_colour(i);
      cairo_set_source_rgb(cr, c.r, c.g, c.b);
      cairo_set_line_width(cr, 1.8);
      set_dash(cr, i);
      cairo_move_to(cr, x, y + 5.5);
      cairo_line_to(cr, x + 22, y + 5.5);
      cairo_stroke(cr);
      cairo_set_dash(cr, nullptr, 0, 0);
      draw_marker(cr, i, x + 11, y + 5.5, kMarker);
      cairo_set_source_rgb(cr, kInk.r, kInk.g, kInk.b);
      show_text(cr, x + 28, y + 9, chart.series[i].name);
      ++entry;
    }

    // Grid and y ticks.
    set_font(cr, kTickSize);
    for (double v = y_ticks.low; v <= y_ticks.high + y_ticks.step / 2; v += y_ticks.step) {
      const double y = std::round(y_of(v)) + 0.5;
      cairo_set_source_rgb(cr, kGrid.r, kGrid.g, kGrid.b);
      cairo_set_line_width(cr, 1);
      cairo_move_to(cr, plot_x, y);
      cairo_line_to(cr, plot_x + plot_width, y);
      cairo_stroke(cr);
      const std::string label = value_label(v, chart.y_unit);
      cairo_set_source_rgb(cr, kMutedInk.r, kMutedInk.g, kMutedInk.b);
      show_text(cr, plot_x - 6 - text_width(cr, label), y + kTickSize / 3, label);
    }
    // x ticks.
    const auto x_tick = [&](double x, const std::string& label) {
      const double px = std::round(x_of(x)) + 0.5;
      cairo_set_source_rgb(cr, kAxis.r, kAxis.g, kAxis.b);
      cairo_move_to(cr, px, plot_bottom);
      cairo_line_to(cr, px, plot_bottom + 4);
      cairo_stroke(cr);
      cairo_set_source_rgb(cr, kMutedInk.r, kMutedInk.g, kMutedInk.b);
      show_text(cr, px - text_width(cr, label) / 2, plot_bottom + 4 + kTickSize, label);
    };
    if (categorical) {
      for (std::size_t i = 0; i < chart.categories.size(); ++i)
        x_tick(double(i), chart.categories[i]);
    } else {
      for (double v = x_ticks.low; v <= x_ticks.high + x_ticks.step / 2; v += x_ticks.step) {
        x_tick(v, value_label(v, chart.x_unit));
      }
    }
    // Axes.
    cairo_set_source_rgb(cr, kAxis.r, kAxis.g, kAxis.b);
    cairo_move_to(cr, plot_x + 0.5, plot_top);
    cairo_line_to(cr, plot_x + 0.5, plot_bottom + 0.5);
    cairo_line_to(cr, plot_x + plot_width, plot_bottom + 0.5);
    cairo_stroke(cr);
    // Axis labels: x centred under the ticks, y rotated along the axis.
    set_font(cr, kTextSize);
    cairo_set_source_rgb(cr, kInk.r, kInk.g, kInk.b);
    const double x_label_y = plot_bottom + 4 + kTickSize + 6 + kTextSize;
    show_text(cr, plot_x + (plot_width - text_width(cr, chart.x_label)) / 2, x_label_y,
              chart.x_label);
    cairo_save(cr);
    cairo_translate(cr, kMargin + kTextSize,
                    plot_top + (kPlotHeight + text_width(cr, chart.y_label)) / 2);
    cairo_rotate(cr, -M_PI / 2);
    show_text(cr, 0, 0, chart.y_label);
    cairo_restore(cr);

    // Lines, then markers on top.
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
      const Rgb c = series_colour(i);
      const auto& points = chart.series[i].points;
      cairo_set_source_rgb(cr, c.r, c.g, c.b);
      cairo_set_line_width(cr, 1.8);
      set_dash(cr, i);
      for (std::size_t k = 0; k < points.size(); ++k) {
        if (k == 0) {
          cairo_move_to(cr, x_of(points[k].x), y_of(points[k].y));
        } else {
          cairo_line_to(cr, x_of(points[k].x), y_of(points[k].y));
        }
      }
      cairo_stroke(cr);
      cairo_set_dash(cr, nullptr, 0, 0);
      for (const ChartSeries::Point& p : points) draw_marker(cr, i, x_of(p.x), y_of(p.y), kMarker);
    }
    // Points that average another number of rows than most say how many.
    const std::size_t usual = usual_point_rows(chart);
    set_font(cr, kSmallLabelSize);
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
      const Rgb c = series_colour(i);
      cairo_set_source_rgb(cr, c.r, c.g, c.b);
      for (const ChartSeries::Point& p : chart.series[i].points) {
        if (p.rows == usual) continue;
        // On a white patch: the label sits above the point, where lines may pass.
        const std::string label = fmt::format("n={}", p.rows);
        const double x = x_of(p.x) + kMarker + 2;
        const double y = y_of(p.y) - kMarker - 4;
        fill_rect(cr, x - 1, y - kSmallLabelSize, text_width(cr, label) + 2, kSmallLabelSize + 3,
                  kWhite);
        cairo_set_source_rgb(cr, c.r, c.g, c.b);
        show_text(cr, x, y, label);
      }
    }

    if (!chart.caption.empty()) {
      set_font(cr, kSmallLabelSize);
      cairo_set_source_rgb(cr, kMutedInk.r, kMutedInk.g, kMutedInk.b);
      show_text(cr, kMargin, x_label_y + 8 + kSmallLabelSize, chart.caption);
    }
  });
}

}  // namespace perflow::visualizer
