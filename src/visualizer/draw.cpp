#include "detail/draw.hpp"

namespace perflow::visualizer::detail {
namespace {
constexpr const char* kFontFamily = "DejaVu Sans";
}

void set_font(cairo_t* cr, double size, bool bold) {
  cairo_select_font_face(cr, kFontFamily, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

double text_width(cairo_t* cr, const std::string& text) {
  cairo_text_extents_t extents;
  cairo_text_extents(cr, text.c_str(), &extents);
  return extents.x_advance;
}

void show_text(cairo_t* cr, double x, double baseline, const std::string& text) {
  cairo_move_to(cr, x, baseline);
  cairo_show_text(cr, text.c_str());
}

void fill_rect(cairo_t* cr, double x, double y, double w, double h, Rgb colour) {
  set_colour(cr, colour);
  cairo_rectangle(cr, x, y, w, h);
  cairo_fill(cr);
}

}  // namespace perflow::visualizer::detail
