#include "detail/time_axis.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <fmt/format.h>

#include "detail/draw.hpp"
#include "detail/ticks.hpp"

namespace perflow::visualizer::detail {
namespace {

constexpr double kTickLength = 4;
constexpr double kMinTickGap = 14;

/// The unit the axis speaks in, from the extent of the picture.
TimeUnit axis_unit(TimeNs extent) {
  if (extent >= kNsPerS) return {kNsPerS, "s"};
  if (extent >= kNsPerMs) return {kNsPerMs, "ms"};
  if (extent >= kNsPerUs) return {kNsPerUs, "us"};
  return {1, "ns"};
}

/// The smallest 1/2/5 x 10^k ns step at least `raw`: at least 1 ns, and at most 5 x 10^17 ns
/// (10^18 and beyond would overflow the ticks after it).
TimeNs nice_step_at_least(double raw) { return static_cast<TimeNs>(nice_step(raw, 1, 5e17)); }

/// Calls `f` for each tick after 0 up to the extent, without overflowing past its end.
template <class F>
void for_each_tick(const TimeScale& scale, F f) {
  if (scale.extent <= 0) return;
  for (TimeNs t = scale.tick_step; t <= scale.extent; t += scale.tick_step) {
    f(t);
    if (t > scale.extent - scale.tick_step) break;
  }
}

}  // namespace

std::string tick_label(TimeNs value, TimeUnit unit) {
  if (value == 0) return "0";
  std::string text = fmt::format("{}", value / unit.ns);
  if (const TimeNs fraction = value % unit.ns; fraction != 0) {
    std::size_t width = 0;  // unit.ns is a power of ten: its number of zeros
    for (TimeNs u = unit.ns; u > 1; u /= 10) ++width;
    std::string digits = fmt::format("{:0{}}", fraction, width);
    while (digits.back() == '0') digits.pop_back();
    text += '.';
    text += digits;
  }
  text += unit.name;
  return text;
}

TimeScale make_time_scale(cairo_t* measure, double plot_x, double plot_width, TimeNs extent) {
  TimeScale scale;
  scale.plot_x = plot_x;
  scale.plot_width = plot_width;
  scale.extent = extent;
  scale.scale = extent > 0 ? plot_width / static_cast<double>(extent) : 0.0;
  if (extent <= 0) return scale;
  scale.unit = axis_unit(extent);
  set_font(measure, kTickSize);
  const double target = std::max(2.0, std::floor(plot_width / 80.0));
  TimeNs step = nice_step_at_least(static_cast<double>(extent) / target);
  while (step < extent) {
    // The widest label is one of the largest values; measure the last two.
    const TimeNs last = extent / step * step;
    const double widest =
        std::max(text_width(measure, tick_label(last, scale.unit)),
                 text_width(measure, tick_label(std::max<TimeNs>(last - step, step), scale.unit)));
    if (static_cast<double>(step) * scale.scale >= widest + kMinTickGap) break;
    step = nice_step_at_least(static_cast<double>(step) * 1.5);  // next of 1, 2, 5 x 10^k
  }
  scale.tick_step = step;
  return scale;
}

void draw_gridlines(cairo_t* cr, const TimeScale& scale, double top, double bottom) {
  if (scale.extent <= 0) return;
  for_each_tick(scale, [&](TimeNs t) {
    const double x = scale.x_of(t);
    cairo_move_to(cr, x, top);
    cairo_line_to(cr, x, bottom);
  });
  set_colour(cr, kGrid);
  cairo_set_line_width(cr, 0.5);
  cairo_stroke(cr);
}

void draw_time_axis(cairo_t* cr, const TimeScale& scale, double y, bool caption) {
  set_colour(cr, kAxis);
  cairo_set_line_width(cr, 0.8);
  cairo_move_to(cr, scale.plot_x, y);
  cairo_line_to(cr, scale.plot_x + scale.plot_width, y);
  cairo_stroke(cr);

  set_font(cr, kTickSize);
  cairo_set_line_width(cr, 0.8);
  const double baseline = y + kAxisTickSpace;
  const auto tick = [&](TimeNs t) {
    const double x = scale.x_of(t);
    cairo_move_to(cr, x, y);
    cairo_line_to(cr, x, y + kTickLength);
    cairo_stroke(cr);
    const std::string label = tick_label(t, scale.unit);
    show_text(cr, x - text_width(cr, label) / 2, baseline, label);
  };
  tick(0);
  for_each_tick(scale, tick);

  if (!caption) return;
  set_font(cr, kTextSize);
  set_colour(cr, kMutedInk);
  const std::string text = "time";
  show_text(cr, scale.plot_x + (scale.plot_width - text_width(cr, text)) / 2,
            baseline + kAxisCaptionSpace, text);
}

}  // namespace perflow::visualizer::detail
