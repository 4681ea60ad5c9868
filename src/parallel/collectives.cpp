#include "perflow/parallel/collectives.hpp"

#include <cmath>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::parallel {

TimeNs ring_all_reduce_time(double bytes, std::uint32_t ranks, TimeNs latency, double bandwidth) {
  if (ranks <= 1) return 0;
  const double steps = 2.0 * (ranks - 1);
  double ns = steps * static_cast<double>(latency);
  if (bytes > 0 && bandwidth > 0) {
    // Divide last so that exact cases (bytes a multiple of ranks) stay exact.
    ns += std::ceil(steps * bytes * 1e9 / (static_cast<double>(ranks) * bandwidth));
  }
  if (!(ns <= 1e18)) {
    throw ScheduleError(fmt::format(
        "an all-reduce of {} bytes over {} ranks ({} ns latency, {} bytes/s) would take longer "
        "than 1e18 ns",
        bytes, ranks, latency, bandwidth));
  }
  return static_cast<TimeNs>(ns);
}

}  // namespace perflow::parallel
