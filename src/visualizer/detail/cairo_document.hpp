#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <cairo.h>

#include "perflow/visualizer/image_format.hpp"

namespace perflow::visualizer::detail {

struct SurfaceDeleter {
  void operator()(cairo_surface_t* surface) const noexcept { cairo_surface_destroy(surface); }
};
struct ContextDeleter {
  void operator()(cairo_t* cr) const noexcept { cairo_destroy(cr); }
};
using SurfacePtr = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using ContextPtr = std::unique_ptr<cairo_t, ContextDeleter>;

/// Throws IoError ("cannot render <what>: ...") unless `status` is success.
void check_status(cairo_status_t status, std::string_view what);

/// A context with unhinted font metrics, so text measured anywhere matches every format.
ContextPtr make_context(cairo_surface_t* surface);

/// A context on a scratch surface: layouts measure text before the page size is known.
class MeasureContext {
 public:
  MeasureContext();
  [[nodiscard]] cairo_t* get() const { return cr_.get(); }
  /// Throws IoError if measuring failed.
  void check() const;

 private:
  SurfacePtr surface_;
  ContextPtr cr_;
};

/// A page of `width` x `height` points drawn by `draw`, as the bytes of `format`. PNG has
/// `png_scale` pixels per point, reduced to stay within cairo's and memory's limits.
/// Deterministic: SVG surface ids are renumbered and the PDF has no creation date.
std::string render_page(ImageFormat format, double width, double height, double png_scale,
                        const std::function<void(cairo_t*)>& draw);

/// The PNG scale render_page uses for a page of `width` x `height` points.
double effective_png_scale(double width, double height, double png_scale);

}  // namespace perflow::visualizer::detail
