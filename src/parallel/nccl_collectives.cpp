#include "perflow/parallel/nccl_collectives.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

// NCCL's tuner constants, from src/graph/tuning.cc and src/graph/topo.h of NVIDIA/nccl at
// 5067397c (NCCL 2.30): latencies in microseconds, bandwidths in GB/s. Indices follow NCCL's:
// protocols LL, LL128, Simple; algorithms Tree, Ring.
namespace perflow::parallel {
namespace {

constexpr std::size_t kLL = 0;
constexpr std::size_t kLL128 = 1;
constexpr std::size_t kSimple = 2;
using PerProtocol = std::array<double, 3>;

// baseLatencies: a call's fixed latency per algorithm.
constexpr PerProtocol kTreeBase = {6.8, 14.0, 8.4};
constexpr PerProtocol kRingBase = {6.6, 14.0, 8.4};

// hwLatencies: each step's latency by the hop it crosses.
struct HopLatencies {
  PerProtocol tree;
  PerProtocol ring;
};
constexpr HopLatencies kNvLinkHop = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}};
constexpr HopLatencies kPciHop = {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}};
constexpr HopLatencies kNetHop = {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}};
constexpr double kNvlsLatency = 25.0;  // NVLINK, NVLS, Simple
// getNetOverhead on x86 Intel: each step of a ring that leaves the node pays at least this
// (three times with Simple).
constexpr double kNetOverhead = 1.0;

// llMaxBws: LL's bus bandwidth cap, within one node by GPU generation, across nodes by node
// count (the Intel-CPU row: two nodes, more).
constexpr std::array<double, 4> kLLMaxOneNode = {39.0, 87.7, 141.0, 282.0};
constexpr double kLLMaxTwoNodes = 39.0;
constexpr double kLLMaxMoreNodes = 20.4;

// treeCorrectionFactor: trees fall short of their model at medium sizes; per protocol, by
// log2(bytes / 64) from 0 (64 B) to 23 (512 MB).
// clang-format off
constexpr std::array<std::array<double, 24>, 3> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0,  .9,  .8,  .7,  .7,  .7,  .7,  .6,  .5,  .4,  .4,  .5,  .6,  .7,  .8,  .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0,  .9,  .8,  .8,  .8,  .7,  .6,  .6,  .6,  .6,  .6,  .6,  .8,  .9,  .9,  .9,  .9, 1.0, 1.0, 1.0},
    { .9,  .9,  .9,  .9,  .9,  .9,  .9,  .8,  .7,  .6,  .6,  .5,  .5,  .5,  .5,  .6,  .7,  .8,  .7,  .7,  .8,  .9,  .9,  .9},
}};
// clang-format on

// NVLS all-reduce: each GPU sends its buffer to the switch, which reduces it, and receives the
// result by multicast. nccl-tests peaks at bus bandwidth ~480 GB/s, algorithm bandwidth
// ~275 GB/s, on 8 H100s (S. Jeaugey, NVIDIA, NVIDIA/nccl-tests issue 212), 0.61 of a 450 GB/s
// link; Blackwell at NCCL's nvlsEfficiency ratio to Hopper, 0.74 / 0.85.
double nvls_fraction(GpuGeneration generation) {
  return generation == GpuGeneration::Blackwell ? 0.61 * 0.74 / 0.85 : 0.61;
}

constexpr double kUnlimited = std::numeric_limits<double>::infinity();

// A link's bandwidth in GB/s (unlimited for 0) at `fraction`.
double gbps(double bandwidth, double fraction) {
  return bandwidth > 0 ? bandwidth * fraction / 1e9 : kUnlimited;
}

double log2_floor(std::uint32_t x) { return std::bit_width(x) - 1.0; }

struct Candidate {
  CollectiveAlgorithm algorithm;
  CollectiveProtocol protocol;
  double latency_us;
  double algorithm_gbps;  // bytes / (1000 x this) microseconds
};

}  // namespace

std::uint32_t ranks_in_a_node(const NcclNetwork& network, std::uint32_t ranks) {
  return network.ranks_per_node == 0 ? ranks : std::min(network.ranks_per_node, ranks);
}

