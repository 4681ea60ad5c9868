// Fully sharded data parallelism (/parallelism/fsdp, fsdp_shard_size): each rank's shards and
// gathered units by hand, the collectives' times and placement, the graph's gathers and
// reduce-scatters, and the refusals.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config_error.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/nccl_collectives.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

namespace perflow::study {
namespace {

using testing::error_of;

// Llama 3 8B cut to 8 layers, 8K tokens a sample, on one H100 node: DP 8, 32 samples a step
// (4 microbatches of 1), `stages` pipeline stages.
nlohmann::json llama(const char* fsdp, std::uint32_t stages = 1, std::uint32_t dp = 8) {
  auto doc = nlohmann::json::parse(R"({
    "model": {"preset": "llama3-8b", "layers": 8},
    "training": {"micro_batch_size": 1, "global_batch_size": 32},
    "device": "h100-sxm",
    "pipeline": {"schedule": "1f1b"},
    "parallelism": {}
  })");
  doc["pipeline"]["stages"] = stages;
  doc["parallelism"]["data_parallel"] = dp;
  if (fsdp != nullptr) doc["parallelism"]["fsdp"] = fsdp;
  return doc;
}

std::size_t count(const EventGraph& g, TaskKind kind) {
  std::size_t n = 0;
  for (std::uint32_t t = 0; t < g.task_count(); ++t) n += g.kind(TaskId{t}) == kind ? 1u : 0u;
  return n;
}

// One stage holds all 8 layers, the embedding and the head: 10 units. A layer holds
// 4096 x (4096 + 1024 + 1024 + 4096) attention weights, 3 x 4096 x 14336 MLP weights and two
// norms: 218,112,000; the embedding 128,256 x 4,096 = 525,336,576 (the head the same plus
// the final norm): the largest unit is the head's, 525,340,672.
TEST(FsdpConfig, EachRankHoldsItsShardsAndTheGatheredUnits) {
  const Config plain = parse_config(llama(nullptr), "cfg.json");
  const Config zero3 = parse_config(llama("zero3"), "cfg.json");
  const model::PositionCosts& a = plain.model->positions[0];
  const model::PositionCosts& b = zero3.model->positions[0];
  const double p = a.parameters;
  EXPECT_DOUBLE_EQ(p, 8 * 218'112'000.0 + 2 * 525'336'576.0 + 4096);
  EXPECT_DOUBLE_EQ(b.parameters, p);
  EXPECT_DOUBLE_EQ(b.weight_bytes, 2 * p / 8);
  EXPECT_DOUBLE_EQ(b.gradient_bytes, 4 * p / 8);  // fp32 main gradients
  EXPECT_DOUBLE_EQ(b.optimizer_bytes, 12 * p / 8);
  EXPECT_EQ(b.fsdp_units, 10u);
  // The unit running and the one prefetched (2 bytes a parameter) and a unit's fp32
  // gradients awaiting their reduce-scatter.
  EXPECT_DOUBLE_EQ(b.fsdp_buffer_bytes, (2 + 2 + 4) * 525'340'672.0);
  EXPECT_DOUBLE_EQ(b.static_memory(), (2 + 4 + 12) * p / 8 + (2 + 2 + 4) * 525'340'672.0);
  EXPECT_DOUBLE_EQ(b.fsdp_parameter_bytes, 2 * p);
  EXPECT_DOUBLE_EQ(b.fsdp_gradient_bytes, 4 * p);
  // The plain data parallelism's gradient buckets are FSDP's now.
  EXPECT_DOUBLE_EQ(b.dp_gradient_bytes, 0);
  // The optimizer steps the shard only.
  EXPECT_NEAR(b.optimizer_ns, a.optimizer_ns / 8, 1e-6);
  EXPECT_DOUBLE_EQ(zero3.devices[0].static_memory, b.static_memory());
}

// The shard group is the node's 8 GPUs: each unit's gather and reduce-scatter as NCCL
// prices them there (the data-parallel group's network), a tenth of the bytes each.
TEST(FsdpConfig, EachUnitsCollectivesArePricedOverTheShardGroup) {
  const Config c = parse_config(llama("zero3"), "cfg.json");
  const model::PositionCosts& p = c.model->positions[0];
  ASSERT_TRUE(c.data_parallel.nccl);
  EXPECT_EQ(c.fsdp_link, "intra_node");
  EXPECT_TRUE(c.fsdp.reshard_after_forward);
  ASSERT_EQ(c.fsdp.units, std::vector<std::uint32_t>{10});
  EXPECT_EQ(c.fsdp.gather[0],
            parallel::nccl_collective_time(parallel::Collective::AllGather,
                                           p.fsdp_parameter_bytes / 10, 8, *c.data_parallel.nccl)
                .time);
  EXPECT_EQ(c.fsdp.reduce[0],
            parallel::nccl_collective_time(parallel::Collective::ReduceScatter,
                                           p.fsdp_gradient_bytes / 10, 8, *c.data_parallel.nccl)
                .time);
  EXPECT_EQ(c.fsdp.replica_reduce[0], 0);  // one replica
}

// One stage, 4 microbatches: each F and each BW gathers (its first unit, then the other 9),
// each BW reduce-scatters its 10 units; no data-parallel all-reduce; the step waits for the
// last reduction.
TEST(FsdpConfig, TheGraphGathersEveryPassAndReducesEveryBackward) {
  const Config c = parse_config(llama("zero3"), "cfg.json");
  ASSERT_EQ(c.pipeline.microbatches, 4u);
  const EventGraph g = build_graph(c);
  EXPECT_EQ(count(g, TaskKind::AllGather), 2u * 8);
  EXPECT_EQ(count(g, TaskKind::ReduceScatter), 4u * 10);
  EXPECT_EQ(count(g, TaskKind::AllReduce), 0u);
  EXPECT_EQ(count(g, TaskKind::Optimizer), 1u);
  ASSERT_EQ(g.lane_count(), 3u);
  EXPECT_EQ(g.lane_info(LaneId{1}).name, "fsdp all-gather");
  EXPECT_EQ(g.lane_info(LaneId{2}).name, "fsdp reduce-scatter");
  const simulator::SimulationResult r = simulate(c, g);
  const TaskId step = r.trace.events(DeviceId{0}).back();
  ASSERT_EQ(g.kind(step), TaskKind::Optimizer);
  const TaskId last_reduction = r.trace.events(LaneId{2}).back();
  EXPECT_EQ(r.trace.start_of(step),
            std::max(r.trace.finish_of(last_reduction),
                     r.trace.finish_of(r.trace.events(DeviceId{0}).end()[-2])));

  // Over a 10 GB/s scale-up link the gathers outrun the compute: a slower step.
  auto doc = llama("zero3");
  doc["network"] = {{"intra_node", {{"bandwidth", "10GB/s"}}}};
  const Config slow = parse_config(doc, "cfg.json");
  EXPECT_GT(slow.fsdp.gather[0], c.fsdp.gather[0]);
  EXPECT_GT(simulate(slow, build_graph(slow)).metrics.makespan, r.metrics.makespan);
}

// With 2 stages each keeps its parameters gathered and its gradients whole for the step
// (torchtitan with pipelining): one gather before its first F, one reduction after its last
// backward; only the optimizer state stays sharded.
TEST(FsdpConfig, WithPipelineStagesEachGathersOnceAStep) {
  const Config c = parse_config(llama("zero3", 2, 4), "cfg.json");
  EXPECT_FALSE(c.fsdp.reshard_after_forward);
  const model::PositionCosts& first = c.model->positions[0];
  EXPECT_EQ(first.fsdp_units, 5u);  // 4 layers and the embedding
  EXPECT_DOUBLE_EQ(first.weight_bytes, 2 * first.parameters);
  EXPECT_DOUBLE_EQ(first.gradient_bytes, 4 * first.parameters);
  EXPECT_DOUBLE_EQ(first.optimizer_bytes, 12 * first.parameters / 4);
  EXPECT_DOUBLE_EQ(first.fsdp_buffer_bytes, 0);
  const EventGraph g = build_graph(c);
  EXPECT_EQ(count(g, TaskKind::AllGather), 2u * 2);       // per device: first unit, the rest
  EXPECT_EQ(count(g, TaskKind::ReduceScatter), 5u + 5u);  // per device: its units once
}

// HSDP over groups of 4 of the 8 ranks: shards a quarter, two replicas whose shards are
// all-reduced after the last backward (over the 2 ranks 4 apart, in the node).
TEST(FsdpConfig, HybridShardingReplicatesTheShards) {
  auto doc = llama("hsdp");
  doc["parallelism"]["fsdp_shard_size"] = 4;
  const Config c = parse_config(doc, "cfg.json");
  const model::PositionCosts& p = c.model->positions[0];
  EXPECT_DOUBLE_EQ(p.optimizer_bytes, 12 * p.parameters / 4);
  EXPECT_DOUBLE_EQ(p.weight_bytes, 2 * p.parameters / 4);
  EXPECT_GT(c.fsdp.replica_reduce[0], 0);
  EXPECT_EQ(c.fsdp_shard_size, 4u);
  const EventGraph g = build_graph(c);
  // The last BW's reductions carry the replicas' all-reduce: longer than the others.
  TimeNs longest = 0;
  TimeNs shortest = INT64_MAX;
  for (std::uint32_t t = 0; t < g.task_count(); ++t) {
    if (g.kind(TaskId{t}) != TaskKind::ReduceScatter) continue;
    longest = std::max(longest, g.duration(TaskId{t}));
    shortest = std::min(shortest, g.duration(TaskId{t}));
  }
  EXPECT_EQ(shortest, c.fsdp.reduce[0]);
  EXPECT_EQ(longest, c.fsdp.reduce[0] + c.fsdp.replica_reduce[0]);
}

// Qwen3-30B-A3B (128 experts) on 16 GPUs, EP 8: with zero3 over 16 ranks each expert is held
// by 16 / 8 = 2 of them; with HSDP over 8 each shard group holds an expert on 8 / 8 = 1 rank:
// the experts' shards are twice as large.
TEST(FsdpConfig, ExpertsShardOverTheirShareOfTheShardGroup) {
  auto doc = nlohmann::json::parse(R"({
    "model": {"preset": "qwen3-30b-a3b", "layers": 4},
    "training": {"micro_batch_size": 1, "global_batch_size": 16},
    "device": "h100-sxm",
    "pipeline": {"schedule": "1f1b", "stages": 1},
    "parallelism": {"data_parallel": 16, "expert_parallel": 8, "fsdp": "zero3"}
  })");
  const Config zero3 = parse_config(doc, "cfg.json");
  doc["parallelism"]["fsdp"] = "hsdp";
  doc["parallelism"]["fsdp_shard_size"] = 8;
  const Config hsdp = parse_config(doc, "cfg.json");
  const model::PositionCosts& a = zero3.model->positions[0];
  const model::PositionCosts& b = hsdp.model->positions[0];
  EXPECT_DOUBLE_EQ(a.parameters, b.parameters);
  // Weights: 2 (dense / shard + experts / (shard / 8)), the optimizer 12 of the same.
  EXPECT_DOUBLE_EQ(b.optimizer_bytes / 12, b.weight_bytes / 2);
  EXPECT_DOUBLE_EQ(a.optimizer_bytes / 12, a.weight_bytes / 2);
  // Halving the shard group doubles every shard, the experts' (on 2 ranks, then 1) too.
  EXPECT_DOUBLE_EQ(b.weight_bytes, 2 * a.weight_bytes);
}

