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

/// The time of a ring reduce-scatter of `bytes` (each rank keeps the reduced bytes / n):
/// the first half of the ring all-reduce, (n - 1) latency + ceil((n - 1) / n * bytes /
/// bandwidth). Same sources and limits as ring_all_reduce_time.
TimeNs ring_reduce_scatter_time(double bytes, std::uint32_t ranks, TimeNs latency,
                                double bandwidth);

/// The time of a ring all-gather that leaves `bytes` on every rank (bytes / n from each): the
/// second half of the ring all-reduce, the same time as ring_reduce_scatter_time.
TimeNs ring_all_gather_time(double bytes, std::uint32_t ranks, TimeNs latency, double bandwidth);

/// One link class: latency per step (or transfer) and bandwidth (bytes/s; 0 means
/// unlimited, latency only).
struct LinkCost {
  TimeNs latency = 0;
  double bandwidth = 0;
};

/// The time of a pairwise-exchange all-to-all in which each of `ranks` ranks sends `bytes`
/// in all (its own share, bytes / n, stays local), the ranks `gpus_per_node` to a node:
///
///   within a node (n <= G):  (n - 1) a_intra + ceil((n - 1) / n * bytes / B_intra)
///   across nodes:            (n - 1) a_inter + max(ceil((n - G) / n * bytes / B_inter),
///                                                  ceil((G - 1) / n * bytes / B_intra))
///
/// n - 1 steps, one per peer (MPICH's long-message all-to-all; Thakur, Rabenseifner and
/// Gropp, IJHPCA 2005; nccl-tests scores all-to-all the same way). Across nodes the share
/// for other nodes crosses the inter-node link while the node's own share crosses the
/// intra-node one at the same time, as DeepSeek-V3's dispatch overlaps its InfiniBand and
/// NVLink traffic (report section 3.2.2). One rank, or no bytes and no latency: 0. Throws
/// ScheduleError beyond 1e18 ns.
TimeNs pairwise_all_to_all_time(double bytes, std::uint32_t ranks, std::uint32_t gpus_per_node,
                                const LinkCost& intra, const LinkCost& inter);

}  // namespace perflow::parallel
