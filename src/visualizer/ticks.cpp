// The one "nice 1-2-5 ticks" routine (detail/ticks.hpp).
#include "detail/ticks.hpp"

#include <cmath>
#include <initializer_list>

namespace perflow::visualizer::detail {

double nice_step(double raw, double at_least, double at_most) {
  if (at_least > 0 && raw <= at_least) return at_least;
  if (at_most > 0 && raw > at_most) return at_most;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (magnitude * m >= raw) return magnitude * m;
  }
  return magnitude * 10;
}

}  // namespace perflow::visualizer::detail
