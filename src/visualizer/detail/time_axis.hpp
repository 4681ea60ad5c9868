#pragma once

#include <string>
#include <string_view>

#include <cairo.h>

#include "perflow/core/time.hpp"

namespace perflow::visualizer::detail {

struct TimeUnit {
  TimeNs ns;
  std::string_view name;
};

/// "0", "50ms", "2.5us": `value` in `unit`, exact (integer arithmetic), no trailing zeros.
std::string tick_label(TimeNs value, TimeUnit unit);

/// The horizontal mapping shared by everything drawn against time on one page.
struct TimeScale {
  double plot_x = 0;
  double plot_width = 0;
  TimeNs extent = 0;  ///< the time at the right edge
  double scale = 0;   ///< points per ns; 0 when nothing ran
  TimeNs tick_step = 1;
  TimeUnit unit{1, "ns"};

  [[nodiscard]] double x_of(TimeNs t) const { return plot_x + static_cast<double>(t) * scale; }
};

/// Maps [0, extent] onto the plot and picks 1/2/5 x 10^k ticks whose labels do not collide.
TimeScale make_time_scale(cairo_t* measure, double plot_x, double plot_width, TimeNs extent);

/// Vertical space draw_time_axis uses below its line: ticks and labels, and the caption.
inline constexpr double kAxisTickSpace = 4 + 9.5 + 2;  // tick length + tick label + gap
inline constexpr double kAxisCaptionSpace = 10.5 + 5;  // "time" under the labels

/// Faint vertical lines at the ticks between `top` and `bottom` (under the boxes: they show
/// only where a lane idles).
void draw_gridlines(cairo_t* cr, const TimeScale& scale, double top, double bottom);

/// The axis line at `y` with ticks and their labels; with `caption`, "time" under them.
void draw_time_axis(cairo_t* cr, const TimeScale& scale, double y, bool caption);

}  // namespace perflow::visualizer::detail
