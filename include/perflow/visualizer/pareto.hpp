#pragma once

#include <span>
#include <string>
#include <string_view>

#include "perflow/core/time.hpp"

namespace perflow::visualizer {

/// A plan on the search page's Pareto chart: its peak memory (bytes), its step time and
/// what its tooltip names (the plan's description).
struct ParetoPoint {
  double peak_memory = 0;
  TimeNs step = 0;
  std::string description;
};

/// Step time against peak memory as inline SVG (`perflow search --html`): the Pareto front
/// joined as a staircase of dots, the best plans as rings; axes ticked at 1, 2 or
/// 5 x 10^k. Deterministic; at least one point.
std::string render_pareto_svg(std::span<const ParetoPoint> front,
                              std::span<const ParetoPoint> best);

/// `text` with &, <, > and " escaped, for HTML and SVG text and attributes.
std::string escape_html(std::string_view text);

}  // namespace perflow::visualizer
