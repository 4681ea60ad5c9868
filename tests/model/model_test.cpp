#include <cmath>
#include <string_view>
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

// A small MoE shape for hand computation: h = 8, multi-head (2 heads of 4, so K and V are 8
// wide), SwiGLU (3 matrices), dense f = 32, 4 layers of which the first 2 are dense, E = 4
// routed experts, top_k 2, f_e = 16, S = 1 shared expert, V = 100 (untied), s = 4.
Transformer small_moe() {
  return {.layers = 4,
          .hidden = 8,
          .ffn_hidden = 32,
          .heads = 2,
          .kv_heads = 2,
          .vocab = 100,
          .sequence = 4,
          .mlp = Mlp::SwiGlu,
          .experts = 4,
          .top_k = 2,
          .expert_ffn_hidden = 16,
          .shared_experts = 1,
          .first_dense_layers = 2};
}

const OperatorTime& op_named(const PositionCosts& c, std::string_view name) {
  for (const OperatorTime& op : c.operators) {
    if (op.name == name) return op;
  }
  ADD_FAILURE() << "no operator " << name;
  return c.operators.front();
}

// Attention h (h + 2 x 8) + h^2 = 192 + 64 = 256; a dense layer adds 3 h f = 768 and two
// norms 16: 1040. A MoE layer adds the router h E = 32, (E + S) experts of 3 h f_e = 384 each
// (5 x 384 = 1920) and the norms: 256 + 32 + 1920 + 16 = 2224. The model: 2 x 1040 +
// 2 x 2224 + 2 V h (1600) + the final norm (8) = 8136.
TEST(MixtureOfExperts, Parameters) {
  const Transformer m = small_moe();
  EXPECT_EQ(m.layer_parameters(), 1040);
  EXPECT_EQ(m.moe_layer_parameters(), 2224);
  EXPECT_EQ(m.moe_layers(), 2u);
  EXPECT_EQ(m.moe_layers_in(1, 2), 1u);  // layers 1 (dense) and 2 (MoE)
  EXPECT_EQ(m.parameters(), 8136);
}

// Per sample (s = 4): a dense layer 2 s (256 + 768) = 8192 GEMM FLOPs + attention 4 s^2 h =
// 512, so 8704; a MoE layer 2 s (256 + router 32 + (k + S) 3 h f_e = 3 x 384) = 2 x 4 x 1440 =
// 11520, + 512 = 12032; the LM head 2 s h V = 6400. 2 x 8704 + 2 x 12032 + 6400 = 47872.
// The imbalance and the capacity factor do not change model FLOPs.
TEST(MixtureOfExperts, ForwardFlopsCountTheActiveExperts) {
  Transformer m = small_moe();
  EXPECT_EQ(m.forward_flops_per_sample(), 47872);
  m.expert_imbalance = 2;
  m.capacity_factor = 1.5;
  EXPECT_EQ(m.forward_flops_per_sample(), 47872);
}

// Micro batch 3: T = 12 tokens. The MoE operators of one layer (t = 1): the router 2 T h E =
// 768; the routed experts over T k = 24 tokens: gate and up 2 x 24 x 8 x 32 = 12288, down
// 2 x 24 x 16 x 8 = 6144; the shared expert over T = 12: 6144 and 3072.
TEST(MixtureOfExperts, OperatorsOfAMoeLayer) {
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const Training training{.micro_batch_size = 3};
  const auto c = derive_position(small_moe(), training, {}, h100, {.first = 2, .count = 1});
  EXPECT_EQ(op_named(c, "router").flops[kForward], 768);
  EXPECT_EQ(op_named(c, "expert_gate_up").flops[kForward], 12288);
  EXPECT_EQ(op_named(c, "expert_gate_up").flops[kWeight], 12288);  // B and W as a GEMM's
  EXPECT_EQ(op_named(c, "expert_down").flops[kBackward], 6144);
  EXPECT_EQ(op_named(c, "shared_gate_up").flops[kForward], 6144);
  EXPECT_EQ(op_named(c, "shared_down").flops[kForward], 3072);
  for (const OperatorTime& op : c.operators) EXPECT_NE(op.name, "mlp_gate_up");
  // Kept activations: 10 T h = 960 (norm, QKV and MLP inputs, dropout masks), Q K V and the
  // projection input 8 T h = 768, the experts' input 2 T k h = 384, the routed and shared
  // experts' inside 6 (T k + T S) f_e = 6 x 36 x 16 = 3456, the router's fp32 probabilities
  // 4 T E = 192: 5760 (flash attention: no scores).
  EXPECT_EQ(c.activation, 5760);
  EXPECT_EQ(c.kept_activation[2], 2 * 12 * 8);  // full recomputation: the layer's input
  // Parameters on the rank: 2224 (t = 1, EP 1).
  EXPECT_EQ(c.parameters, 2224);
}

