#include <cmath>
#include <limits>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/model/derive.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/layer_split.hpp"
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

// Forward FLOPs per sample as Megatron-LM counts them: 24 s h^2 L (1 + s / 12h) + 2 s h V, the
// SC'21 formula (Narayanan et al. 2021: 1 + s / 6h) with causal attention's half square.
TEST(Transformer, ForwardFlopsAreMegatronLms) {
  const double s = 2048, h = 12288, l = 96, v = 51200;
  EXPECT_DOUBLE_EQ(gpt3().forward_flops_per_sample(),
                   24 * s * h * h * l * (1 + s / (12 * h)) + 2 * s * h * v);
  // Llama 3 70B at 8192 tokens, per token and step (x 3) as num_floating_point_operations
  // gives it: 6 h (3 f L) + 6 (h (q + 2 kv) + q h) L + 6 h V + 6 q s L with q = h = 8192,
  // kv = 1024, f = 28672, V = 128256, L = 80: 338.2 + 72.5 + 6.3 + 32.2 = 449.2 GFLOP.
  Transformer llama = find_model_preset("llama3-70b")->model;
  llama.sequence = 8192;
  const double per_token = 3 * llama.forward_flops_per_sample() / 8192;
  const double expected = 6.0 * 8192 * 3 * 28672 * 80 +
                          6.0 * (8192.0 * (8192 + 2048) + 8192.0 * 8192) * 80 +
                          6.0 * 8192 * 128256 + 6.0 * 8192 * 8192 * 80;
  EXPECT_DOUBLE_EQ(per_token, expected);
  EXPECT_NEAR(per_token / 1e9, 449.2, 0.05);
}

double gemm_flops(const std::vector<Operator>& ops, Pass pass) {
  double total = 0;
  for (const Operator& op : ops) total += op.kind == OperatorKind::Gemm ? op.flops[pass] : 0;
  return total;
}

// Two SwiGLU layers of h 8, f 32, two heads of 4 and one K/V head, s 4.
Transformer tiny_layer() {
  return {.layers = 2,
          .hidden = 8,
          .ffn_hidden = 32,
          .heads = 2,
          .kv_heads = 1,
          .vocab = 100,
          .sequence = 4,
          .mlp = Mlp::SwiGlu};
}