// /network/data_parallel is the link FSDP's shard group runs over when it is given.
TEST(FsdpConfig, TheDataParallelLinkCarriesTheShardGroup) {
  auto doc = llama("zero3");
  doc["network"] = {{"collectives", "ring"}, {"data_parallel", {{"bandwidth", "1GB/s"}}}};
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.fsdp_link, "/network/data_parallel");
  const double unit = c.model->positions[0].fsdp_parameter_bytes / 10;
  ASSERT_EQ(c.data_parallel.bandwidth, 1e9);
  EXPECT_EQ(c.fsdp.gather[0], parallel::ring_all_gather_time(unit, 8, c.data_parallel.latency,
                                                             c.data_parallel.bandwidth));
}

TEST(FsdpConfig, Refusals) {
  EXPECT_EQ(error_of(llama("zero3", 1, 1)),
            "cfg.json:/parallelism/fsdp: FSDP shards over the data x context ranks, and there is "
            "1: raise /parallelism/data_parallel (or context_parallel)");
  EXPECT_EQ(error_of(llama("zero2")),
            "cfg.json:/parallelism/fsdp: expected \"none\", \"zero3\" or \"hsdp\", got \"zero2\"");
  EXPECT_EQ(error_of(llama("hsdp")),
            "cfg.json:/parallelism/fsdp: hsdp shards within groups of "
            "/parallelism/fsdp_shard_size ranks: give it");
  auto doc = llama("hsdp");
  doc["parallelism"]["fsdp_shard_size"] = 3;
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/fsdp_shard_size: a shard group of 3 ranks: it must be at least "
            "2, divide the 8 data x context ranks and hold whole context-parallel groups of 1");
  doc = llama("zero3");
  doc["parallelism"]["fsdp_shard_size"] = 4;
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/fsdp_shard_size: fsdp_shard_size is HSDP's shard group: set "
            "/parallelism/fsdp to \"hsdp\"");
  doc = llama("zero3");
  doc["parallelism"]["overlap_param_gather"] = true;
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/overlap_param_gather: overlap_param_gather is the distributed "
            "optimizer's gather; FSDP gathers each unit before it runs: leave it out");
  doc = llama("zero3", 2, 4);
  doc["pipeline"]["schedule"] = "dualpipe";
  doc["training"]["global_batch_size"] = 16;
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/fsdp: FSDP's gathers are not modelled around overlapped "
            "forward-backward pairs (DualPipe, /parallelism/moe_a2a_overlap)");
  doc = nlohmann::json::parse(R"({
    "pipeline": {"schedule": "1f1b", "stages": 2, "microbatches": 4},
    "costs": {"forward": 10, "backward": 20, "weight": 0},
    "parallelism": {"data_parallel": 2, "fsdp": "zero3"}
  })");
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/fsdp: FSDP gathers /model's layers and shards its parameters: "
            "add /model");
}

}  // namespace
}  // namespace perflow::study