// 2 bytes x T r x top_k x h per all-to-all: T = 12, k = 2, h = 8: 384 bytes; 2 per MoE
// layer. With sequence parallelism over t = 2 a rank sends its T / 2 tokens: 192.
TEST(MixtureOfExperts, AllToAllBytesAndCount) {
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const Training training{.micro_batch_size = 3};
  const Degrees ep2{.data = 2, .expert = 2};
  const auto moe = derive_position(small_moe(), training, ep2, h100, {.first = 2, .count = 2});
  EXPECT_EQ(moe.a2a_bytes, 384);
  EXPECT_EQ(moe.a2a_per_pass, 4u);
  const auto dense = derive_position(small_moe(), training, ep2, h100, {.first = 0, .count = 1});
  EXPECT_EQ(dense.a2a_bytes, 0);
  EXPECT_EQ(dense.a2a_per_pass, 0u);
  const auto mixed = derive_position(small_moe(), training, ep2, h100, {.first = 1, .count = 2});
  EXPECT_EQ(mixed.a2a_per_pass, 2u);
  // Expert degree 1: no all-to-all.
  const auto ep1 = derive_position(small_moe(), training, {}, h100, {.first = 2, .count = 2});
  EXPECT_EQ(ep1.a2a_per_pass, 0u);
  EXPECT_EQ(ep1.a2a_bytes, 0);
  Training sp = training;
  sp.sequence_parallel = true;
  const auto split = derive_position(small_moe(), sp, {.tensor = 2, .data = 2, .expert = 2}, h100,
                                     {.first = 2, .count = 2});
  EXPECT_EQ(split.a2a_bytes, 192);
}

// The slowest expert rank with twice the balanced tokens takes twice the routed experts'
// time (their smallest GEMM dimension stays h = 8, so the same efficiency) and leaves the
// attention, the router and the shared expert as they were.
TEST(MixtureOfExperts, ImbalanceDoublesTheRoutedExperts) {
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const Training training{.micro_batch_size = 3};
  const Degrees degrees{.data = 4, .expert = 4};
  const LayerRange moe{.first = 2, .count = 2};
  Transformer skewed = small_moe();
  skewed.expert_imbalance = 2;
  const auto balanced = derive_position(small_moe(), training, degrees, h100, moe);
  const auto slow = derive_position(skewed, training, degrees, h100, moe);
  for (const Pass pass : {kForward, kBackward, kWeight}) {
    for (std::string_view name : {"expert_gate_up", "expert_swiglu", "expert_down"}) {
      EXPECT_DOUBLE_EQ(op_named(slow, name).seconds[pass],
                       2 * op_named(balanced, name).seconds[pass])
          << name;
    }
    for (std::string_view name : {"qkv", "attention", "projection", "router", "shared_gate_up"}) {
      EXPECT_EQ(op_named(slow, name).seconds[pass], op_named(balanced, name).seconds[pass]) << name;
    }
  }
  EXPECT_GT(slow.forward_ns, balanced.forward_ns);
  EXPECT_EQ(slow.a2a_bytes, balanced.a2a_bytes);  // a rank sends its own tokens either way
  // A capacity factor pads every expert to it: the same load as that imbalance.
  Transformer padded = small_moe();
  padded.capacity_factor = 2;
  EXPECT_EQ(derive_position(padded, training, degrees, h100, moe).forward_ns, slow.forward_ns);
}

