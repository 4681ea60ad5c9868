#include "detail/memory_chart.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "detail/draw.hpp"
#include "detail/palette.hpp"
#include "perflow/core/units.hpp"

namespace perflow::visualizer::detail {
namespace {

constexpr Rgb kActivationFill = from_hex(0x5E60A8);  // indigo: unlike every kind colour
constexpr Rgb kStaticFill = from_hex(0xC9C9C9);
constexpr double kHeadingLine = 17;
constexpr double kHeadingGap = 4;
constexpr double kStripPadTop = 3;
constexpr double kStripPadBottom = 1.5;
constexpr double kBin = 1.0;  // points: finer detail than this is not drawn

double at(std::span<const double> values, std::size_t i) {
  return i < values.size() && std::isfinite(values[i]) && values[i] > 0 ? values[i] : 0.0;
}

}  // namespace

MemoryChart::MemoryChart(const EventGraph& graph, const Trace& trace,
                         std::span<const double> static_memory, std::span<const double> capacity,
                         double strip_height)
    : strip_height_(strip_height) {
  const std::uint32_t devices = graph.device_count();
  for (std::uint32_t d = 0; d < devices; ++d) {
    series_.push_back(activation_memory(graph, trace, DeviceId{d}));
    double peak = 0;
    for (const MemoryPoint& p : series_.back()) peak = std::max(peak, p.value);
    peak_.push_back(peak);
    static_.push_back(at(static_memory, d));
    capacity_.push_back(at(capacity, d));
    any_static_ = any_static_ || static_.back() > 0;
    any_capacity_ = any_capacity_ || capacity_.back() > 0;
    ymax_ = std::max({ymax_, static_.back() + peak, capacity_.back()});
  }
  // Headroom, so that a capacity line at the top reads as a line, not as the strip's edge.
  ymax_ *= 1.1;
}

double MemoryChart::label_width(cairo_t* measure) const {
  set_font(measure, kRowLabelSize);
  return series_.empty() ? 0.0 : text_width(measure, fmt::format("dev {}", series_.size() - 1));
}

double MemoryChart::height() const {
  return kHeadingLine + kHeadingGap + strip_height_ * static_cast<double>(series_.size());
}

std::vector<MemoryPoint> MemoryChart::drawn_points(const TimeScale& scale,
                                                   std::size_t device) const {
  const std::vector<MemoryPoint>& series = series_[device];
  const double bins_exact = std::ceil(scale.plot_width / kBin);
  if (scale.scale <= 0 || static_cast<double>(series.size()) <= bins_exact) return series;
  // Per bin, the largest value held anywhere in it: a filled area shows every peak.
  const auto bins = static_cast<std::size_t>(bins_exact) + 1;
  const auto bin_of = [&](TimeNs t) {
    const double b = std::floor(static_cast<double>(t) * scale.scale / kBin);
    return static_cast<std::size_t>(std::clamp(b, 0.0, static_cast<double>(bins - 1)));
  };
  std::vector<double> top(bins, 0.0);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::size_t first = bin_of(series[i].time);
    const std::size_t last =
        i + 1 < series.size() ? bin_of(series[i + 1].time) : bins - 1;  // held until then
    for (std::size_t b = first; b <= last; ++b) top[b] = std::max(top[b], series[i].value);
  }
  std::vector<MemoryPoint> points;
  for (std::size_t b = 0; b < bins; ++b) {
    if (!points.empty() && points.back().value == top[b]) continue;
    const auto time =
        static_cast<TimeNs>(std::llround(static_cast<double>(b) * kBin / scale.scale));
    points.push_back({std::min(time, scale.extent), top[b]});
  }
  return points;
}

