// The search page's Pareto chart (pareto.hpp), written as SVG text.
#include "perflow/visualizer/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "detail/ticks.hpp"
#include "perflow/core/units.hpp"

namespace perflow::visualizer {

std::string escape_html(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_pareto_svg(std::span<const ParetoPoint> front,
                              std::span<const ParetoPoint> best) {
  constexpr double kWidth = 720, kHeight = 420, kLeft = 90, kRight = 20, kTop = 20, kBottom = 60;
  std::vector<const ParetoPoint*> all;
  for (const auto& p : front) all.push_back(&p);
  for (const auto& p : best) all.push_back(&p);
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
  for (const auto* p : all) {
    x0 = std::min(x0, p->peak_memory);
    x1 = std::max(x1, p->peak_memory);
    y0 = std::min(y0, double(p->step));
    y1 = std::max(y1, double(p->step));
  }
  const double xpad = std::max((x1 - x0) * 0.05, x1 * 0.01 + 1);
  const double ypad = std::max((y1 - y0) * 0.05, y1 * 0.01 + 1);
  x0 -= xpad, x1 += xpad, y0 -= ypad, y1 += ypad;
  const auto px = [&](double x) {
    return kLeft + (x - x0) / (x1 - x0) * (kWidth - kLeft - kRight);
  };
  const auto py = [&](double y) {
    return kTop + (y1 - y) / (y1 - y0) * (kHeight - kTop - kBottom);
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect x=\"{2}\" y=\"{3}\" width=\"{4}\" height=\"{5}\" fill=\"none\" "
      "stroke=\"#888\"/>\n",
      kWidth, kHeight, kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom);
  // Ticks at round values (1, 2 or 5 x 10^k), about five per axis.
  const double x_step = detail::nice_step((x1 - x0) / 5);
  for (double x = std::ceil(x0 / x_step) * x_step; x <= x1; x += x_step) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", px(x),
                       kHeight - kBottom + 16, format_memory(x));
  }
  const double y_step = detail::nice_step((y1 - y0) / 5);
  for (double y = std::ceil(y0 / y_step) * y_step; y <= y1; y += y_step) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6,
                       py(y) + 4, format_duration(static_cast<TimeNs>(std::llround(y))));
  }
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">peak memory (static + "
      "activations, largest device)</text>\n<text x=\"14\" y=\"{:.1f}\" "
      "text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1f})\">step time</text>\n",
      kLeft + (kWidth - kLeft - kRight) / 2, kHeight - 16, kTop + (kHeight - kTop - kBottom) / 2,
      kTop + (kHeight - kTop - kBottom) / 2);
  std::string path;
  for (std::size_t i = 0; i < front.size(); ++i) {
    path += fmt::format("{}{:.1f},{:.1f}", i == 0 ? "M" : " L", px(front[i].peak_memory),
                        py(double(front[i].step)));
  }
  if (!path.empty()) {
    svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"#1f77b4\"/>\n", path);
  }
  for (std::size_t i = 0; i < front.size(); ++i) {
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"#1f77b4\"><title>Pareto {}: "
        "{}</title></circle>\n",
        px(front[i].peak_memory), py(double(front[i].step)), i + 1,
        escape_html(front[i].description));
  }
  for (std::size_t i = 0; i < best.size(); ++i) {
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"7\" fill=\"none\" stroke=\"#d62728\">"
        "<title>best {}: {}</title></circle>\n",
        px(best[i].peak_memory), py(double(best[i].step)), i + 1, escape_html(best[i].description));
  }
  return svg + "</svg>\n";
}

}  // namespace perflow::visualizer
