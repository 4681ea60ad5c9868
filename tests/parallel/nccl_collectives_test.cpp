#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/parallel/nccl_collectives.hpp"

namespace perflow::parallel {
namespace {

constexpr double kGB = 1e9;

NcclNetwork dgx_a100() {
  NcclNetwork n;
  n.intra = {0, 300 * kGB};  // NVLink 3: 12 links of 25 GB/s a direction
  n.inter = {0, 25 * kGB};   // one 200 Gb/s HDR NIC a GPU
  n.generation = GpuGeneration::Ampere;
  return n;
}

TEST(NcclCollectives, SmallAllReduceInOneNodeRunsRingLL) {
  // 1 MiB over 8 A100s. NCCL reaches 20 of each 25 GB/s NVLink: bus 240 GB/s.
  //   ring LL:     6.6 + 14 x 0.6 = 15.0 us; bus min(87.7, 240 / 2) = 87.7, algorithm
  //                87.7 x 8 / 14 GB/s: 1048576 / 50114.29 = 20.924 us -> 35.924 us
  //   ring LL128:  14 + 14 x 1.9 = 40.6 us + 1048576 / (220.8 x 8 / 14 x 1e3) = 48.9 us
  //   ring Simple: 8.4 + 14 x 3.4 = 56 us + 7.6 us
  //   tree LL:     6.8 + 2 x 7 x 0.6 = 15.2 us, bus 240 x .92 / 3.8 / 2 x .5 (the correction
  //                at 2^14 x 64 B): 72 us
  const CollectiveChoice c = nccl_collective_time(Collective::AllReduce, 1 << 20, 8, dgx_a100());
  EXPECT_EQ(c.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_EQ(c.protocol, CollectiveProtocol::LL);
  EXPECT_EQ(c.time, 35924);
  // The per-call overhead adds once.
  NcclNetwork slow = dgx_a100();
  slow.overhead = 20'000;
  EXPECT_EQ(nccl_collective_time(Collective::AllReduce, 1 << 20, 8, slow).time, 55924);
}

TEST(NcclCollectives, LargeAllReduceAcrossTwoNodesRunsRingSimpleOverTheNodesNics) {
  // 256 MiB over 16 A100s, 8 a node. The ring crosses a node boundary through each of the
  // node's 8 NICs (24 GB/s of 25 each): bus min(240, 8 x 24) = 192 GB/s.
  //   ring Simple: (8.4 + 28 x 3.4 + 2 x 14) x 1.4 = 184.24 us; algorithm 192 x 16 / 30 =
  //                102.4 GB/s: 2621.44 us -> 2805.68 us
  //   ring LL128:  14 + 28 x 1.9 + 2 x 4 = 75.2 us + 268435456 / 94208 = 2924.6 us
  //   tree Simple: 8.4 + 2 (7 x 4 + 14) = 92.4 us; 192 x .92 / 2 x .9 = 79.49 GB/s: 3469 us
  NcclNetwork net = dgx_a100();
  net.ranks_per_node = 8;
  const CollectiveChoice c =
      nccl_collective_time(Collective::AllReduce, 256.0 * (1 << 20), 16, net);
  EXPECT_EQ(c.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_EQ(c.protocol, CollectiveProtocol::Simple);
  EXPECT_EQ(c.time, 2805680);
}

TEST(NcclCollectives, ReduceScatterTakesHalfTheStepsOfAnAllReduce) {
  // 64 MiB over 8 A100s: ring Simple 8.4 + 7 x 3.4 = 32.2 us; algorithm 240 x 8 / 7 GB/s:
  // 67108864 / 274285.7 = 244.668 us -> 276.868 us (LL128: 14 + 13.3 + 265.9 us).
  const CollectiveChoice rs =
      nccl_collective_time(Collective::ReduceScatter, 64.0 * (1 << 20), 8, dgx_a100());
  EXPECT_EQ(rs.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_EQ(rs.protocol, CollectiveProtocol::Simple);
  EXPECT_EQ(rs.time, 276868);
  EXPECT_EQ(nccl_collective_time(Collective::AllGather, 64.0 * (1 << 20), 8, dgx_a100()).time,
            rs.time);
}

TEST(NcclCollectives, NvlsReducesInTheSwitchOnHopper) {
  // 256 MiB over 8 H100s with NVLink SHARP: 25 us + 268435456 / (450 x 0.61 x 1e3) = 977.9 us
  // -> 1002.9 us; the Simple ring (370.8 GB/s bus) takes 8.4 + 47.6 + 1265.2 us.
  NcclNetwork h100;
  h100.intra = {0, 450 * kGB};
  h100.generation = GpuGeneration::Hopper;
  h100.nvls = true;
  const double bytes = 256.0 * (1 << 20);
  const CollectiveChoice c = nccl_collective_time(Collective::AllReduce, bytes, 8, h100);
  EXPECT_EQ(c.algorithm, CollectiveAlgorithm::Nvls);
  EXPECT_EQ(c.time, static_cast<TimeNs>(std::round((25 + bytes / (450 * 0.61 * 1e3)) * 1e3)));
  // No switch reduction: the ring.
  h100.nvls = false;
  EXPECT_EQ(nccl_collective_time(Collective::AllReduce, bytes, 8, h100).algorithm,
            CollectiveAlgorithm::Ring);
}

TEST(NcclCollectives, ManyNodesPreferTheTreeForSmallAllReduces) {
  // 64 KiB over 64 nodes of one rank each (tensor parallelism 8 leaves one data-parallel rank
  // a node): the ring's 126 network steps cost far more than the tree's 2 log2(64) = 12.
  NcclNetwork net = dgx_a100();
  net.ranks_per_node = 1;
  const CollectiveChoice c = nccl_collective_time(Collective::AllReduce, 64 << 10, 64, net);
  EXPECT_EQ(c.algorithm, CollectiveAlgorithm::Tree);
  // Tree LL: 6.8 + 2 x 6 x 5.0 = 66.8 us; bus min(24 x .92 / 3.8, 20.4) x .5 x .6 (the
  // correction at 2^10 x 64 B): 65536 / 2033.7 = 32.2 us.
  EXPECT_EQ(c.protocol, CollectiveProtocol::LL);
  EXPECT_EQ(c.time, static_cast<TimeNs>(
                        std::round((66.8 + 65536 / (1e3 * (24 * 0.92 / 3.8) * 0.5 * 0.6)) * 1e3)));
}

TEST(NcclCollectives, OneRankAndUnlimitedLinks) {
  EXPECT_EQ(nccl_collective_time(Collective::AllReduce, 1e9, 1, dgx_a100()).time, 0);
  NcclNetwork unlimited;  // latency only: ring LL's 6.6 + 2 x 0.6 us for two ranks
  const CollectiveChoice c = nccl_collective_time(Collective::AllReduce, 0, 2, unlimited);
  EXPECT_EQ(c.time, 7800);
  EXPECT_EQ(c.protocol, CollectiveProtocol::LL);
}

TEST(NcclCollectives, AllToAllMovesAtWhatNcclReachesOfTheLinksPlusTheCallOverhead) {
  // 8 MiB sent per rank among 8 A100s of a node: 7 / 8 of it over NVLink at 240 of 300 GB/s,
  // ceil(7 x 8388608 / 8 / 240e9 s) = 30584 ns, plus the 20 us call overhead.
  NcclNetwork net = dgx_a100();
  net.overhead = 20'000;
  EXPECT_EQ(nccl_all_to_all_time(8.0 * (1 << 20), 8, net), 50584);
  // Across 2 nodes (8 ranks each): the other node's half crosses the NIC at 24 of 25 GB/s,
  // ceil(8 / 16 x 8388608 / 24e9 s) = 174763 ns, while the node's own share crosses NVLink.
  net.ranks_per_node = 8;
  EXPECT_EQ(nccl_all_to_all_time(8.0 * (1 << 20), 16, net), 194763);
  EXPECT_EQ(nccl_all_to_all_time(1e9, 1, net), 0);
}

// Published nccl-tests all_reduce_perf sweeps (8 GPUs of one node, NCCL 2.18.5, out of
// place): Azure/AI-benchmarking-guide, Azure_Results/ND_A100_v4_results.md and
// ND_H100_v5_results.md at 8fd0c6e1. Bus bandwidth in GB/s; time = bytes x 2 (n - 1) / n / bus.
struct Measured {
  double bytes;
  double bus_gbps;
};

double time_us(const Measured& m) { return m.bytes * 14.0 / 8.0 / (m.bus_gbps * 1e3); }

// Each point within `each`, and on average within `mean`, of the measurement.
void expect_close(const std::vector<Measured>& sweep, const NcclNetwork& net, double each,
                  double mean) {
  double sum = 0;
  for (const Measured& m : sweep) {
    const double predicted =
        static_cast<double>(nccl_collective_time(Collective::AllReduce, m.bytes, 8, net).time) /
        1e3;
    const double error = predicted / time_us(m) - 1;
    EXPECT_LT(std::abs(error), each)
        << m.bytes << " B: predicted " << predicted << " us, measured " << time_us(m) << " us";
    sum += std::abs(error);
  }
  EXPECT_LT(sum / static_cast<double>(sweep.size()), mean);
}

TEST(NcclCollectives, FollowsPublishedSweepsOnEightA100s) {
  const std::vector<Measured> a100 = {
      {8192, 0.33},        {65536, 2.70},        {1 << 20, 36.22},
      {2 << 20, 53.54},    {4 << 20, 71.43},     {16 << 20, 109.22},
      {268435456, 213.87}, {1073741824, 228.10}, {8589934592, 231.58}};
  NcclNetwork net = dgx_a100();
  net.overhead = 20'000;
  expect_close(a100, net, 0.30, 0.12);
}

TEST(NcclCollectives, FollowsPublishedSweepsOnEightH100s) {
  const std::vector<Measured> h100 = {
      {8192, 0.53},       {16384, 0.95},       {32768, 1.71},        {65536, 2.72},
      {1 << 20, 43.70},   {2 << 20, 81.93},    {4 << 20, 128.73},    {16 << 20, 234.45},
      {64 << 20, 361.78}, {268435456, 423.38}, {1073741824, 466.35}, {8589934592, 478.87}};
  NcclNetwork net;
  net.intra = {0, 450 * kGB};
  net.generation = GpuGeneration::Hopper;
  net.nvls = true;
  net.overhead = 20'000;
  expect_close(h100, net, 0.30, 0.12);
}

}  // namespace
}  // namespace perflow::parallel
