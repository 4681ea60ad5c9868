#include "detail/cairo_document.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::visualizer::detail {
namespace {

struct FontOptionsDeleter {
  void operator()(cairo_font_options_t* options) const noexcept {
    cairo_font_options_destroy(options);
  }
};
using FontOptionsPtr = std::unique_ptr<cairo_font_options_t, FontOptionsDeleter>;

// cairo's image surfaces stop at 32767 pixels a side; the pixel cap bounds memory (4 bytes
// a pixel) for huge pages, which then come out at a lower resolution.
constexpr double kMaxPngSide = 32767;
constexpr double kMaxPngPixels = 64.0 * 1024 * 1024;

/// cairo's write callback: appends to the std::string passed as closure. Never throws.
cairo_status_t append_to_string(void* closure, const unsigned char* data,
                                unsigned int length) noexcept {
  try {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  } catch (...) {
    return CAIRO_STATUS_WRITE_ERROR;
  }
  return CAIRO_STATUS_SUCCESS;
}

/// cairo names the drawing group after the surface's process-wide serial number
/// (`<g id="surface17">`), so two renderings would differ. Renumber in order of appearance.
void renumber_surface_ids(std::string& svg) {
  constexpr std::string_view kToken = "surface";
  std::vector<std::string> seen;  // serial numbers in order of appearance
  std::string out;
  out.reserve(svg.size());
  std::size_t pos = 0;
  for (std::size_t hit = svg.find(kToken); hit != std::string::npos; hit = svg.find(kToken, pos)) {
    const std::size_t digits = hit + kToken.size();
    std::size_t end = digits;
    while (end < svg.size() && svg[end] >= '0' && svg[end] <= '9') ++end;
    out.append(svg, pos, digits - pos);
    if (end > digits) {
      const std::string number = svg.substr(digits, end - digits);
      std::size_t index = 0;
      while (index < seen.size() && seen[index] != number) ++index;
      if (index == seen.size()) seen.push_back(number);
      out += fmt::format("{}", index + 1);
    }
    pos = end;
  }
  out.append(svg, pos);
  svg = std::move(out);
}

void draw_on(cairo_surface_t* surface, double scale, const std::function<void(cairo_t*)>& draw) {
  const ContextPtr cr = make_context(surface);
  if (scale != 1) cairo_scale(cr.get(), scale, scale);
  draw(cr.get());
  check_status(cairo_status(cr.get()), "drawing");
}

}  // namespace

void check_status(cairo_status_t status, std::string_view what) {
  if (status != CAIRO_STATUS_SUCCESS) {
    throw IoError(fmt::format("cannot render {}: {}", what, cairo_status_to_string(status)));
  }
}

ContextPtr make_context(cairo_surface_t* surface) {
  check_status(cairo_surface_status(surface), "image: surface");
  ContextPtr cr(cairo_create(surface));
  check_status(cairo_status(cr.get()), "image: context");
  // Unhinted metrics: text measured on the scratch context matches every surface exactly.
  const FontOptionsPtr font_options(cairo_font_options_create());
  check_status(cairo_font_options_status(font_options.get()), "image: font options");
  cairo_font_options_set_hint_metrics(font_options.get(), CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_hint_style(font_options.get(), CAIRO_HINT_STYLE_NONE);
  cairo_set_font_options(cr.get(), font_options.get());
  return cr;
}

MeasureContext::MeasureContext()
    : surface_(cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1)),
      cr_(make_context(surface_.get())) {}

void MeasureContext::check() const { check_status(cairo_status(cr_.get()), "measuring text"); }

double effective_png_scale(double width, double height, double png_scale) {
  double scale = png_scale;
  scale = std::min(scale, kMaxPngSide / std::max(width, 1.0));
  scale = std::min(scale, kMaxPngSide / std::max(height, 1.0));
  scale = std::min(scale, std::sqrt(kMaxPngPixels / std::max(width * height, 1.0)));
  return scale;
}

std::string render_page(ImageFormat format, double width, double height, double png_scale,
                        const std::function<void(cairo_t*)>& draw) {
  std::string bytes;  // outlives the surface, which writes into it until finished
  switch (format) {
    case ImageFormat::Svg: {
      const SurfacePtr surface(
          cairo_svg_surface_create_for_stream(append_to_string, &bytes, width, height));
      draw_on(surface.get(), 1, draw);
      cairo_surface_finish(surface.get());
      check_status(cairo_surface_status(surface.get()), "SVG");
      renumber_surface_ids(bytes);
      break;
    }
    case ImageFormat::Pdf: {
      const SurfacePtr surface(
          cairo_pdf_surface_create_for_stream(append_to_string, &bytes, width, height));
      check_status(cairo_surface_status(surface.get()), "PDF: surface");
      // An empty creation date leaves it out: the same page gives the same bytes.
      cairo_pdf_surface_set_metadata(surface.get(), CAIRO_PDF_METADATA_CREATE_DATE, "");
      draw_on(surface.get(), 1, draw);
      cairo_surface_finish(surface.get());
      check_status(cairo_surface_status(surface.get()), "PDF");
      break;
    }
    case ImageFormat::Png: {
      const double scale = effective_png_scale(width, height, png_scale);
      const auto pixels = [scale](double points) {
        return static_cast<int>(std::clamp(std::ceil(points * scale), 1.0, kMaxPngSide));
      };
      const SurfacePtr surface(
          cairo_image_surface_create(CAIRO_FORMAT_RGB24, pixels(width), pixels(height)));
      draw_on(surface.get(), scale, draw);
      cairo_surface_flush(surface.get());
      check_status(cairo_surface_write_to_png_stream(surface.get(), append_to_string, &bytes),
                   "PNG");
      break;
    }
  }
  return bytes;
}

}  // namespace perflow::visualizer::detail