void MemoryChart::draw(cairo_t* cr, const TimeScale& scale, double top) const {
  // Heading: what is drawn, and the shared scale.
  set_font(cr, kTextSize, true);
  set_colour(cr, kInk);
  const std::string heading = "activation memory";
  const double baseline = top + 11 - 1.5;
  show_text(cr, scale.plot_x, baseline, heading);
  double x = scale.plot_x + text_width(cr, heading) + 18;
  set_font(cr, kTextSize);
  const auto entry = [&](const std::string& text) {
    set_colour(cr, kInk);
    show_text(cr, x + 16, baseline, text);
    x += 16 + text_width(cr, text) + 18;
  };
  fill_rect(cr, x, top, 11, 11, kActivationFill);
  entry("activations");
  if (any_static_) {
    fill_rect(cr, x, top, 11, 11, kStaticFill);
    entry("static memory");
  }
  if (any_capacity_) {
    const double dash[] = {3, 2};
    cairo_set_dash(cr, dash, 2, 0);
    cairo_move_to(cr, x, top + 5.5);
    cairo_line_to(cr, x + 12, top + 5.5);
    set_colour(cr, kHighlight);
    cairo_set_line_width(cr, 1.2);
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
    entry("capacity");
  }
  set_colour(cr, kMutedInk);
  show_text(cr, x, baseline,
            ymax_ > 0 ? fmt::format("one scale for all devices: 0 to {}", format_memory(ymax_))
                      : std::string("no memory is allocated"));

  // Backgrounds and labels, the gridlines over them, then each strip's memory.
  const double strips_top = top + kHeadingLine + kHeadingGap;
  const auto strip_top = [&](std::size_t d) {
    return strips_top + strip_height_ * static_cast<double>(d);
  };
  set_font(cr, kRowLabelSize);
  cairo_text_extents_t digit;
  cairo_text_extents(cr, "0", &digit);
  for (std::size_t d = 0; d < series_.size(); ++d) {
    fill_rect(cr, scale.plot_x, strip_top(d) + 1, scale.plot_width, strip_height_ - 2,
              kRowBackground);
    const std::string label = fmt::format("dev {}", d);
    set_colour(cr, kInk);
    show_text(cr, scale.plot_x - 10 - text_width(cr, label),
              strip_top(d) + strip_height_ / 2 + digit.height / 2, label);
  }
  draw_gridlines(cr, scale, strips_top, strip_top(series_.size()));
  if (ymax_ <= 0) return;
  for (std::size_t d = 0; d < series_.size(); ++d) draw_strip(cr, scale, d, strip_top(d));
}

void MemoryChart::draw_strip(cairo_t* cr, const TimeScale& scale, std::size_t device,
                             double top) const {
  const double base = top + strip_height_ - kStripPadBottom;
  const double usable = strip_height_ - kStripPadTop - kStripPadBottom;
  const auto y_of = [&](double v) { return base - v / ymax_ * usable; };
  const double floor = static_[device];
  const double right = scale.plot_x + scale.plot_width;
  if (floor > 0)
    fill_rect(cr, scale.plot_x, y_of(floor), scale.plot_width, base - y_of(floor), kStaticFill);

  if (peak_[device] > 0) {
    const std::vector<MemoryPoint> points = drawn_points(scale, device);
    cairo_move_to(cr, scale.plot_x, y_of(floor));
    double last = 0;
    for (const MemoryPoint& p : points) {
      const double px = scale.x_of(p.time);
      cairo_line_to(cr, px, y_of(floor + last));
      cairo_line_to(cr, px, y_of(floor + p.value));
      last = p.value;
    }
    cairo_line_to(cr, right, y_of(floor + last));
    cairo_line_to(cr, right, y_of(floor));
    cairo_close_path(cr);
    set_colour(cr, kActivationFill);
    cairo_fill(cr);
  }

  const double capacity = capacity_[device];
  if (capacity > 0) {
    const double dash[] = {3, 2};
    cairo_set_dash(cr, dash, 2, 0);
    cairo_move_to(cr, scale.plot_x, y_of(capacity));
    cairo_line_to(cr, right, y_of(capacity));
    set_colour(cr, kHighlight);
    cairo_set_line_width(cr, 1.2);
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
  }

  // The peak, on a pale backing so it reads over the area and the line.
  const double total = floor + peak_[device];
  std::string note = fmt::format("peak {}", format_memory(peak_[device]));
  if (floor > 0) note += fmt::format(" + {} static", format_memory(floor));
  if (capacity > 0) note += fmt::format(" of {}", format_memory(capacity));
  set_font(cr, kSmallLabelSize);
  const double w = text_width(cr, note);
  const double note_x = right - 4 - w;
  const double note_baseline = top + strip_height_ / 2 + kSmallLabelSize * 0.35;
  cairo_set_source_rgba(cr, kWhite.r, kWhite.g, kWhite.b, 0.8);
  cairo_rectangle(cr, note_x - 2, note_baseline - kSmallLabelSize * 0.8, w + 4,
                  kSmallLabelSize * 1.05);
  cairo_fill(cr);
  set_colour(cr, total > capacity && capacity > 0 ? kHighlight : kInk);
  show_text(cr, note_x, note_baseline, note);
}

}  // namespace perflow::visualizer::detail
