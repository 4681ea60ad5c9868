#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "perflow/parallel/moe_dispatch.hpp"

namespace perflow::parallel {
namespace {

constexpr double kGB = 1e9;

NcclNetwork hgx(double nvlink, std::uint32_t ranks_per_node) {
  NcclNetwork n;
  n.intra = {0, nvlink};
  n.inter = {0, 50 * kGB};  // a 400 Gb/s NIC a GPU
  n.generation = GpuGeneration::Hopper;
  n.ranks_per_node = ranks_per_node;
  n.overhead = kNcclCallOverhead;
  return n;
}

MoeGroups expert_parallel(std::uint32_t ep, const NcclNetwork& network) {
  return {
      .expert_parallel = ep, .expert_network = network, .tensor_parallel = 1, .tensor_network = {}};
}

TEST(MoeDispatch, ExpectedUnitsHitIsTheHypergeometricMiss) {
  // One expert: one unit. Two of 8 experts over 2 units of 4: misses a unit with
  // 4/8 x 3/7 = 3/14, so 2 x 11/14 = 11/7.
  EXPECT_DOUBLE_EQ(expected_units_hit(8, 2, 1), 1.0);
  EXPECT_DOUBLE_EQ(expected_units_hit(8, 2, 2), 11.0 / 7.0);
  // Every expert taken: every unit hit; one unit: 1.
  EXPECT_DOUBLE_EQ(expected_units_hit(8, 4, 8), 4.0);
  EXPECT_DOUBLE_EQ(expected_units_hit(256, 1, 8), 1.0);
  // DeepSeek-V3's top 8 of 256 over 8 ranks: 8 (1 - C(224, 8) / C(256, 8)) = 5.29.
  EXPECT_NEAR(expected_units_hit(256, 8, 8), 5.2947, 1e-4);
}

TEST(MoeDispatch, GroupLimitedRoutingReachesFewerUnits) {
  // Ranks inside groups: 32 experts in 8 groups of 4, a token's 8 from 4 groups (16 experts):
  // a rank of 4 experts (one group) is picked with 1/2, then hit unless all 8 land in the
  // other 12: 8 x 1/2 x (1 - C(12, 8) / C(16, 8)) = 4 x (1 - 495 / 12870) = 50/13.
  EXPECT_NEAR(expected_units_hit(32, 8, 8, 8, 4), 50.0 / 13.0, 1e-12);
  EXPECT_LT(expected_units_hit(32, 8, 8, 8, 4), expected_units_hit(32, 8, 8));
  // Units of whole groups: 8 experts in 4 groups of 2, 2 groups picked, 2 experts of their 4;
  // a unit of 2 groups misses when none of its groups is picked (1/6) or one is and both
  // experts fall in the other (4/6 x 1/6): 2 x (1 - 5/18) = 13/9.
  EXPECT_NEAR(expected_units_hit(8, 2, 2, 4, 2), 13.0 / 9.0, 1e-12);
  // DeepSeek-V3 at EP 64 over 8 nodes: at most 4 nodes a token, 3.63 on average.
  EXPECT_NEAR(expected_units_hit(256, 8, 8, 8, 4), 3.6290, 1e-4);
  EXPECT_LE(expected_units_hit(256, 8, 8, 8, 4), 4.0);
  // Thousands of groups stay finite (the hypergeometric weights in log space).
  const double many = expected_units_hit(4096, 16, 8, 2048, 1024);
  EXPECT_TRUE(std::isfinite(many));
  EXPECT_GT(many, 1.0);
  EXPECT_LE(many, 8.0);
}

TEST(MoeDispatch, AllToAllSendsARowPerTokenAndExpertThenTheProbabilities) {
  // 4096 tokens of h 4096, top 2 of 8 experts, EP 8 in one H100 node (NCCL reaches 20.6 of
  // each 25 GB/s: 370.8 GB/s). Rows 8192, 67108864 bytes; a rank's 7/8 leave it:
  //   tokens: 58720256 / 370.8 GB/s = 158361 ns, + 20 us
  //   probs:  8192 x 4 x 7/8 = 28672 B: 78 ns, + 20 us
  // The combine sends the rows back: 178361 ns.
  const MoeRouting routing{.tokens = 4096, .hidden = 4096, .top_k = 2, .experts = 8, .layers = 1};
  const MoeDispatchCost c =
      moe_dispatch_cost(MoeDispatcher::AllToAll, routing, expert_parallel(8, hgx(450 * kGB, 8)));
  EXPECT_EQ(c.dispatch, 158361 + 20000 + 78 + 20000);
  EXPECT_EQ(c.combine, 178361);
  EXPECT_DOUBLE_EQ(c.network_bytes, 67108864.0);
  // The busiest rank at 1.5 x its share moves 1.5 x the rows.
  MoeRouting skewed = routing;
  skewed.load = 1.5;
  EXPECT_EQ(
      moe_dispatch_cost(MoeDispatcher::AllToAll, skewed, expert_parallel(8, hgx(450 * kGB, 8)))
          .combine,
      20000 + static_cast<TimeNs>(std::ceil(7.0 / 8 * 1.5 * 67108864 / (370.8 * kGB) * 1e9)));
}

TEST(MoeDispatch, AllToAllGathersTheRowsOverTensorParallelRanks) {
  // TP 2: the dispatch adds an all-gather of both ranks' rows, the combine a reduce-scatter.
  const MoeRouting routing{.tokens = 2048, .hidden = 4096, .top_k = 2, .experts = 8, .layers = 1};
  MoeGroups groups = expert_parallel(4, hgx(450 * kGB, 4));
  const MoeDispatchCost alone = moe_dispatch_cost(MoeDispatcher::AllToAll, routing, groups);
  groups.tensor_parallel = 2;
  groups.tensor_network = hgx(450 * kGB, 2);
  const MoeDispatchCost gathered = moe_dispatch_cost(MoeDispatcher::AllToAll, routing, groups);
  const double rows = 2048.0 * 2 * 4096 * 2;
  EXPECT_EQ(gathered.dispatch - alone.dispatch,
            nccl_collective_time(Collective::AllGather, 2 * rows, 2, groups.tensor_network).time);
  EXPECT_EQ(
      gathered.combine - alone.combine,
      nccl_collective_time(Collective::ReduceScatter, 2 * rows, 2, groups.tensor_network).time);
}

TEST(MoeDispatch, DeepEpSendsEachTokenOncePerRank) {
  // The same routing with DeepEP: each token reaches D = 8 (1 - 7/8 x 6/7) = 2 ranks, 7/8 of
  // them over NVLink: 4096 x 2 x 7/8 x 8192 B = 58720256 B at 0.82 x 370.8 GB/s = 304.056:
  // 193124 ns (rounded up) + 20 us, the same back. Top 2 of 8 gains nothing from sending a
  // token once per rank, and DeepEP moves less of NVLink's bandwidth: slower than the
  // all-to-all here (Megatron-Core's moe_perf baselines on 8 H100s: Mixtral's top 2 of 8 runs
  // 7% slower with DeepEP, DeepSeek's top 8 of 32 20% faster).
  const MoeRouting routing{.tokens = 4096, .hidden = 4096, .top_k = 2, .experts = 8, .layers = 1};
  const MoeGroups groups = expert_parallel(8, hgx(450 * kGB, 8));
  const MoeDispatchCost c = moe_dispatch_cost(MoeDispatcher::DeepEp, routing, groups);
  EXPECT_DOUBLE_EQ(c.nvlink_bytes, 58720256.0);
  EXPECT_DOUBLE_EQ(c.network_bytes, 0.0);
  EXPECT_EQ(c.dispatch, 193124 + 20000);
  EXPECT_EQ(c.combine, c.dispatch);
  EXPECT_GT(c.total(), moe_dispatch_cost(MoeDispatcher::AllToAll, routing, groups).total());
  // Top 8 of 256 (DeepSeek-V3): 5.29 ranks a token, not 8 rows: DeepEP is faster.
  const MoeRouting deepseek{
      .tokens = 4096, .hidden = 7168, .top_k = 8, .experts = 256, .layers = 1};
  EXPECT_LT(moe_dispatch_cost(MoeDispatcher::DeepEp, deepseek, groups).total(),
            moe_dispatch_cost(MoeDispatcher::AllToAll, deepseek, groups).total());
}

// DeepEP's README (deepseek-ai/DeepEP at 567632d): normal kernels on H800s (NVLink 200 GB/s
// a direction, CX7 400 Gb/s NICs), 4096 tokens of h 7168, top 8 of 256 from at most 4 node
// groups (its test_internode.py: a group per node, so only EP 64's 8 nodes are limited),
// bf16 combine, its logical bandwidth counting the unique (token, rank) pairs within a node
// and the unique (token, node) pairs across nodes. Each combine time within 10%.
TEST(MoeDispatch, DeepEpMatchesItsPublishedCombineBandwidths) {
  struct Case {
    std::uint32_t ep;
    double logical_gbps;
  };
  for (const Case k : {Case{8, 158}, Case{16, 43}, Case{32, 57}, Case{64, 50}}) {
    NcclNetwork h800 = hgx(200 * kGB, 8);
    h800.overhead = 0;
    const std::uint32_t nodes = (k.ep + 7) / 8;
    const MoeRouting routing{.tokens = 4096,
                             .hidden = 7168,
                             .top_k = 8,
                             .experts = 256,
                             .groups = nodes > 4 ? nodes : 0,
                             .group_top_k = nodes > 4 ? 4u : 0u,
                             .layers = 1};
    const MoeDispatchCost c =
        moe_dispatch_cost(MoeDispatcher::DeepEp, routing, expert_parallel(k.ep, h800));
    const double units =
        nodes > 1 ? expected_units_hit(256, nodes, 8, routing.groups, routing.group_top_k)
                  : expected_units_hit(256, k.ep, 8);
    const double measured_ns = 4096 * units * 7168 * 2 / (k.logical_gbps * kGB) * 1e9;
    EXPECT_NEAR(static_cast<double>(c.combine) / measured_ns, 1.0, 0.10) << "EP " << k.ep;
  }
}

TEST(MoeDispatch, NothingWithoutExpertParallelismOrTokens) {
  const MoeRouting routing{.tokens = 4096, .hidden = 4096, .top_k = 2, .experts = 8, .layers = 1};
  EXPECT_EQ(moe_dispatch_cost(MoeDispatcher::DeepEp, routing, expert_parallel(1, hgx(450 * kGB, 8)))
                .total(),
            0);
  MoeRouting none = routing;
  none.tokens = 0;
  EXPECT_EQ(moe_dispatch_cost(MoeDispatcher::AllToAll, none, expert_parallel(8, hgx(450 * kGB, 8)))
                .total(),
            0);
}

}  // namespace
}  // namespace perflow::parallel
