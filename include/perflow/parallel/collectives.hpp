#pragma once

#include <cstdint>

#include "perflow/core/time.hpp"

namespace perflow::parallel {

/// The time of a ring all-reduce of `bytes` over `ranks` ranks whose links each have
/// `latency` and `bandwidth` (bytes/s; 0 means unlimited):
///
///   2 (n - 1) latency + ceil(2 (n - 1) / n * bytes / bandwidth)
///
/// a reduce-scatter then an all-gather, each n - 1 steps moving bytes / n per rank per step
/// (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
/// workstations", JPDC 2009; Thakur, Rabenseifner and Gropp, "Optimization of collective
/// communication operations in MPICH", IJHPCA 2005). One rank, or no bytes and no latency:
/// 0. Throws ScheduleError beyond 1e18 ns.
TimeNs ring_all_reduce_time(double bytes, std::uint32_t ranks, TimeNs latency, double bandwidth);

}  // namespace perflow::parallel