// What NCCL reaches of a raw link (topo.h's per-channel bandwidth over the link it stands
// for): an NVLink 3/4 link of 25 GB/s counts 20 (Ampere) or 20.6 (Hopper), an NVLink 5 link of
// 50 GB/s 40.1, PCIe Gen3 x16 (16 GB/s) 12, a 100 Gb/s NIC (12.5 GB/s) 12.

double nccl_link_fraction(ScaleUp link, GpuGeneration generation) {
  if (link == ScaleUp::Pcie) return 12.0 / 16.0;
  switch (generation) {
    case GpuGeneration::Hopper:
      return 20.6 / 25.0;
    case GpuGeneration::Blackwell:
      return 40.1 / 50.0;
    case GpuGeneration::Volta:
    case GpuGeneration::Ampere:
      break;
  }
  return 20.0 / 25.0;
}

std::string_view to_string(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::Tree:
      return "tree";
    case CollectiveAlgorithm::Nvls:
      return "nvls";
    case CollectiveAlgorithm::Ring:
      break;
  }
  return "ring";
}

std::string_view to_string(CollectiveProtocol protocol) {
  switch (protocol) {
    case CollectiveProtocol::LL:
      return "LL";
    case CollectiveProtocol::LL128:
      return "LL128";
    case CollectiveProtocol::Simple:
      break;
  }
  return "Simple";
}

std::string_view to_string(Collective collective) {
  switch (collective) {
    case Collective::ReduceScatter:
      return "reduce-scatter";
    case Collective::AllGather:
      return "all-gather";
    case Collective::AllReduce:
      break;
  }
  return "all-reduce";
}

CollectiveChoice nccl_collective_time(Collective collective, double bytes, std::uint32_t ranks,
                                      const NcclNetwork& network) {
  if (ranks <= 1) return {};
  const bool all_reduce = collective == Collective::AllReduce;
  const std::uint32_t ppn = ranks_in_a_node(network, ranks);
  const std::uint32_t nodes = (ranks + ppn - 1) / ppn;
  const double n = ranks;
  const double steps = all_reduce ? 2.0 * (n - 1) : n - 1;
  const double inter_steps = nodes == 1 ? 0.0 : all_reduce ? 2.0 * (nodes - 1) : nodes - 1.0;
  const auto generation = static_cast<std::size_t>(network.generation);
  const HopLatencies& intra_hop = network.scale_up == ScaleUp::Pcie ? kPciHop : kNvLinkHop;
  const double extra_intra = static_cast<double>(network.intra.latency) / 1e3;
  const double extra_inter = static_cast<double>(network.inter.latency) / 1e3;

  // The ring's bus bandwidth: its slowest hop. Across nodes each channel leaves a node through
  // its own NIC, so the group's NICs in a node carry the ring together.
  const double scale_up =
      gbps(network.intra.bandwidth, nccl_link_fraction(network.scale_up, network.generation));
  const double bus =
      nodes == 1 ? scale_up
                 : std::min(scale_up, ppn * gbps(network.inter.bandwidth, kNcclNetFraction));
  const double ll_max = nodes == 1   ? kLLMaxOneNode[generation]
                        : nodes == 2 ? kLLMaxTwoNodes
                                     : kLLMaxMoreNodes;

  std::array<Candidate, 7> candidates{};
  std::size_t count = 0;
  constexpr std::array kProtocols = {CollectiveProtocol::LL, CollectiveProtocol::LL128,
                                     CollectiveProtocol::Simple};
  for (std::size_t p = 0; p < 3; ++p) {
    // Ring.
    double intra_lat = intra_hop.ring[p] + extra_intra;
    // With one rank a node every hop is a network hop, priced as the tree's.
    double inter_lat = (ppn == 1 ? kNetHop.tree[p] : kNetHop.ring[p]) + extra_inter;
    if (nodes > 1) intra_lat = std::max(intra_lat, kNetOverhead * (p == kSimple ? 3 : 1));
    double latency = kRingBase[p] + (steps - inter_steps) * intra_lat + inter_steps * inter_lat;
    // tuning.cc's "plateau effect of ring" across nodes.
    if (p == kSimple && nodes > 1 && all_reduce) {
      latency *= network.generation == GpuGeneration::Volta ? 1.9 : 1.4;
    }
    double ring_bus = p == kLL ? std::min(ll_max, bus * 0.5) : p == kLL128 ? bus * 0.92 : bus;
    candidates[count++] = {CollectiveAlgorithm::Ring, kProtocols[p], latency, ring_bus * n / steps};
    // Tree all-reduce: a chain within each node, a tree across nodes; half the bus
    // bandwidth each way.
    if (all_reduce) {
      const double tree_intra = intra_hop.tree[p] + extra_intra;
      const double tree_inter = kNetHop.tree[p] + extra_inter;
      const double tree_latency =
          kTreeBase[p] + 2 * ((ppn - 1.0) * tree_intra + log2_floor(nodes) * tree_inter);
      double tree_bus = bus * 0.92;
      if (p == kLL) tree_bus = std::min(tree_bus / 3.8, ll_max);
      if (p == kLL128) tree_bus *= nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
      candidates[count++] = {CollectiveAlgorithm::Tree, kProtocols[p], tree_latency,
                             tree_bus * 0.5};
    }
  }
  if (all_reduce && network.nvls && nodes == 1 && network.scale_up == ScaleUp::NvLink) {
    candidates[count++] = {CollectiveAlgorithm::Nvls, CollectiveProtocol::Simple,
                           kNvlsLatency + extra_intra,
                           gbps(network.intra.bandwidth, nvls_fraction(network.generation))};
  }

  // The tree's correction by size (bytes / 64 B as a power of two).
  const double chunks = bytes / 64;
  const int log_size = chunks >= 1 ? static_cast<int>(std::floor(std::log2(chunks))) : -1;
  double best = kUnlimited;
  CollectiveChoice choice;
  for (std::size_t i = 0; i < count; ++i) {
    const Candidate& c = candidates[i];
    double bw = c.algorithm_gbps;
    if (c.algorithm == CollectiveAlgorithm::Tree && log_size >= 0 && log_size < 23) {
      bw *=
          kTreeCorrection[static_cast<std::size_t>(c.protocol)][static_cast<std::size_t>(log_size)];
    }
    const double us = c.latency_us + (bytes > 0 ? bytes / (1e3 * bw) : 0.0);
    if (us < best) {
      best = us;
      choice.algorithm = c.algorithm;
      choice.protocol = c.protocol;
    }
  }
  // To the nearest nanosecond: the constants are decimal, so exact cases are not exact.
  const double ns = std::round(best * 1e3) + static_cast<double>(network.overhead);
  if (!(ns <= 1e18)) {
    throw ScheduleError(
        fmt::format("an NCCL {} of {} bytes over {} ranks would take longer "
                    "than 1e18 ns",
                    to_string(collective), bytes, ranks));
  }
  choice.time = static_cast<TimeNs>(ns);
  return choice;
}

