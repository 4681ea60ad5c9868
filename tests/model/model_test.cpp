#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/model/derive.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/operators.hpp"
#include "perflow/model/transformer.hpp"

namespace perflow::model {
namespace {

const Transformer& gpt3() { return find_model_preset("gpt3-175b")->model; }

// 12 h^2 + 2h per layer (QKV 3h^2, projection h^2, MLP 8h^2, two norms), the tied
// embedding once, the final norm: 174,577,692,672 (the paper's "175B").
TEST(Transformer, Gpt3Parameters) {
  const double h = 12288;
  EXPECT_EQ(gpt3().layer_parameters(), 12 * h * h + 2 * h);
  EXPECT_EQ(gpt3().parameters(), 174'577'692'672.0);
  const Transformer& llama = find_model_preset("llama3-70b")->model;
  // GQA: K and V are 8 heads of 128: h (h + 2 x 1024) + h^2 + 3 h f + 2h.
  EXPECT_EQ(llama.layer_parameters(),
            8192.0 * (8192 + 2048) + 8192.0 * 8192 + 3 * 8192.0 * 28672 + 2 * 8192);
  EXPECT_NEAR(llama.parameters() / 1e9, 70.55, 0.01);  // Meta: "70B"
}

// Forward FLOPs per sample: 24 s h^2 L (1 + s / 6h) + 2 s h V (Narayanan et al. 2021).
TEST(Transformer, ForwardFlopsFollowTheSc21Formula) {
  const double s = 2048, h = 12288, l = 96, v = 51200;
  EXPECT_DOUBLE_EQ(gpt3().forward_flops_per_sample(),
                   24 * s * h * h * l * (1 + s / (6 * h)) + 2 * s * h * v);
}

double gemm_flops(const std::vector<Operator>& ops, Pass pass) {
  double total = 0;
  for (const Operator& op : ops) total += op.kind == OperatorKind::Gemm ? op.flops[pass] : 0;
  return total;
}

TEST(Operators, HandComputedSmallLayer) {
  const Transformer tiny{.layers = 2,
                         .hidden = 8,
                         .ffn_hidden = 32,
                         .heads = 2,
                         .kv_heads = 1,
                         .vocab = 100,
                         .sequence = 4,
                         .mlp = Mlp::SwiGlu};
  const Training training{.micro_batch_size = 3};
  const auto ops = layer_operators(tiny, training, 1);
  ASSERT_EQ(ops[0].name, "qkv");
  // T = 12 tokens; K and V are one head of 4: 2 x 12 x 8 x (8 + 8) = 3072.
  EXPECT_EQ(ops[0].flops[kForward], 3072);
  EXPECT_EQ(ops[0].smallest, 8);
  ASSERT_EQ(ops[1].name, "attention");
  EXPECT_EQ(ops[1].flops[kForward], 4.0 * 12 * 4 * 8);  // 4 T s h
  EXPECT_EQ(ops[1].flops[kBackward], 2 * ops[1].flops[kForward]);
  EXPECT_EQ(ops[1].flops[kWeight], 0);
  EXPECT_EQ(ops[3].name, "mlp_gate_up");
  EXPECT_EQ(ops[3].flops[kWeight], 2.0 * 12 * 8 * 64);
  // A GEMM's input and weight gradients each cost its forward.
  EXPECT_EQ(gemm_flops(ops, kBackward), gemm_flops(ops, kForward));
  EXPECT_EQ(gemm_flops(ops, kWeight), gemm_flops(ops, kForward));
}

TEST(Operators, DoublingTensorParallelismHalvesTheGemmWork) {
  const Training training{.micro_batch_size = 1};
  for (std::uint32_t t : {1u, 2u, 4u}) {
    const auto one = layer_operators(gpt3(), training, t);
    const auto two = layer_operators(gpt3(), training, 2 * t);
    for (const Pass pass : {kForward, kBackward, kWeight}) {
      EXPECT_DOUBLE_EQ(gemm_flops(two, pass) * 2, gemm_flops(one, pass));
    }
  }
}

TEST(Operators, TimesAreARoofline) {
  const DeviceSpec& a100 = find_device_preset("a100-80gb")->spec;
  const Operator big{
      .name = "g", .kind = OperatorKind::Gemm, .flops = {312e12, 0, 0}, .smallest = 96};
  // Half of gemm_max at the half-way size: 312 TFLOP at 312 x gemm_max / 2 TFLOP/s.
  EXPECT_EQ(a100.efficiency.gemm_half, 96);
  EXPECT_DOUBLE_EQ(operator_time(big, kForward, a100, Precision::Bf16),
                   1e9 / (a100.efficiency.gemm_max / 2));
  const Operator copy{.name = "m", .kind = OperatorKind::Memory, .bytes = {2039e9 * 0.8, 0, 0}};
  EXPECT_DOUBLE_EQ(operator_time(copy, kForward, a100, Precision::Bf16), 1e9);
}

// Korthikanti et al. 2022: s b h (10 + 24/t + 5as/(ht)) bytes per layer without
// recomputation, 34 s b h / t with sequence parallelism and selective recomputation, 2 s b h / t
// with full recomputation. What a layer's forward leaves for its backward is the first;
// what F keeps until its backward (the rest rebuilt by an R task) follows the mode.
TEST(Derive, ActivationsFollowKorthikanti) {
  const DeviceSpec& a100 = find_device_preset("a100-80gb")->spec;
  const double sbh = 2048.0 * 12288;
  const LayerRange one{.first = 5, .count = 1};
  Training training{.micro_batch_size = 1, .flash_attention = false};
  const auto none = derive_position(gpt3(), training, {.tensor = 8}, a100, one);
  const double everything = sbh * (10 + 3 + 5.0 * 96 * 2048 / (12288 * 8));
  EXPECT_DOUBLE_EQ(none.activation, everything);
  EXPECT_DOUBLE_EQ(none.kept_activation[0], everything);
  EXPECT_DOUBLE_EQ(none.recompute_ns, 0);
  training.sequence_parallel = true;
  training.recompute = Recompute::Selective;
  const auto selective = derive_position(gpt3(), training, {.tensor = 8}, a100, one);
  EXPECT_DOUBLE_EQ(selective.kept_activation[1], 34 * sbh / 8);
  EXPECT_DOUBLE_EQ(selective.activation, 34 * sbh / 8 + 5.0 * 96 * 2048 * 2048 / 8);
  EXPECT_GT(selective.recompute_ns, 0);  // the attention core's forward
  EXPECT_LT(selective.recompute_ns, selective.forward_ns / 2);
  training.recompute = Recompute::Full;
  const auto full = derive_position(gpt3(), training, {.tensor = 8}, a100, one);
  EXPECT_DOUBLE_EQ(full.kept_activation[2], 2 * sbh / 8);
  EXPECT_DOUBLE_EQ(full.activation, selective.activation);
  EXPECT_DOUBLE_EQ(full.recompute_ns, full.forward_ns);  // the whole forward again
  EXPECT_DOUBLE_EQ(full.recompute_forward_ns[1], selective.recompute_ns);
  // B no longer carries the recomputation: an R task does.
  EXPECT_DOUBLE_EQ(
      full.backward_ns,
      derive_position(gpt3(),
                      {.micro_batch_size = 1, .sequence_parallel = true, .flash_attention = false},
                      {.tensor = 8}, a100, one)
          .backward_ns);
}

// A second shape for the same formulas: h = 4096, s = 4096, a = 32 (multi-head: kv heads =
// heads, so K and V are h wide), f = 4h with GELU, micro batch b = 2, no tensor or sequence
// parallelism (t = 1, so the 10 sbh that sequence parallelism would split are counted whole)
// and attention scores kept (no flash attention). Per layer, derive.cpp's generalised
// formula 10sbh + (2sbh + 4 sb kv + 2sbh + 4sbf)/t + 5as^2b/t reduces to Korthikanti et al.
// 2022's 34sbh + 5as^2b: without recomputation F keeps 34sbh + 5as^2b, with selective
// recomputation 34sbh, with full recomputation 2sbh (the layer's input); R rebuilds one
// layer's worth: everything minus what F keeps, per layer, whatever the number of layers.
TEST(Derive, ActivationsFollowKorthikantiOnASecondShape) {
  const DeviceSpec& a100 = find_device_preset("a100-80gb")->spec;
  Transformer model{.layers = 32,
                    .hidden = 4096,
                    .ffn_hidden = 4 * 4096,
                    .heads = 32,
                    .kv_heads = 32,
                    .vocab = 32000,
                    .sequence = 4096};
  const Training training{.micro_batch_size = 2, .flash_attention = false};
  const double s = 4096, b = 2, h = 4096, a = 32;
  const double sbh = s * b * h;
  const double full_layer = 34 * sbh + 5 * a * s * s * b;
  // 34 x 2^25 = 1,140,850,688 and 5 x 32 x 2^24 x 2 = 5,368,709,120 bytes.
  EXPECT_EQ(full_layer, 1'140'850'688.0 + 5'368'709'120.0);
  for (const std::uint32_t count : {1u, 3u}) {
    SCOPED_TRACE(count);
    const auto c = derive_position(model, training, {}, a100, {.first = 4, .count = count});
    EXPECT_DOUBLE_EQ(c.activation, count * full_layer);
    EXPECT_DOUBLE_EQ(c.kept_activation[0], count * full_layer);
    EXPECT_DOUBLE_EQ(c.kept_activation[1], count * 34 * sbh);
    EXPECT_DOUBLE_EQ(c.kept_activation[2], count * 2 * sbh);
    EXPECT_DOUBLE_EQ(c.recompute_rebuilt[0], 0.0);
    EXPECT_DOUBLE_EQ(c.recompute_rebuilt[1], 5 * a * s * s * b);
    EXPECT_DOUBLE_EQ(c.recompute_rebuilt[2], full_layer - 2 * sbh);
    if (count == 1) {
      for (std::size_t mode = 0; mode < 3; ++mode) {
        EXPECT_DOUBLE_EQ(c.recompute_rebuilt[mode], c.kept_activation[0] - c.kept_activation[mode]);
      }
    }
    EXPECT_DOUBLE_EQ(c.recompute_forward_ns[0], 0.0);
    EXPECT_DOUBLE_EQ(c.recompute_forward_ns[2], c.forward_ns);  // no embedding or head here
  }
  // Flash attention keeps no scores: 34sbh, and selective recomputation has nothing to rebuild.
  Training flash = training;
  flash.flash_attention = true;
  const auto fused = derive_position(model, flash, {}, a100, {.first = 4, .count = 1});
  EXPECT_DOUBLE_EQ(fused.kept_activation[0], 34 * sbh);
  EXPECT_DOUBLE_EQ(fused.recompute_rebuilt[1], 0.0);
  // Grouped-query attention with 8 KV heads (kv = h / 4): K and V keep 4 sb kv = sbh instead of
  // 4sbh, so 31sbh + 5as^2b (derive.cpp's generalisation to grouped-query attention).
  model.kv_heads = 8;
  const auto gqa = derive_position(model, training, {}, a100, {.first = 4, .count = 1});
  EXPECT_DOUBLE_EQ(gqa.kept_activation[0], 31 * sbh + 5 * a * s * s * b);
  EXPECT_DOUBLE_EQ(gqa.kept_activation[1], 31 * sbh);
  EXPECT_DOUBLE_EQ(gqa.kept_activation[2], 2 * sbh);
}

TEST(Derive, StaticMemoryAndTraffic) {
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const Training training{.micro_batch_size = 2};
  const LayerRange first{.first = 0, .count = 3, .embedding = true};
  const auto c = derive_position(gpt3(), training, {.tensor = 8, .data = 4}, h100, first);
  const double h = 12288;
  const double params = 3 * (12 * h * h / 8 + 2 * h) + 51200 * h / 8;
  EXPECT_DOUBLE_EQ(c.parameters, params);
  EXPECT_DOUBLE_EQ(c.static_memory(), 18 * params);  // 2 + 4 + 12 bytes per parameter
  Training sharded = training;
  sharded.distributed_optimizer = true;
  EXPECT_DOUBLE_EQ(
      derive_position(gpt3(), sharded, {.tensor = 8, .data = 4}, h100, first).static_memory(),
      (6 + 12.0 / 4) * params);
  EXPECT_DOUBLE_EQ(c.boundary_bytes, 2 * 2 * 2048 * h);
  EXPECT_DOUBLE_EQ(c.tp_allreduce_bytes, 2 * 2 * 2048 * h);
  EXPECT_EQ(c.tp_allreduces, 7u);  // two per layer, one for the embedding
  EXPECT_DOUBLE_EQ(c.dp_gradient_bytes, 4 * params);
}

// Moving a layer from one position to another moves exactly its costs.
TEST(Derive, ALayerCarriesItsCosts) {
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const Training training{.micro_batch_size = 1};
  const auto at = [&](std::uint32_t count) {
    return derive_position(gpt3(), training, {.tensor = 4}, h100, {.first = 0, .count = count});
  };
  const auto three = at(3), four = at(4), one = at(1);
  EXPECT_NEAR(four.forward_ns - three.forward_ns, one.forward_ns, 1e-6);
  EXPECT_NEAR(four.backward_ns - three.backward_ns, one.backward_ns, 1e-6);
  EXPECT_NEAR(four.weight_ns - three.weight_ns, one.weight_ns, 1e-6);
  EXPECT_DOUBLE_EQ(four.activation - three.activation, one.activation);
  EXPECT_DOUBLE_EQ(four.parameters - three.parameters, one.parameters);
}

// Durations "measured" on a GPU whose GEMMs reach 50% give back gemm_max 0.5 from the
// model's 0.7, whatever the other kernels take.
TEST(Derive, FitsGemmEfficiencyToMeasurements) {
  DeviceSpec slow = find_device_preset("h100-sxm")->spec;
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  slow.efficiency.gemm_max = 0.5;
  const Training training{.micro_batch_size = 1};
  std::vector<Observation> observations;
  for (std::uint32_t count : {1u, 3u}) {
    const LayerRange range{.first = 0, .count = count};
    const PositionCosts model = derive_position(gpt3(), training, {.tensor = 8}, h100, range);
    const PositionCosts measured = derive_position(gpt3(), training, {.tensor = 8}, slow, range);
    for (const Pass pass : {kForward, kBackward}) {
      double gemm = 0;
      double all = 0;
      for (const OperatorTime& op : model.operators) {
        all += op.seconds[pass] * 1e9;
        if (op.gemm) gemm += op.seconds[pass] * 1e9;
      }
      const double truth = pass == kForward ? measured.forward_ns : measured.backward_ns;
      observations.push_back({gemm, all - gemm, truth});
    }
  }
  const auto fitted = fit_gemm_max(observations, h100.efficiency.gemm_max);
  ASSERT_TRUE(fitted.has_value());
  EXPECT_NEAR(*fitted, 0.5, 1e-12);
  EXPECT_FALSE(fit_gemm_max(std::vector<Observation>{{0, 5, 5}}, 0.7).has_value());
}

TEST(Split, BalancedCountsEmbeddingAndHead) {
  const auto split = balanced_split(10, 4);  // 12 units: 3 each
  ASSERT_EQ(split.size(), 4u);
  EXPECT_EQ(split[0].count, 2u);
  EXPECT_TRUE(split[0].embedding);
  EXPECT_EQ(split[1].first, 2u);
  EXPECT_EQ(split[1].count, 3u);
  EXPECT_EQ(split[3].count, 2u);
  EXPECT_TRUE(split[3].head);
  EXPECT_FALSE(split[2].head);
  const auto uneven = balanced_split(11, 4);  // 13 units: 4 3 3 3
  EXPECT_EQ(uneven[0].count, 3u);
  EXPECT_EQ(uneven[3].count, 2u);
  EXPECT_THROW((void)balanced_split(1, 4), std::invalid_argument);
}

TEST(Split, FastestGivesTheFasterDeviceMore) {
  // Device 1 is twice as slow: of 12 units it gets 4, device 0 gets 8.
  const std::vector<double> seconds = {1, 2};
  const std::vector<std::uint32_t> device_of = {0, 1};
  const auto split = fastest_split(10, seconds, device_of, 2);
  EXPECT_EQ(split[0].count, 7u);
  EXPECT_EQ(split[1].count, 3u);
  EXPECT_TRUE(split[1].head);
  // Two chunks per device (V shape: device 0 holds positions 0 and 3).
  const std::vector<double> v = {1, 1, 1, 1};
  const std::vector<std::uint32_t> v_devices = {0, 1, 1, 0};
  const auto vs = fastest_split(10, v, v_devices, 2);
  EXPECT_EQ(vs[0].count + vs[3].count + 2, vs[1].count + vs[2].count);
}

}  // namespace
}  // namespace perflow::model
