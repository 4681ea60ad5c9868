#pragma once

#include <string>

#include <cairo.h>

#include "palette.hpp"

namespace perflow::visualizer::detail {

// Type sizes (points) and margins shared by every page.
inline constexpr double kMargin = 18;
inline constexpr double kTitleSize = 15;
inline constexpr double kSubtitleSize = 11;
inline constexpr double kTextSize = 10.5;
inline constexpr double kTickSize = 9.5;
inline constexpr double kRowLabelSize = 11;
inline constexpr double kSmallLabelSize = 9;

void set_font(cairo_t* cr, double size, bool bold = false);

/// Advance width of `text` in the current font.
double text_width(cairo_t* cr, const std::string& text);

void show_text(cairo_t* cr, double x, double baseline, const std::string& text);

void fill_rect(cairo_t* cr, double x, double y, double w, double h, Rgb colour);

}  // namespace perflow::visualizer::detail