TimeNs collective_time(Collective collective, double bytes, std::uint32_t ranks,
                       const LinkCost& ring, const std::optional<NcclNetwork>& nccl) {
  if (nccl) return nccl_collective_time(collective, bytes, ranks, *nccl).time;
  switch (collective) {
    case Collective::AllReduce:
      return ring_all_reduce_time(bytes, ranks, ring.latency, ring.bandwidth);
    case Collective::ReduceScatter:
      return ring_reduce_scatter_time(bytes, ranks, ring.latency, ring.bandwidth);
    case Collective::AllGather:
      break;
  }
  return ring_all_gather_time(bytes, ranks, ring.latency, ring.bandwidth);
}

TimeNs nccl_all_to_all_time(double bytes, std::uint32_t ranks, const NcclNetwork& network) {
  if (ranks <= 1) return 0;
  const auto scaled = [](const LinkCost& link, double fraction) {
    return LinkCost{link.latency, link.bandwidth * fraction};
  };
  const std::uint32_t ppn = ranks_in_a_node(network, ranks);
  const TimeNs time = pairwise_all_to_all_time(
      bytes, ranks, ppn,
      scaled(network.intra, nccl_link_fraction(network.scale_up, network.generation)),
      scaled(network.inter, kNcclNetFraction));
  if (static_cast<double>(time) + static_cast<double>(network.overhead) > 1e18) {
    throw ScheduleError(fmt::format(
        "an all-to-all of {} bytes over {} ranks would take longer than 1e18 ns", bytes, ranks));
  }
  return time + network.overhead;
}

}  // namespace perflow::parallel
