#include "perflow/parallel/collectives.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::parallel {

namespace {

// `phases` ring passes of n - 1 steps, each step moving bytes / n per rank.
TimeNs ring_time(double bytes, std::uint32_t ranks, TimeNs latency, double bandwidth, double phases,
                 const char* what) {
  if (ranks <= 1) return 0;
  const double steps = phases * (ranks - 1);
  double ns = steps * static_cast<double>(latency);
  if (bytes > 0 && bandwidth > 0) {
    // Divide last so that exact cases (bytes a multiple of ranks) stay exact.
    ns += std::ceil(steps * bytes * 1e9 / (static_cast<double>(ranks) * bandwidth));
  }
  if (!(ns <= 1e18)) {
    throw ScheduleError(fmt::format(
        "{} of {} bytes over {} ranks ({} ns latency, {} bytes/s) would take longer than 1e18 ns",
        what, bytes, ranks, latency, bandwidth));
  }
  return static_cast<TimeNs>(ns);
}

}  // namespace

TimeNs ring_all_reduce_time(double bytes, std::uint32_t ranks, TimeNs latency, double bandwidth) {
  return ring_time(bytes, ranks, latency, bandwidth, 2.0, "an all-reduce");
}

TimeNs ring_reduce_scatter_time(double bytes, std::uint32_t ranks, TimeNs latency,
                                double bandwidth) {
  return ring_time(bytes, ranks, latency, bandwidth, 1.0, "a reduce-scatter");
}

TimeNs ring_all_gather_time(double bytes, std::uint32_t ranks, TimeNs latency, double bandwidth) {
  return ring_time(bytes, ranks, latency, bandwidth, 1.0, "an all-gather");
}

TimeNs pairwise_all_to_all_time(double bytes, std::uint32_t ranks, std::uint32_t gpus_per_node,
                                const LinkCost& intra, const LinkCost& inter) {
  if (ranks <= 1) return 0;
  const double n = ranks;
  const double g = std::max<std::uint32_t>(gpus_per_node, 1);
  const bool across = ranks > gpus_per_node;
  // Bytes over one link class: divide last so that exact cases stay exact.
  const auto over = [&](double peers, const LinkCost& link) {
    if (bytes <= 0 || link.bandwidth <= 0 || peers <= 0) return 0.0;
    return std::ceil(peers * bytes * 1e9 / (n * link.bandwidth));
  };
  double ns = (n - 1) * static_cast<double>(across ? inter.latency : intra.latency);
  ns += across ? std::max(over(n - g, inter), over(g - 1, intra)) : over(n - 1, intra);
  if (!(ns <= 1e18)) {
    throw ScheduleError(fmt::format(
        "an all-to-all of {} bytes over {} ranks would take longer than 1e18 ns", bytes, ranks));
  }
  return static_cast<TimeNs>(ns);
}

}  // namespace perflow::parallel
