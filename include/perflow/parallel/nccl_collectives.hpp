#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "perflow/core/hardware.hpp"
#include "perflow/core/time.hpp"
#include "perflow/parallel/collectives.hpp"

namespace perflow::parallel {

/// A collective NCCL runs among the ranks of a group.
enum class Collective : std::uint8_t { AllReduce, ReduceScatter, AllGather };

/// NCCL's algorithms and protocols, as the tuner names them.
enum class CollectiveAlgorithm : std::uint8_t { Ring, Tree, Nvls };
enum class CollectiveProtocol : std::uint8_t { LL, LL128, Simple };

std::string_view to_string(CollectiveAlgorithm algorithm);
std::string_view to_string(CollectiveProtocol protocol);
std::string_view to_string(Collective collective);

/// Where a group's collectives run, for nccl_collective_time. Bandwidths are the links' raw
/// rates per direction (bytes/s; 0 means unlimited), latencies an extra per-step latency
/// beyond NCCL's own.
struct NcclNetwork {
  LinkCost intra;  ///< the scale-up link between GPUs of a node
  LinkCost inter;  ///< each GPU's NIC
  ScaleUp scale_up = ScaleUp::NvLink;
  GpuGeneration generation = GpuGeneration::Ampere;
  bool nvls = false;  ///< the node's switch reduces in-network (NVLink SHARP)
  /// The group's ranks that share a node; 0 (or at least the group) puts it in one node.
  std::uint32_t ranks_per_node = 0;
  /// Fixed time of each call: launching the kernel and synchronizing the ranks, beyond what
  /// NCCL's tuner counts.
  TimeNs overhead = 0;
};

/// The fixed time of an NCCL call beyond what its tuner counts, for NcclNetwork::overhead:
/// nccl-tests all_reduce_perf on 8 A100s and on 8 H100s (Azure ND A100 v4 and ND H100 v5,
/// NCCL 2.18.5; Azure/AI-benchmarking-guide) takes 27-43 us for 8-64 KiB, where the tuner's
/// latencies come to 15-16 us: 20 us is the middle of that gap (docs/model.md).
inline constexpr TimeNs kNcclCallOverhead = 20'000;

/// Of a group of `ranks` on `network`, the ranks in one node: all of them unless
/// ranks_per_node says fewer.
std::uint32_t ranks_in_a_node(const NcclNetwork& network, std::uint32_t ranks);

/// What NCCL reaches of a raw scale-up link (its topology's per-channel bandwidth over the
/// link's rate): NVLink 20 of 25 GB/s a link (Ampere), 20.6 (Hopper), 40.1 of 50 (Blackwell);
/// PCIe 12 of 16.
double nccl_link_fraction(ScaleUp link, GpuGeneration generation);
/// What NCCL reaches of a NIC: 12 of 12.5 GB/s.
inline constexpr double kNcclNetFraction = 12.0 / 12.5;

/// A collective's time and the algorithm and protocol that give it.
struct CollectiveChoice {
  TimeNs time = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  CollectiveProtocol protocol = CollectiveProtocol::Simple;
};

/// The time of `collective` of `bytes` (the whole buffer: an all-reduce's input, a
/// reduce-scatter's input, an all-gather's output) among `ranks` ranks, as NCCL prices it to
/// choose an algorithm and protocol (src/graph/tuning.cc, NVIDIA/nccl at 5067397c): each
/// candidate takes latency + bytes / algorithm bandwidth, and the fastest is chosen.
///
///  - Ring (each collective), with LL, LL128 and Simple: latency base + s_intra hop_intra +
///    s_inter hop_inter over the s = 2 (n - 1) (all-reduce) or n - 1 steps, s_inter of them
///    crossing nodes; bus bandwidth the ring's slowest hop: within a node the scale-up link at
///    NCCL's achievable fraction, across nodes also the group's NICs in a node together
///    (each channel crosses a node boundary through its own NIC); LL moves half of it (capped),
///    LL128 0.92 of it; algorithm bandwidth bus x n / s.
///  - Tree (all-reduce): latency base + 2 ((ppn - 1) hop_intra + log2(nodes) hop_inter),
///    half the bus bandwidth.
///  - NVLS (all-reduce within one node of a `nvls` switch): the switch reduces; latency 25 us,
///    algorithm bandwidth 0.61 of the link on Hopper (nccl-tests' measured peak).
///
/// NCCL's constants in microseconds and GB/s; `overhead` is added to each. One rank: 0.
/// Throws ScheduleError beyond 1e18 ns.
CollectiveChoice nccl_collective_time(Collective collective, double bytes, std::uint32_t ranks,
                                      const NcclNetwork& network);

/// `collective` of `bytes` among `ranks` ranks as a group prices it: NCCL's choice over
/// `nccl` when it is given, else one ring over `ring` (ring_all_reduce_time,
/// ring_reduce_scatter_time, ring_all_gather_time).
TimeNs collective_time(Collective collective, double bytes, std::uint32_t ranks,
                       const LinkCost& ring, const std::optional<NcclNetwork>& nccl);

/// An all-to-all of `bytes` sent per rank among `ranks` ranks, `network.ranks_per_node` to a
/// node, as NCCL runs it (a send and a receive with every peer at once, the Simple protocol
/// of its point-to-point operations): pairwise_all_to_all_time over the links at what NCCL
/// reaches of them (as for the ring), plus the links' extra latencies per peer and `overhead`
/// once. One rank: 0.
TimeNs nccl_all_to_all_time(double bytes, std::uint32_t ranks, const NcclNetwork& network);

}  // namespace perflow::parallel