TEST(Operators, HandComputedSmallLayer) {
  const Transformer tiny = tiny_layer();
  const Training training{.micro_batch_size = 3};
  const auto ops = layer_operators(tiny, training, 1);
  ASSERT_EQ(ops[0].name, "qkv");
  // T = 12 tokens; K and V are one head of 4: 2 x 12 x 8 x (8 + 8) = 3072.
  EXPECT_EQ(ops[0].flops[kForward], 3072);
  // Its product: T x (h + 2 kv) / t outputs, reducing h.
  EXPECT_EQ(ops[0].shape.m, 12);
  EXPECT_EQ(ops[0].shape.n, 16);
  EXPECT_EQ(ops[0].shape.k, 8);
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

// A head width of its own (kv_channels, Qwen3's head_dim): the tiny layer above with two
// heads of 6 (a d = 12, not h = 8) and one K/V head of 6. Q K V: T x h x (12 + 12); the
// attention 4 T s a d; the projection reduces a d back to h.
TEST(Operators, AHeadWidthOfItsOwn) {
  Transformer tiny = tiny_layer();
  tiny.kv_channels = 6;
  EXPECT_EQ(tiny.head_dim(), 6);
  EXPECT_EQ(tiny.query_width(), 12);
  const auto ops = layer_operators(tiny, {.micro_batch_size = 3}, 1);
  ASSERT_EQ(ops[0].name, "qkv");
  EXPECT_EQ(ops[0].flops[kForward], 2.0 * 12 * 8 * (12 + 12));
  EXPECT_EQ(ops[0].shape.n, 24);
  ASSERT_EQ(ops[1].name, "attention");
  EXPECT_EQ(ops[1].flops[kForward], 4.0 * 12 * 4 * 12);
  ASSERT_EQ(ops[2].name, "projection");
  EXPECT_EQ(ops[2].shape.k, 12);
  EXPECT_EQ(ops[2].shape.n, 8);
  EXPECT_EQ(ops[2].flops[kForward], 2.0 * 12 * 12 * 8);
  // Weights: Q 8 x 12, K and V 8 x 6 each, the projection 12 x 8, the MLP 3 x 8 x 32, two
  // norms.
  EXPECT_EQ(tiny.layer_parameters(), 8 * 12 + 2 * 8 * 6 + 12 * 8 + 3 * 8 * 32 + 2 * 8);
  // Unfused attention: per head, scores s x s reducing d, context s x d reducing s.
  const auto unfused = layer_operators(tiny, {.micro_batch_size = 3, .flash_attention = false}, 1);
  ASSERT_EQ(unfused[1].name, "attention_scores");
  EXPECT_EQ(unfused[1].shape.k, 6);
  EXPECT_EQ(unfused[1].shape.batch, 6);  // b a
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
  // A GEMM operator's F is its product as model::plan_gemm prices it; B its input gradient
  // (m x k, reducing n), W its weight gradient (k x n, reducing m, into fp32 main_grad).
  const Operator gemm{
      .name = "g",
      .kind = OperatorKind::Gemm,
      .flops = {2.0 * 4096 * 1024 * 512, 2.0 * 4096 * 1024 * 512, 2.0 * 4096 * 1024 * 512},
      .shape = {.m = 4096, .n = 1024, .k = 512}};
  EXPECT_EQ(operator_time(gemm, kForward, a100, Precision::Bf16),
            plan_gemm({.m = 4096, .n = 1024, .k = 512}, a100, Precision::Bf16).ns);
  EXPECT_EQ(operator_time(gemm, kBackward, a100, Precision::Bf16),
            plan_gemm({.m = 4096, .n = 512, .k = 1024}, a100, Precision::Bf16).ns);
  EXPECT_EQ(operator_time(gemm, kWeight, a100, Precision::Bf16),
            plan_gemm({.m = 512, .n = 1024, .k = 4096}, a100, Precision::Bf16,
                      GemmOutput::AccumulatedGradient)
                .ns);
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
  // Heads of 256 (kv_channels): Q and the attention's output are a d = 2h wide and K, V
  // g d = h / 2: Q 2 x 2sbh, K and V 4 x sbh / 2, the output 2 x 2sbh, instead of 2sbh, sbh and
  // 2sbh: 31sbh + 2sbh + 1sbh + 2sbh = 36sbh (the scores follow a, unchanged).
  model.kv_channels = 256;
  const auto wide = derive_position(model, training, {}, a100, {.first = 4, .count = 1});
  EXPECT_DOUBLE_EQ(wide.kept_activation[1], 36 * sbh);
  EXPECT_DOUBLE_EQ(wide.kept_activation[0], 36 * sbh + 5 * a * s * s * b);
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

// Llama 3 70B at 8K, micro batch 1, TP 4 with sequence parallelism (T = 8192 tokens, h = 8192,
// f = 28672, g d = 1024, t = 4, r = 1/4), no dropout (the preset's). Per layer in bf16:
// (4 + 2 + 2) T h r [norm inputs, QKV and MLP inputs] + (2Th + 4T gd + 2Th + 6Tf) / t
// = T (2h + h + 1024 + 1.5f) = 68,608 T bytes. In fp8 the QKV, MLP, projection and down GEMMs
// keep their inputs in one byte (Transformer Engine), the projection beside the attention's
// 2-byte output: (4 + 1 + 1) T h r + (2Th + 4T gd + 2Th + Th + 5Tf) / t
// = T (1.5h + 1.25h + 1024 + 1.25f) = 59,392 T. W keeps the four GEMM inputs: in fp8
// T (h/4 + h/4 + h/4 + f/4) bytes. And fp8 keeps each layer GEMM weight's fp8 copy and its
// transpose, 2 bytes a weight.
TEST(Derive, Fp8KeepsGemmInputsInOneByte) {
  const Transformer& llama = find_model_preset("llama3-70b")->model;
  EXPECT_EQ(llama.hidden_dropout, 0.0);
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const double T = 8192, h = 8192, f = 28672;
  Training training{.micro_batch_size = 1, .sequence_parallel = true};
  const LayerRange two{.first = 10, .count = 2};
  const auto bf16 = derive_position(llama, training, {.tensor = 4, .data = 2}, h100, two);
  EXPECT_DOUBLE_EQ(bf16.activation, 2 * 68'608 * T);
  EXPECT_DOUBLE_EQ(bf16.fp8_weight_bytes, 0.0);
  training.precision = Precision::Fp8;
  const auto fp8 = derive_position(llama, training, {.tensor = 4, .data = 2}, h100, two);
  EXPECT_DOUBLE_EQ(fp8.activation, 2 * 59'392 * T);
  EXPECT_DOUBLE_EQ(fp8.activation / 2, 486'539'264.0);
  EXPECT_DOUBLE_EQ(fp8.backward_frees, 1 - 2 * T * (3 * h + f) / 4 / fp8.activation);
  const double gemm_weights = 2 * (llama.layer_parameters() - 2 * h) / 4;
  EXPECT_DOUBLE_EQ(fp8.fp8_weight_bytes, 2 * gemm_weights);
  EXPECT_DOUBLE_EQ(fp8.static_memory(), bf16.static_memory() + 2 * gemm_weights);
  // Dropout at Megatron-LM's 0.1 adds its two 1-byte masks: 2 T h r = 4,096 T a layer.
  Transformer dropped = llama;
  dropped.hidden_dropout = 0.1;
  training.precision = Precision::Bf16;
  EXPECT_DOUBLE_EQ(
      derive_position(dropped, training, {.tensor = 4, .data = 2}, h100, two).activation,
      2 * (68'608 + 4'096) * T);
}

// The host floor's counts on a GPT layer (GeLU, flash attention), per layer: F issues the
// QKV, projection, MLP up and down GEMMs (4), the fused attention (1), the GeLU (1), two
// norms and two bias-dropout-adds (4): 10 kernels; B the four GEMMs' input gradients, the
// attention's three backward kernels, the GeLU's, the norms' four and the residuals' two: 14;
// W the four weight gradients. Tensor parallelism 2 adds an NCCL call per all-reduce (two
// per layer in F and in B), sequence parallelism two (a reduce-scatter and an all-gather).
// fp8 adds Transformer Engine's cast of each GEMM's output gradient (4 a layer) and of the
// inputs no norm writes in fp8 (the projection's and the MLP down GEMM's: 2). Each costs the
// device's kernel_launch (24 us).
TEST(Derive, HostWorkCountsKernelsAndNcclCalls) {
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  EXPECT_DOUBLE_EQ(h100.kernel_launch, 24e-6);
  const Transformer model{.layers = 8,
                          .hidden = 1024,
                          .ffn_hidden = 4096,
                          .heads = 16,
                          .kv_heads = 16,
                          .vocab = 1000,
                          .sequence = 512};
  const LayerRange three{.first = 2, .count = 3};
  Training training{.micro_batch_size = 1};
  const auto plain = derive_position(model, training, {.tensor = 2}, h100, three);
  EXPECT_EQ(plain.forward_host.kernels, 30);
  EXPECT_EQ(plain.backward_host.kernels, 42);
  EXPECT_EQ(plain.weight_host.kernels, 12);
  EXPECT_EQ(plain.forward_host.nccl_calls, 6);
  EXPECT_EQ(plain.backward_host.nccl_calls, 6);
  EXPECT_EQ(plain.weight_host.nccl_calls, 0);
  EXPECT_NEAR(plain.forward_host.ns, 36 * 24'000.0, 1e-6);
  EXPECT_NEAR(plain.backward_host.ns, 48 * 24'000.0, 1e-6);
  // Selective recomputation reruns the attention core (1 kernel a layer); full the forward.
  EXPECT_EQ(plain.recompute_host[1].kernels, 3);
  EXPECT_EQ(plain.recompute_host[2].kernels, 30);
  EXPECT_EQ(plain.recompute_host[2].nccl_calls, 6);
  training.sequence_parallel = true;
  training.precision = Precision::Fp8;
  const auto fp8 = derive_position(model, training, {.tensor = 2}, h100, three);
  EXPECT_EQ(fp8.forward_host.kernels, 30 + 6);
  EXPECT_EQ(fp8.backward_host.kernels, 42 + 12);
  EXPECT_EQ(fp8.weight_host.kernels, 12);
  EXPECT_EQ(fp8.forward_host.nccl_calls, 12);
  // With CUDA graphs, a graph launch per layer and pass; the collectives are captured.
  training.cuda_graphs = true;
  const auto graphs = derive_position(model, training, {.tensor = 2}, h100, three);
  EXPECT_EQ(graphs.forward_host.kernels, 3);
  EXPECT_EQ(graphs.backward_host.kernels, 3);
  EXPECT_EQ(graphs.weight_host.kernels, 3);
  EXPECT_EQ(graphs.forward_host.nccl_calls, 0);
  EXPECT_NEAR(graphs.forward_host.ns, 3 * 24'000.0, 1e-6);
  // The GPU's time does not change with how the host issues it.
  EXPECT_DOUBLE_EQ(graphs.forward_ns, fp8.forward_ns);
  // The embedding (a lookup; its gradient 3 kernels) and the head (final norm, LM head in 16
  // bits, loss: 1 + 1 + 8 in F) stay eager, with the embedding's collective (one call, a
  // reduce-scatter with sequence parallelism).
  const auto edges = derive_position(model, training, {.tensor = 2}, h100,
                                     {.first = 0, .count = 1, .embedding = true, .head = true});
  EXPECT_EQ(edges.forward_host.kernels, 1 + 1 + (1 + 1 + 8));
  EXPECT_EQ(edges.weight_host.kernels, 1 + 3 + 1);
  EXPECT_EQ(edges.forward_host.nccl_calls, 1);
  // Eager, the embedding's collective is one call beside the layer's two of two calls each.
  training.cuda_graphs = false;
  EXPECT_EQ(derive_position(model, training, {.tensor = 2}, h100,
                            {.first = 0, .count = 1, .embedding = true})
                .forward_host.nccl_calls,
            1 + 2 * 2);
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

// A small layer (h 2048, 2,048-token sequences) on an H100: more samples per microbatch fill
// more of each GEMM's last wave, so the time per sample falls with the micro batch, as
// measured GEMMs do (docs/model_validation/gemm_results.md); before the GEMM model looked at
// the whole shape, micro batch 1 to 8 cost the same per sample.
TEST(Derive, LargerMicroBatchesRunCloserToPeak) {
  const Transformer small{.layers = 24,
                          .hidden = 2048,
                          .ffn_hidden = 8192,
                          .heads = 16,
                          .kv_heads = 16,
                          .vocab = 51200,
                          .sequence = 2048};
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  double previous = 0;
  for (std::uint32_t b : {1u, 2u, 4u, 8u}) {
    const PositionCosts c =
        derive_position(small, {.micro_batch_size = b}, {}, h100, {.first = 0, .count = 1});
    const double per_sample = (c.forward_ns + c.backward_ns + c.weight_ns) / b;
    if (previous > 0) {
      EXPECT_LT(per_sample, previous) << "micro batch " << b;
    }
    previous = per_sample;
  }
}

// Durations "measured" on a GPU whose GEMMs reach 50% give back gemm_max 0.5 from the
// model's 0.66, whatever the other kernels take. (Without the GEMMs' fixed latency and with
// memory too fast to bound them, their time is inversely proportional to gemm_max.)
TEST(Derive, FitsGemmEfficiencyToMeasurements) {
  DeviceSpec h100 = find_device_preset("h100-sxm")->spec;
  h100.efficiency.gemm_latency = 0;
  h100.memory_bandwidth = 1e18;
  DeviceSpec slow = h100;
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
  EXPECT_NEAR(*fitted, 0.5, 1e-7);  // the stream-K fix-ups still take a little memory time
  EXPECT_FALSE(fit_gemm_max(std::vector<Observation>{{0, 5, 5}}, 0.7).has_value());
}

std::vector<std::uint32_t> counts_of(const std::vector<LayerRange>& split) {
  std::vector<std::uint32_t> counts;
  for (const LayerRange& r : split) counts.push_back(r.count);
  return counts;
}

TEST(Split, EvenIsMegatronLms) {
  // Divisible: the same count everywhere, the embedding and head riding along.
  const auto split = even_split(96, 8);
  EXPECT_EQ(counts_of(split), std::vector<std::uint32_t>(8, 12));
  EXPECT_TRUE(split[0].embedding);
  EXPECT_FALSE(split[0].head);
  EXPECT_TRUE(split[7].head);
  EXPECT_EQ(split[3].first, 36u);
  EXPECT_EQ(counts_of(even_split(128, 64)), std::vector<std::uint32_t>(64, 2));  // GPT 1T
  // Not divisible but layers + 2 is: one fewer on the first and last (Llama 3.1 405B).
  std::vector<std::uint32_t> llama(16, 8);
  llama.front() = llama.back() = 7;
  EXPECT_EQ(counts_of(even_split(126, 16)), llama);
  EXPECT_EQ(counts_of(even_split(10, 4)), (std::vector<std::uint32_t>{2, 3, 3, 2}));
  // Neither: 13 units as evenly as they go, the first taking the spare one (torchtitan's).
  EXPECT_EQ(counts_of(even_split(11, 4)), (std::vector<std::uint32_t>{3, 3, 3, 2}));
  // DeepSeek-V3's 61 layers on 32 positions: 63 units, the last holds the head alone.
  const auto deepseek = even_split(61, 32);
  EXPECT_EQ(deepseek[0].count, 1u);
  EXPECT_EQ(deepseek[30].count, 2u);
  EXPECT_EQ(deepseek[31].count, 0u);
  EXPECT_TRUE(deepseek[31].head);
  // The embedding and the head alone on a position count as holding something.
  const auto tiny = even_split(2, 4);
  EXPECT_EQ(counts_of(tiny), (std::vector<std::uint32_t>{0, 1, 1, 0}));
  EXPECT_TRUE(tiny[0].embedding);
  EXPECT_TRUE(tiny[3].head);
  EXPECT_THROW((void)even_split(1, 4), std::invalid_argument);
  EXPECT_THROW((void)even_split(10, 0), std::invalid_argument);
}

UnitSeconds uniform_units(std::uint32_t layers, double embedding, double layer, double head) {
  return {.embedding = embedding, .layers = std::vector<double>(layers, layer), .head = head};
}

std::vector<std::uint32_t> one_each(std::uint32_t stages) {
  std::vector<std::uint32_t> stage_of(stages);
  for (std::uint32_t s = 0; s < stages; ++s) stage_of[s] = s;
  return stage_of;
}

TEST(Split, BalancedMinimisesTheSlowestStage) {
  // By hand: 32 layers of 1 s, an embedding of 0.1 s and a head of 3 s on 4 stages. Even
  // (8 each) puts 11 s on the last. Below 9 s at most 8 + 8 + 8 + 5 = 29 layers fit; at 9 s
  // exactly 8 (8.1 s) + 9 + 9 + 6 (+ the head: 9 s) = 32.
  const std::vector<UnitSeconds> four(4, uniform_units(32, 0.1, 1, 3));
  const auto split = balanced_split(four, one_each(4));
  EXPECT_EQ(counts_of(split), (std::vector<std::uint32_t>{8, 9, 9, 6}));
  EXPECT_DOUBLE_EQ(slowest_stage(split, four, one_each(4)), 9.0);
  EXPECT_DOUBLE_EQ(slowest_stage(even_split(32, 4), four, one_each(4)), 11.0);
  // When the even split is as fast, it is the even split: GPT 1T's 2 layers per stage.
  const std::vector<UnitSeconds> light(64, uniform_units(128, 0.1, 1, 0.8));
  EXPECT_EQ(counts_of(balanced_split(light, one_each(64))), std::vector<std::uint32_t>(64, 2));
  // Many splits as fast: a head of 5 s alone on the last stage bounds it; the other three
  // share 8 layers with the slack spread (2 3 3), not piled on one (2 2 4).
  const std::vector<UnitSeconds> heavy(4, uniform_units(8, 0.1, 1, 5));
  const auto slack = balanced_split(heavy, one_each(4));
  EXPECT_EQ(counts_of(slack), (std::vector<std::uint32_t>{2, 3, 3, 0}));
  EXPECT_TRUE(slack[3].head);
  EXPECT_DOUBLE_EQ(slowest_stage(slack, heavy, one_each(4)), 5.0);
  const std::vector<UnitSeconds> empty(4, uniform_units(1, 1, 1, 1));
  EXPECT_THROW((void)balanced_split(empty, one_each(4)), std::invalid_argument);
  // Interleaved, 2 stages x 2 chunks (stage 0 holds positions 0 and 2): a stage runs both
  // chunks, so its load counts: 0.1 + n0 and 3 + (32 - n0), at best 17.1 s and 18 s with 17
  // layers on stage 0 (8 + 9, the spare one on the chunk without the embedding) and 15 on
  // stage 1 (8 + 7, the spare one away from the head). Even: 16.1 s and 19 s.
  const std::vector<UnitSeconds> two(2, uniform_units(32, 0.1, 1, 3));
  const std::vector<std::uint32_t> interleaved = {0, 1, 0, 1};
  const auto chunks = balanced_split(two, interleaved);
  EXPECT_DOUBLE_EQ(slowest_stage(chunks, two, interleaved), 18.0);
  EXPECT_DOUBLE_EQ(slowest_stage(even_split(32, 4), two, interleaved), 19.0);
  EXPECT_EQ(counts_of(chunks), (std::vector<std::uint32_t>{8, 8, 9, 7}));
}

TEST(Split, FastestGivesTheFasterGpuMore) {
  // Stage 1's GPU is twice as slow: of 12 equal units it gets 4, stage 0 gets 8 (8 s each).
  const std::vector<UnitSeconds> gpus = {uniform_units(10, 1, 1, 1), uniform_units(10, 2, 2, 2)};
  const auto split = balanced_split(gpus, one_each(2));
  EXPECT_EQ(counts_of(split), (std::vector<std::uint32_t>{7, 3}));
  EXPECT_TRUE(split[1].head);
  // Two chunks per stage (V shape: stage 0 holds positions 0 and 3): equal GPUs, equal units.
  const std::vector<UnitSeconds> same = {uniform_units(10, 1, 1, 1), uniform_units(10, 1, 1, 1)};
  EXPECT_EQ(counts_of(balanced_split(same, std::vector<std::uint32_t>{0, 1, 1, 0})),
            (std::vector<std::uint32_t>{2, 3, 3, 2}));
  // Interleaved on a fast and a slow stage: 1 + n0 and 2 (2 + n1) at best 8 s each with 7
  // layers on the fast one (3 + 4) and 3 on the slow one (2 + 1, the head's chunk lighter).
  const std::vector<std::uint32_t> interleaved = {0, 1, 0, 1};
  const auto mixed = balanced_split(gpus, interleaved);
  EXPECT_DOUBLE_EQ(slowest_stage(mixed, gpus, interleaved), 8.0);
  EXPECT_EQ(counts_of(mixed), (std::vector<std::uint32_t>{3, 2, 4, 1}));
}

// The slowest stage of the best split by trying every split (small sizes only).
double brute_force_slowest(const std::vector<UnitSeconds>& stages,
                           const std::vector<std::uint32_t>& stage_of) {
  const std::size_t units = stages[0].layers.size() + 2;
  const std::size_t positions = stage_of.size();
  double best = std::numeric_limits<double>::infinity();
  std::vector<std::uint32_t> held(positions, 0);
  // Each position's unit count, at least one, adding up to the units.
  const auto search = [&](auto&& self, std::size_t k, std::size_t left) -> void {
    if (k + 1 == positions) {
      held[k] = static_cast<std::uint32_t>(left);
      std::vector<std::uint32_t> counts(positions);
      for (std::size_t i = 0; i < positions; ++i) {
        counts[i] = held[i] - (i == 0 ? 1 : 0) - (i + 1 == positions ? 1 : 0);
      }
      best = std::min(best, slowest_stage(explicit_split(counts), stages, stage_of));
      return;
    }
    for (std::size_t n = 1; n + (positions - 1 - k) <= left; ++n) {
      held[k] = static_cast<std::uint32_t>(n);
      self(self, k + 1, left - n);
    }
  };
  search(search, 0, units);
  return best;
}

TEST(Split, BalancedIsOptimalAndNeverSlowerThanEven) {
  // A grid of shapes on one GPU kind or two: uneven layers (dense and MoE-like) with one
  // position a stage, equal layers a stage with several (the greedy is exact for those);
  // light or heavy embeddings and heads.
  std::uint64_t state = 12345;
  const auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return 0.25 + static_cast<double>(state >> 40) / static_cast<double>(1ull << 24) * 3;
  };
  int checked = 0;
  for (std::uint32_t layers = 1; layers <= 9; ++layers) {
    for (std::uint32_t positions = 1; positions <= std::min(layers + 2, 6u); ++positions) {
      for (std::uint32_t chunks = 1; chunks <= 2; ++chunks) {
        if (positions % chunks != 0) continue;
        const std::uint32_t stages = positions / chunks;
        std::vector<UnitSeconds> costs(stages);
        for (UnitSeconds& g : costs) {
          g.embedding = next() / 4;
          g.head = next();
          const double layer = next();
          for (std::uint32_t l = 0; l < layers; ++l)
            g.layers.push_back(chunks == 1 ? next() : layer);
        }
        std::vector<std::uint32_t> stage_of(positions);
        for (std::uint32_t k = 0; k < positions; ++k) stage_of[k] = k % stages;
        const auto split = balanced_split(costs, stage_of);
        ASSERT_EQ(split.size(), positions);
        const double slowest = slowest_stage(split, costs, stage_of);
        EXPECT_NEAR(slowest, brute_force_slowest(costs, stage_of), 1e-9)
            << layers << " layers on " << stages << " stages x " << chunks;
        try {
          EXPECT_LE(slowest, slowest_stage(even_split(layers, positions), costs, stage_of));
        } catch (const std::invalid_argument&) {
          // No even split of this shape.
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 4 + 6 + 7 + 6 * 9);  // (positions, chunks) per layer count
}

TEST(Split, UnitSecondsAreThePositionsCosts) {
  // A position's time is the sum of its units': the embedding, its layers and the head.
  // (With a host that issues kernels for free: each pass then takes its GPU time.)
  const Training training{.micro_batch_size = 1, .precision = Precision::Bf16};
  DeviceSpec h100 = find_device_preset("h100-sxm")->spec;
  h100.kernel_launch = 0;
  const Transformer& m = gpt3();
  const UnitSeconds units = unit_seconds(m, training, {.tensor = 8}, h100);
  ASSERT_EQ(units.layers.size(), 96u);
  const PositionCosts first = derive_position(m, training, {.tensor = 8}, h100,
                                              {.first = 0, .count = 12, .embedding = true});
  const double seconds =
      (first.forward_ns + first.backward_ns + first.weight_ns + first.recompute_ns) / 1e9;
  EXPECT_NEAR(units.embedding + 12 * units.layers[0], seconds, 1e-12 * seconds);
  EXPECT_LT(units.embedding, units.layers[0]);
  EXPECT_GT(units.head, units.embedding);
  // Each tensor-parallel collective adds its seconds twice (F and B): two per layer, one for
  // the embedding.
  const UnitSeconds waiting = unit_seconds(m, training, {.tensor = 8}, h100, 0.001);
  EXPECT_NEAR(waiting.layers[5] - units.layers[5], 0.004, 1e-12);
  EXPECT_NEAR(waiting.embedding - units.embedding, 0.002, 1e-12);
  EXPECT_NEAR(waiting.head - units.head, 0.0, 1e-12);
  // A host slower than the GPU bounds every pass: a layer then takes its kernels' and NCCL
  // calls' worth of host time (10 + 14 + 4 kernels, 2 + 2 calls, at 1 ms).
  h100.kernel_launch = 1e-3;
  EXPECT_NEAR(unit_seconds(m, training, {.tensor = 8}, h100).layers[5], 0.032, 1e-12);
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

// Per sample (s = 4): a dense layer 2 s (256 + 768) = 8192 GEMM FLOPs + causal attention
// 2 s^2 h = 256, so 8448; a MoE layer 2 s (256 + (k + S) 3 h f_e = 3 x 384) = 2 x 4 x 1408 =
// 11264 (no router, as Megatron-LM counts), + 256 = 11520; the LM head 2 s h V = 6400.
// 2 x 8448 + 2 x 11520 + 6400 = 46336. The imbalance and the capacity factor do not change
// model FLOPs.
TEST(MixtureOfExperts, ForwardFlopsCountTheActiveExperts) {
  Transformer m = small_moe();
  EXPECT_EQ(m.forward_flops_per_sample(), 46336);
  m.expert_imbalance = 2;
  m.capacity_factor = 1.5;
  EXPECT_EQ(m.forward_flops_per_sample(), 46336);
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

// The slowest expert rank with twice the balanced tokens does twice the routed experts'
// work: their GEMMs price a product of twice the tokens, their activation takes twice the
// time; the attention, the router and the shared expert stay as they were.
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
    EXPECT_DOUBLE_EQ(op_named(slow, "expert_swiglu").seconds[pass],
                     2 * op_named(balanced, "expert_swiglu").seconds[pass]);
    for (std::string_view name : {"expert_gate_up", "expert_down"}) {
      EXPECT_EQ(op_named(slow, name).flops[pass], 2 * op_named(balanced, name).flops[pass]);
      EXPECT_GE(op_named(slow, name).seconds[pass], op_named(balanced, name).seconds[pass]);
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
  EXPECT_EQ(unit_seconds(zero, training, {.tensor = 2, .data = 4, .expert = 4}, h100).layers,
            unit_seconds(dense, training, {.tensor = 2, .data = 4}, h100).layers);
}

// DeepSeek-V3 with multi-head latent attention (h 7168, 128 heads; q rank 1536, kv rank 512,
// qk 128 + 64, v 128): per layer Q down 7168 x 1536 = 11,010,048, Q up 1536 x 128 x 192 =
// 37,748,736, KV down 7168 x 576 = 4,128,768, KV up 512 x 128 x 256 = 16,777,216, the output
// projection 16,384 x 7168 = 117,440,512 and the latents' norms 1536 + 512: 187,107,328 (the
// bracket of Megatron-LM's MLA FLOPs too). 3 dense layers (+ 3 h 18432 + 2h = 583,483,392),
// 58 MoE layers (+ 256 h + 257 x 3 h 2048 + 2h = 11,507,286,016), the untied 129280 x 7168
// embedding and head, the final norm: 671,026,404,352, the report's 671B; 37.6B of them
// active (the report's 37B).
TEST(MixtureOfExperts, DeepSeekV3Preset) {
  const ModelPreset* preset = find_model_preset("deepseek-v3");
  ASSERT_NE(preset, nullptr);
  const Transformer& m = preset->model;
  ASSERT_TRUE(m.is_mla());
  EXPECT_EQ(m.attention_parameters(), 187'107'328.0);
  EXPECT_EQ(m.replicated_attention_parameters(), 11'010'048.0 + 1536 + 4'128'768.0 + 512);
  EXPECT_EQ(m.layer_parameters(), 583'483'392.0);
  EXPECT_EQ(m.moe_layer_parameters(), 11'507'286'016.0);
  EXPECT_EQ(m.moe_layers(), 58u);
  EXPECT_EQ(m.parameters(), 671'026'404'352.0);
  EXPECT_NEAR(m.active_parameters() / 1e9, 37, 37 * 0.02);
  // Kimi K2: the same layers with 64 heads (101,124,096 attention weights), 384 routed
  // experts and one dense layer; 1.026T, the README's "1T", 32.9B active ("32B").
  const Transformer& k2 = find_model_preset("kimi-k2")->model;
  EXPECT_EQ(k2.attention_parameters(), 101'124'096.0);
  EXPECT_NEAR(k2.parameters() / 1e12, 1.0, 0.03);
  EXPECT_NEAR(k2.active_parameters() / 1e9, 32, 32 * 0.03);
}

// Recomputing MLA's up projections (Megatron-Core's --recompute-modules mla_up_proj): F keeps
// no Q, K, V (2 T (a 192 + a 192 + a 128) bytes a layer, t = 1) and B reruns q_up and kv_up.
TEST(MixtureOfExperts, RecomputingMlaUpProjections) {
  const Transformer& m = find_model_preset("deepseek-v3")->model;
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const LayerRange dense{.first = 0, .count = 1};
  Training training{.micro_batch_size = 1};
  const auto kept = derive_position(m, training, {}, h100, dense);
  training.recompute_mla_up_proj = true;
  const auto rebuilt = derive_position(m, training, {}, h100, dense);
  const double tokens = 4096, a = 128;
  EXPECT_DOUBLE_EQ(kept.kept_activation[0] - rebuilt.kept_activation[0],
                   2 * tokens * (a * 192 + a * 192 + a * 128));
  double up_forward = 0;
  for (const OperatorTime& op : kept.operators) {
    if (op.name == "q_up" || op.name == "kv_up") up_forward += op.seconds[kForward] * 1e9;
  }
  EXPECT_GT(up_forward, 0);
  EXPECT_NEAR(rebuilt.backward_ns - kept.backward_ns, up_forward, 1e-6 * up_forward);
  EXPECT_DOUBLE_EQ(rebuilt.forward_ns, kept.forward_ns);
}

// MLA's operators on one tensor-parallel rank of two, with sequence parallelism: the down
// projections whole on the rank's T / 2 tokens, the up projections and the output projection
// split; the fused attention 2 T s (a 192 + a 128) / t; Megatron-LM's model FLOPs count the
// same matrices (the parameters, norms included) and s^2 (a 192 + a 128) for the core.
TEST(MixtureOfExperts, MultiHeadLatentAttentionOperators) {
  Transformer m = find_model_preset("deepseek-v3")->model;
  m.sequence = 4096;
  const Training training{.micro_batch_size = 1, .sequence_parallel = true};
  const auto ops = layer_operators(m, training, 2);  // the attention's first
  const double tokens = 4096, h = 7168, a = 128;
  ASSERT_GE(ops.size(), 6u);
  EXPECT_EQ(ops[0].name, "q_down");
  EXPECT_EQ(ops[0].shape.m, tokens / 2);
  EXPECT_EQ(ops[0].shape.n, 1536);
  EXPECT_EQ(ops[0].shape.k, h);
  EXPECT_EQ(ops[1].name, "q_up");
  EXPECT_EQ(ops[1].shape.m, tokens);
  EXPECT_EQ(ops[1].shape.n, a * 192 / 2);
  EXPECT_EQ(ops[2].name, "kv_down");
  EXPECT_EQ(ops[2].shape.n, 512 + 64);
  EXPECT_EQ(ops[3].name, "kv_up");
  EXPECT_EQ(ops[3].shape.n, a * (128 + 128) / 2);
  EXPECT_EQ(ops[4].name, "attention");
  EXPECT_EQ(ops[4].flops[kForward], 2 * tokens * 4096 * (a * 192 + a * 128) / 2);
  EXPECT_EQ(ops[5].name, "projection");
  EXPECT_EQ(ops[5].shape.k, a * 128 / 2);
  EXPECT_EQ(ops[5].shape.n, h);
  // Model FLOPs of the dense layers' attention per sample: 2 s (the matrices) + s^2 (the core).
  Transformer dense = m;
  dense.experts = 0;
  dense.layers = 1;
  dense.mtp_layers = 0;
  const double s = 4096;
  EXPECT_DOUBLE_EQ(
      dense.forward_flops_per_sample(),
      2 * s * (187'107'328.0 + 3 * h * 18432) + s * s * (a * 192 + a * 128) + 2 * s * h * 129280);
}

// Qwen3 (arXiv 2505.09388 and the released configs), Mixtral (arXiv 2401.04088) and Llama
// 3.1 (the released weights' counts: 8.03B, 70.6B, 406B): every preset's parameters to 0.5%
// of the published totals, the MoE models' active ones to the published rounding. Qwen3-32B's
// 64 heads of 128 make Q 8192 wide at h 5120: h (8192 + 2 x 1024) + 8192 h + 3 h 25600 + 2h a
// layer.
TEST(Transformer, PublishedPresetTotals) {
  const auto model = [](std::string_view name) { return find_model_preset(name)->model; };
  EXPECT_EQ(model("qwen3-32b").layer_parameters(),
            5120.0 * (8192 + 2048) + 8192.0 * 5120 + 3 * 5120.0 * 25600 + 2 * 5120);
  const struct {
    std::string_view name;
    double total, active;  // billions, as the report's tables give them
  } published[] = {
      {"qwen3-8b", 8.2, 8.2},       {"qwen3-32b", 32.8, 32.8},    {"qwen3-30b-a3b", 30.5, 3.3},
      {"qwen3-235b-a22b", 235, 22}, {"mixtral-8x7b", 46.7, 12.9}, {"mixtral-8x22b", 141, 39},
      {"llama3.1-8b", 8.03, 8.03},  {"llama3.1-70b", 70.6, 70.6}, {"llama3.1-405b", 406, 406}};
  for (const auto& p : published) {
    const Transformer m = model(p.name);
    EXPECT_NEAR(m.parameters() / 1e9, p.total, p.total * 0.005) << p.name;
    // The Qwen3 report rounds 3.35B to 3.3B, 22.2B to 22B; Mixtral's 12.88B and 39.2B.
    EXPECT_NEAR(m.active_parameters() / 1e9, p.active, p.active * 0.02) << p.name;
    EXPECT_EQ(m.head_dim(), 128) << p.name;
  }
  // Qwen3-8B: 6.95B without the embeddings (the model card's "non-embedding" count).
  const Transformer q8 = model("qwen3-8b");
  EXPECT_NEAR((q8.parameters() - 2 * q8.embedding_parameters()) / 1e9, 6.95, 0.005);
}

// Megatron-LM's num_floating_point_operations with --kv-channels: the attention's GEMMs and
// its score term follow the query width a d, not h (Qwen3-32B: a d = 8192, h = 5120).
TEST(Transformer, ForwardFlopsFollowTheQueryWidth) {
  const Transformer m = find_model_preset("qwen3-32b")->model;
  const double s = 4096, h = 5120, q = 8192, kv = 1024, f = 25600, l = 64, v = 151936;
  EXPECT_DOUBLE_EQ(
      m.forward_flops_per_sample(),
      l * (2 * s * (h * (q + 2 * kv) + q * h + 3 * h * f) + 2 * s * s * q) + 2 * s * h * v);
}

}  // namespace
}  // namespace perflow::model
