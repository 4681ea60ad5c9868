// Context parallelism (/parallelism/context_parallel, cp_comm): each rank's share of the
// sequence, the ring's exposed transfers by hand, the gradients' group, and the refusals.
#include <cmath>
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

// Llama 3 8B, 8 layers, 8K tokens a sample, on one H100 node: CP 2 x DP 4, one stage.
nlohmann::json llama(std::uint32_t cp) {
  auto doc = nlohmann::json::parse(R"({
    "model": {"preset": "llama3-8b", "layers": 8},
    "training": {"micro_batch_size": 1, "global_batch_size": 32},
    "device": "h100-sxm",
    "pipeline": {"schedule": "1f1b", "stages": 1},
    "parallelism": {"data_parallel": 4}
  })");
  doc["parallelism"]["context_parallel"] = cp;
  return doc;
}

using testing::error_of;

// Each rank holds s / cp = 4,096 tokens of every layer: every activation is half of CP 1's
// (no s x s term with the fused attention), and so is every GEMM's work; the attention core
// computes its 4,096 queries against all 8,192 keys: half the FLOPs too.
TEST(ContextParallel, EachRankHoldsItsShareOfTheSequence) {
  const Config one = parse_config(llama(1), "cfg.json");
  const Config two = parse_config(llama(2), "cfg.json");
  const model::PositionCosts& a = one.model->positions[0];
  const model::PositionCosts& b = two.model->positions[0];
  EXPECT_DOUBLE_EQ(b.activation, a.activation / 2);
  EXPECT_DOUBLE_EQ(b.parameters, a.parameters);
  for (std::size_t i = 0; i < a.operators.size(); ++i) {
    EXPECT_DOUBLE_EQ(b.operators[i].flops[model::kForward],
                     a.operators[i].flops[model::kForward] / 2)
        << a.operators[i].name;
  }
  EXPECT_EQ(a.context.layers, 0);
  // K and V of a rank's 4,096 tokens, 8 heads of 128 each: 2 x 4,096 x 2,048 bytes.
  EXPECT_DOUBLE_EQ(b.context.layers, 8);
  EXPECT_DOUBLE_EQ(b.context.kv_bytes, 16'777'216);
  EXPECT_DOUBLE_EQ(b.context.qkv_bytes, 2.0 * 4096 * (4096 + 2048));
  EXPECT_DOUBLE_EQ(b.context.output_bytes, 2.0 * 4096 * 4096);
  // The ring's two steps each launch the attention's kernels.
  EXPECT_EQ(b.forward_host.kernels, a.forward_host.kernels + 8);
  // The gradients reduce over the 8 ranks of data x context parallelism, in the node; the
  // step's samples are the data-parallel replicas' only.
  EXPECT_EQ(two.data_parallel.ranks(), 8u);
  EXPECT_EQ(two.data_parallel_link, "intra_node");
  EXPECT_EQ(two.context_parallel_link, "intra_node");
  EXPECT_EQ(two.pipeline.microbatches, 8u);
  const auto achieved = throughput(two, 1'000'000'000);
  ASSERT_TRUE(achieved);
  EXPECT_EQ(achieved->gpus, 8u);
  EXPECT_DOUBLE_EQ(achieved->tokens_per_s, 32.0 * 8192);
}

// On a 10 GB/s link (NCCL reaches 20.6 of Hopper's 25 GB/s a link of it: 8.24 GB/s), a
// ring step's 16 MiB block takes 2.036 ms, longer than the step's attention (the layer's
// over 2 steps): F waits (cp - 1) x (transfer - attention / 2) a layer, B, with the
// gradients' blocks, (cp - 1) x (2 transfer - backward attention / 2). On NVLink's 450 GB/s
// the block (45 us) hides under the attention: nothing added.
TEST(ContextParallel, TheRingWaitsWhereItsTransferIsLonger) {
  auto doc = llama(2);
  doc["network"] = {{"intra_node", {{"bandwidth", "10GB/s"}}}};
  const Config slow = parse_config(doc, "cfg.json");
  const model::PositionCosts& p = slow.model->positions[0];
  const double bandwidth =
      10e9 * parallel::nccl_link_fraction(ScaleUp::NvLink, GpuGeneration::Hopper);
  EXPECT_DOUBLE_EQ(bandwidth, 8.24e9);
  const double transfer = 16'777'216 / bandwidth * 1e9;
  const double forward_wait = transfer - p.context.attention_forward_ns / 2;
  const double backward_wait = 2 * transfer - p.context.attention_backward_ns / 2;
  ASSERT_GT(forward_wait, 0);
  ASSERT_GT(backward_wait, 0);
  const parallel::TaskCosts& costs = slow.costs.at(StageId{0}, 0);
  EXPECT_EQ(costs.forward,
            std::llround(p.forward_ns) + std::llround(8 * std::llround(forward_wait)));
  EXPECT_EQ(costs.backward,
            std::llround(p.backward_ns) + std::llround(8 * std::llround(backward_wait)));

  const Config fast = parse_config(llama(2), "cfg.json");
  EXPECT_GT(fast.model->positions[0].context.attention_forward_ns / 2,
            16'777'216 / (450e9 * 0.824) * 1e9);
  EXPECT_EQ(fast.costs.at(StageId{0}, 0).forward,
            std::llround(fast.model->positions[0].forward_ns));
  // Gathering K and V, or Ulysses' all-to-alls, are not hidden: each adds to F.
  for (const char* comm : {"all_gather", "a2a"}) {
    doc = llama(2);
    doc["parallelism"]["cp_comm"] = comm;
    const Config c = parse_config(doc, "cfg.json");
    EXPECT_GT(c.costs.at(StageId{0}, 0).forward, fast.costs.at(StageId{0}, 0).forward) << comm;
  }
}

TEST(ContextParallel, Refusals) {
  auto doc = llama(3);
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/context_parallel: the sequence of 8192 tokens does not split "
            "into 2 x 3 chunks (each context-parallel rank takes two)");
  doc = llama(16);
  doc["parallelism"]["cp_comm"] = "a2a";
  doc["training"]["global_batch_size"] = 4;
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/context_parallel: a2a splits the attention heads over tensor "
            "x context parallelism (1 x 16), which do not divide 32 query and 8 key/value heads");
  doc["parallelism"]["cp_comm"] = "ring";
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/cp_comm: expected \"p2p\", \"all_gather\" or \"a2a\", got "
            "\"ring\"");
  doc = llama(2);
  doc["training"]["flash_attention"] = false;
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/context_parallel: context parallelism runs Transformer "
            "Engine's fused attention: /training/flash_attention must be true");
  doc = llama(2);
  doc["model"] = {{"preset", "nemotron-h-8b"}};
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/context_parallel: context parallelism over Mamba layers is "
            "not modelled (their scan runs along the whole sequence)");
  nlohmann::json bare = {{"pipeline", {{"schedule", "1f1b"}, {"stages", 2}}},
                         {"costs", {{"forward", 10}, {"backward", 20}, {"weight", 10}}},
                         {"parallelism", {{"context_parallel", 2}}}};
  EXPECT_EQ(error_of(bare),
            "cfg.json:/parallelism/context_parallel: context parallelism splits /model's "
            "sequence over ranks: add /model");
}

}  // namespace
}  // namespace perflow::study