// EP 4 keeps E / 4 = 1 routed expert per rank: per MoE layer 3 x 384 = 1152 fewer parameters
// (2224 -> 1072), and the same expert FLOPs (a rank computes as many expert tokens as it
// sends).
TEST(MixtureOfExperts, ExpertParallelismDividesTheParametersNotTheFlops) {
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const Training training{.micro_batch_size = 3};
  const LayerRange moe{.first = 2, .count = 2};
  const auto one = derive_position(small_moe(), training, {.data = 8}, h100, moe);
  const auto four = derive_position(small_moe(), training, {.data = 8, .expert = 4}, h100, moe);
  EXPECT_EQ(one.parameters, 2 * 2224);
  EXPECT_EQ(four.parameters, 2 * 1072);
  EXPECT_EQ(four.weight_bytes, 2 * four.parameters);
  for (std::string_view name : {"expert_gate_up", "expert_down"}) {
    for (const Pass pass : {kForward, kBackward, kWeight}) {
      EXPECT_EQ(op_named(four, name).flops[pass], op_named(one, name).flops[pass]);
    }
  }
  // Gradients: the dense 2 x (256 + 32 + 384 + 16) = 1376 reduce over 8 replicas, the 2 x 384
  // = 768 expert ones over 8 / 4 = 2: scaled by (1/2) / (7/8) = 4/7 for the one ring of 8.
  EXPECT_DOUBLE_EQ(four.dp_gradient_bytes, 4 * (1376 + 768 * 4.0 / 7));
  EXPECT_DOUBLE_EQ(one.dp_gradient_bytes, 4 * one.parameters);
  // EP = data: one replica of each expert shard, nothing to reduce.
  const auto all = derive_position(small_moe(), training, {.data = 4, .expert = 4}, h100, moe);
  EXPECT_DOUBLE_EQ(all.dp_gradient_bytes, 4 * 1376);
  // The distributed optimizer shards the expert state over their 2 replicas.
  Training sharded = training;
  sharded.distributed_optimizer = true;
  EXPECT_DOUBLE_EQ(
      derive_position(small_moe(), sharded, {.data = 8, .expert = 4}, h100, moe).optimizer_bytes,
      12 * (1376 / 8.0 + 768 / 2.0));
}

// experts = 0 is the dense model, whatever the other expert fields say.
TEST(MixtureOfExperts, NoExpertsIsTheDenseModel) {
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  Transformer dense = small_moe();
  dense.experts = 0;
  dense.top_k = 0;
  dense.expert_ffn_hidden = 0;
  dense.shared_experts = 0;
  dense.first_dense_layers = 0;
  Transformer zero = small_moe();
  zero.experts = 0;
  EXPECT_EQ(zero.parameters(), dense.parameters());
  EXPECT_EQ(zero.parameters(), 4 * 1040 + 1600 + 8);
  EXPECT_EQ(zero.forward_flops_per_sample(), dense.forward_flops_per_sample());
  const Training training{.micro_batch_size = 3, .distributed_optimizer = true};
  for (const LayerRange range : {LayerRange{.first = 0, .count = 4, .embedding = true},
                                 LayerRange{.first = 2, .count = 2, .head = true}}) {
    const auto a =
        derive_position(zero, training, {.tensor = 2, .data = 4, .expert = 4}, h100, range);
    const auto b = derive_position(dense, training, {.tensor = 2, .data = 4}, h100, range);
    EXPECT_EQ(a.forward_ns, b.forward_ns);
    EXPECT_EQ(a.backward_ns, b.backward_ns);
    EXPECT_EQ(a.weight_ns, b.weight_ns);
    EXPECT_EQ(a.activation, b.activation);
    EXPECT_EQ(a.kept_activation, b.kept_activation);
    EXPECT_EQ(a.recompute_rebuilt, b.recompute_rebuilt);
    EXPECT_EQ(a.backward_frees, b.backward_frees);
    EXPECT_EQ(a.static_memory(), b.static_memory());
    EXPECT_EQ(a.dp_gradient_bytes, b.dp_gradient_bytes);
    EXPECT_EQ(a.optimizer_ns, b.optimizer_ns);
    EXPECT_EQ(a.a2a_per_pass, 0u);
    ASSERT_EQ(a.operators.size(), b.operators.size());
    for (std::size_t i = 0; i < a.operators.size(); ++i) {
      EXPECT_EQ(a.operators[i].name, b.operators[i].name);
      EXPECT_EQ(a.operators[i].seconds, b.operators[i].seconds);
    }
  }
  EXPECT_EQ(layer_seconds(zero, training, 2, h100, 4), layer_seconds(dense, training, 2, h100));
}

// DeepSeek-V3: 3 dense layers (4h^2 + 3 h 18432 + 2h = 601,896,960), 58 MoE layers
// (4h^2 + 256 h + 257 x 3 h 2048 + 2h = 11,525,699,584), the untied 129280 x 7168 embedding
// and head, the final norm: 672,149,632,000. The report's 671B has MLA's attention weights
// (187,107,328 per layer from the config's ranks instead of 4h^2 = 205,520,896): 671.03B.
TEST(MixtureOfExperts, DeepSeekV3Preset) {
  const ModelPreset* preset = find_model_preset("deepseek-v3");
  ASSERT_NE(preset, nullptr);
  const Transformer& m = preset->model;
  EXPECT_EQ(m.layer_parameters(), 601'896'960.0);
  EXPECT_EQ(m.moe_layer_parameters(), 11'525'699'584.0);
  EXPECT_EQ(m.moe_layers(), 58u);
  EXPECT_EQ(m.parameters(), 672'149'632'000.0);
}

}  // namespace
}  // namespace perflow::model
