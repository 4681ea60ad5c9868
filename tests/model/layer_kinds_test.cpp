// Layers of more than one kind: sliding-window attention (gpt-oss), Mamba-2 mixers and the
// hybrid patterns of Nemotron-H and Nemotron 3 (docs/model.md, "Sliding windows" and
// "Mamba-2 layers").
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/model/derive.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/operators.hpp"
#include "perflow/model/transformer.hpp"

namespace perflow::model {
namespace {

const Transformer& preset(std::string_view name) { return find_model_preset(name)->model; }

// A Mamba-2 mixer small enough to count by hand: h 8, 4 heads of 2 (inner 8), 2 groups of
// state 4 (B and C 16 wide), kernel 3, chunks of 8.
Transformer tiny_hybrid(std::string pattern) {
  Transformer m{.layers = static_cast<std::uint32_t>(pattern.size()),
                .hidden = 8,
                .ffn_hidden = 32,
                .heads = 2,
                .kv_heads = 1,
                .layer_pattern = std::move(pattern),
                .mamba = {.state_dim = 4,
                          .head_dim = 2,
                          .heads = 4,
                          .groups = 2,
                          .conv_kernel = 3,
                          .chunk_size = 8},
                .vocab = 100,
                .sequence = 16};
  return m;
}

TEST(Mamba, ParametersAndFlopsByHand) {
  const Transformer m = tiny_hybrid("M");
  // in_proj 8 x (z 8 + x 8 + B, C 16 + dt 4) = 288; the convolution over x, B and C, 24
  // channels of 3 taps and a bias = 96; A, D, dt's bias per head = 12; the gated norm 8;
  // out_proj 8 x 8 = 64.
  EXPECT_EQ(m.mamba_parameters(), 288 + 96 + 12 + 8 + 64);
  // A Mamba layer: the mixer and its pre-norm.
  EXPECT_EQ(m.kind_parameters({.mixer = Mixer::Mamba, .feedforward = Feedforward::None}), 468 + 8);
  // SSD per token: C B^T 2 Q N G = 128, its product with x 2 Q P H = 128, the chunk states
  // and their read 4 N P H = 128.
  EXPECT_EQ(m.mamba_scan_flops_per_token(), 384);
  // Projections 2 x 8 x 36 + 2 x 8 x 8, the convolution 2 x 3 x 24, the scan.
  EXPECT_EQ(m.mamba_forward_flops_per_token(), 576 + 128 + 144 + 384);
}

TEST(Mamba, OperatorsAddUpToTheFlopsAndSplitOverTensorParallelism) {
  const Transformer m = tiny_hybrid("M");
  const Training training{.micro_batch_size = 2};
  const LayerKind kind{.mixer = Mixer::Mamba, .feedforward = Feedforward::None};
  const std::vector<Operator> ops = layer_operators(m, training, 1, 1, kind);
  std::vector<std::string> names;
  for (const Operator& op : ops) names.emplace_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{"mamba_in_proj", "mamba_conv", "mamba_scan",
                                             "mamba_norm", "mamba_out_proj", "norms", "residual"}));
  // T = 32 tokens: the projections' and the scan's FLOPs (the convolution is priced as the
  // memory it moves).
  const double tokens = 32;
  const double projections = ops[0].flops[kForward] + ops[4].flops[kForward];
  EXPECT_EQ(projections, tokens * (576 + 128));
  EXPECT_EQ(ops[2].flops[kForward], tokens * 384);
  EXPECT_EQ(ops[2].flops[kBackward], 2 * tokens * 384);
  // One sublayer: one norm and one residual kernel forward.
  EXPECT_EQ(ops[5].kernels[kForward], 1);
  EXPECT_EQ(ops[6].kernels[kForward], 1);
  // Two tensor-parallel ranks halve every product.
  const std::vector<Operator> split = layer_operators(m, training, 2, 1, kind);
  for (std::size_t k : {0u, 2u, 4u}) {
    EXPECT_EQ(split[k].flops[kForward] * 2, ops[k].flops[kForward]) << ops[k].name;
  }
}

TEST(Hybrid, LayerKindsFollowThePattern) {
  const Transformer m = tiny_hybrid("M*-M-E");
  EXPECT_EQ(m.layer_kind(0), (LayerKind{Mixer::Mamba, Feedforward::None}));
  EXPECT_EQ(m.layer_kind(1), (LayerKind{Mixer::Attention, Feedforward::None}));
  EXPECT_EQ(m.layer_kind(2), (LayerKind{Mixer::None, Feedforward::Dense}));
  EXPECT_EQ(m.layer_kind(5), (LayerKind{Mixer::None, Feedforward::Moe}));
  // Layers 1-4 (*-M-): in LayerKind's order, with their counts.
  const auto kinds = m.layer_kinds_in(1, 4);
  ASSERT_EQ(kinds.size(), 3u);
  EXPECT_EQ(kinds[0], (std::pair{LayerKind{Mixer::Attention, Feedforward::None}, 1u}));
  EXPECT_EQ(kinds[1], (std::pair{LayerKind{Mixer::Mamba, Feedforward::None}, 1u}));
  EXPECT_EQ(kinds[2], (std::pair{LayerKind{Mixer::None, Feedforward::Dense}, 2u}));
  EXPECT_EQ(m.layer_kind(1).sublayers(), 1u);
  EXPECT_EQ(LayerKind{}.sublayers(), 2u);
}

// A hybrid model's multi-token prediction modules (Megatron-Core's "M*-/*-/*-"): two
// modules of an attention layer and an MLP layer. h 8, 2 heads of 4 (one KV head), f 32
// (GeLU), V 100, s 16.
TEST(Hybrid, MultiTokenPredictionModulesCountedByHand) {
  Transformer m = tiny_hybrid("M*-");
  const Transformer plain = m;
  m.mtp_pattern = "*-";
  m.mtp_layers = 2;
  EXPECT_EQ(m.mtp_kinds(), (std::vector<LayerKind>{{Mixer::Attention, Feedforward::None},
                                                   {Mixer::None, Feedforward::Dense}}));
  // Attention: Q 8 x 8, K and V 8 x 4 each, the output 8 x 8 = 192 and its norm 8; the MLP
  // 2 x 8 x 32 = 512 and its norm; the module's norms 3 x 8 and eh_proj 16 x 8.
  EXPECT_EQ(m.mtp_module_parameters(), 24 + 128 + 200 + 520);
  EXPECT_EQ(m.parameters(), plain.parameters());
  // Per module: the attention (2 s x 192 + s^2 x (8 + 8)), the MLP (2 s x 512), eh_proj
  // (2 s x 16 x 8) and the logits (2 s x 8 x 100).
  EXPECT_EQ(m.forward_flops_per_sample() - plain.forward_flops_per_sample(),
            2 * (6144 + 4096 + 16384 + 4096 + 25600));
  // The last position carries both modules: their layers' and their own weights, and the
  // embedding's copy.
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const Training training{.micro_batch_size = 1, .cuda_graphs = true};
  const LayerRange last{.first = 2, .count = 1, .head = true};
  const PositionCosts with = derive_position(m, training, {}, h100, last);
  const PositionCosts without = derive_position(plain, training, {}, h100, last);
  EXPECT_EQ(with.parameters - without.parameters, 2 * (24 + 128 + 200 + 520) + 100 * 8);
  // With CUDA graphs each of the modules' four layers is a graph; their own operators eager.
  double eager = 0;
  for (const OperatorTime& op : with.operators) {
    if (op.name.starts_with("mtp_")) eager += op.kernels[kForward];
  }
  EXPECT_GT(eager, 0);
  EXPECT_EQ(with.forward_host.kernels, without.forward_host.kernels + 4 + eager);
}

// Nemotron-H 8B: 24 Mamba-2 layers (128 heads of 64, state 128, 8 groups), 4 attention
// layers (32 heads, 8 KV heads of 128), 24 squared-ReLU MLPs of 21504, each with one norm;
// an untied 131072 x 4096 embedding and head; the final norm: 8.10B.
TEST(Hybrid, NemotronH8bCountedByHand) {
  const Transformer& m = preset("nemotron-h-8b");
  ASSERT_EQ(m.layers, 52u);
  const double h = 4096, inner = 128 * 64, bc = 2 * 8 * 128;
  const double mamba = h * (2 * inner + bc + 128) + (inner + bc) * 5 + 3 * 128 + inner + inner * h;
  const double attention = h * 4096 + 2 * h * 1024 + 4096 * h;
  const double mlp = 2 * h * 21504;
  EXPECT_EQ(m.parameters(),
            24 * (mamba + h) + 4 * (attention + h) + 24 * (mlp + h) + 2 * 131072 * h + h);
  EXPECT_NEAR(m.parameters() / 1e9, 8.10, 0.005);
  // The dense layers' FLOPs: the Mamba mixers' per token, the attention (causal, in the full
  // square's convention) and the MLPs, and the logits.
  const double s = 8192;
  EXPECT_EQ(m.forward_flops_per_sample(),
            2 * s * h * 131072 + 4 * (2 * s * attention + s * s * 2 * 4096) +
                24 * s * m.mamba_forward_flops_per_token() + 24 * 2 * s * mlp);
}

// Nemotron-H 56B: 54 Mamba-2 layers (256 heads of 64, state 256, 8 groups), 10 attention
// layers (64 heads, 8 KV heads of 128), 54 squared-ReLU MLPs of 32768, each with one norm; an
// untied 131072 x 8192 embedding and head; the final norm: 56.32B, what the paper calls 56B
// (arXiv 2504.03624 gives no finer total).
TEST(Hybrid, NemotronH56bCountedByHand) {
  const Transformer& m = preset("nemotron-h-56b");
  ASSERT_EQ(m.layers, 118u);
  EXPECT_EQ(m.mamba.state_dim, 256u);
  const double h = 8192, inner = 256 * 64, bc = 2 * 8 * 256;
  const double mamba = h * (2 * inner + bc + 256) + (inner + bc) * 5 + 3 * 256 + inner + inner * h;
  const double attention = h * 8192 + 2 * h * 1024 + 8192 * h;
  const double mlp = 2 * h * 32768;
  EXPECT_EQ(m.parameters(),
            54 * (mamba + h) + 10 * (attention + h) + 54 * (mlp + h) + 2 * 131072 * h + h);
  EXPECT_EQ(std::llround(m.parameters() / 1e9), 56);
  EXPECT_NEAR(m.parameters() / 1e9, 56.32, 0.005);
}

// The published totals (0.5%) and active counts (2%; the cards count the head but not the
// input embedding): gpt-oss-120b 116.83B / 5.13B and gpt-oss-20b 20.91B / 3.61B (arXiv
// 2508.10925, Table 1; their biases left out), Nemotron 3 Nano 31.6B / 3.2B (3.6B with the
// embeddings; arXiv 2512.20848).
TEST(LayerKinds, PublishedTotals) {
  const struct {
    std::string_view name;
    double total, active;
  } published[] = {
      {"gpt-oss-120b", 116.83, 5.13}, {"gpt-oss-20b", 20.91, 3.61}, {"nemotron-3-nano", 31.6, 3.2}};
  for (const auto& p : published) {
    const Transformer& m = preset(p.name);
    EXPECT_NEAR(m.parameters() / 1e9, p.total, p.total * 0.005) << p.name;
    EXPECT_NEAR((m.active_parameters() - m.embedding_parameters()) / 1e9, p.active, p.active * 0.02)
        << p.name;
  }
  EXPECT_NEAR(preset("nemotron-3-nano").active_parameters() / 1e9, 3.6, 0.036);
  EXPECT_EQ(preset("nemotron-3-nano").moe_layers(), 23u);
}

// gpt-oss: layer 0 windowed, layer 1 full, and so on ("WF"); each attention layer carries a
// sink logit per head.
TEST(SlidingWindow, GptOssAlternatesWindowedAndFullLayers) {
  const Transformer& m = preset("gpt-oss-20b");
  EXPECT_EQ(m.layer_kind(0), (LayerKind{Mixer::WindowedAttention, Feedforward::Moe}));
  EXPECT_EQ(m.layer_kind(1), (LayerKind{Mixer::Attention, Feedforward::Moe}));
  EXPECT_EQ(m.layer_kind(22).mixer, Mixer::WindowedAttention);
  const auto kinds = m.layer_kinds_in(0, 24);
  ASSERT_EQ(kinds.size(), 2u);
  EXPECT_EQ(kinds[0].second, 12u);
  EXPECT_EQ(kinds[1].second, 12u);
  Transformer no_sinks = m;
  no_sinks.attention_sinks = false;
  EXPECT_EQ(m.parameters() - no_sinks.parameters(), 24 * 64);
}

// The fused kernel computes whole 128 x 128 tiles: at s 512 and w 128 a query tile needs its
// own and the one before (7 of the 10 causal tiles), so the windowed layer computes 7/10 of
// the causal layer's work: 512 x 0.7 keys a query in the full square's convention.
TEST(SlidingWindow, TheSpanCountsTheBandsTiles) {
  Transformer m = preset("gpt-oss-20b");
  m.sequence = 512;
  EXPECT_DOUBLE_EQ(m.window_span(), 512 * 7.0 / 10);
  // A window as long as the sequence, or none: the full causal layer.
  m.sliding_window = 512;
  EXPECT_EQ(m.window_span(), 512);
  // At 4096 tokens (32 tiles): 1 + 31 x 2 of 528 tiles.
  m.sequence = 4096;
  m.sliding_window = 128;
  EXPECT_DOUBLE_EQ(m.window_span(), 4096 * 63.0 / 528);
  const Training training{.micro_batch_size = 1};
  const auto windowed = layer_operators(m, training, 1, 1, {.mixer = Mixer::WindowedAttention});
  const auto full = layer_operators(m, training, 1, 1, {});
  ASSERT_EQ(windowed[1].name, "window_attention");
  ASSERT_EQ(full[1].name, "attention");
  EXPECT_DOUBLE_EQ(windowed[1].flops[kForward] * 528, full[1].flops[kForward] * 63);
  // Without flash attention the mask covers the same square: nothing is saved.
  const auto unfused = layer_operators(m, {.micro_batch_size = 1, .flash_attention = false}, 1, 1,
                                       {.mixer = Mixer::WindowedAttention});
  EXPECT_EQ(unfused[1].name, "attention_scores");
  // The model FLOPs count the w keys a query sees: 2 s w - w^2 of the full square's s^2.
  Transformer one = m;
  one.layers = 1;
  one.window_pattern = "W";
  Transformer full_one = one;
  full_one.sliding_window = 0;
  const double s = 4096, w = 128;
  EXPECT_EQ(full_one.forward_flops_per_sample() - one.forward_flops_per_sample(),
            (s * s - (2 * s * w - w * w)) * (one.query_width() + one.output_width()));
}

// A position of a hybrid model prices each of its layers by kind: the balanced split sees a
// Mamba layer, an attention layer and an MLP layer of different costs.
TEST(Hybrid, UnitSecondsPriceEachLayerByKind) {
  const Transformer& m = preset("nemotron-h-8b");
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const UnitSeconds units = unit_seconds(m, {.micro_batch_size = 1}, {}, h100);
  ASSERT_EQ(units.layers.size(), 52u);
  // "M-M-M-M*-...": layers 0 and 2 are Mamba, 1 an MLP, 7 attention.
  EXPECT_EQ(units.layers[0], units.layers[2]);
  EXPECT_NE(units.layers[0], units.layers[1]);
  EXPECT_NE(units.layers[7], units.layers[0]);
  EXPECT_NE(units.layers[7], units.layers[1]);
  // A position holding layers 0-3 costs two Mamba and two MLP layers' F + B + W.
  const PositionCosts four =
      derive_position(m, {.micro_batch_size = 1}, {}, h100, {.first = 0, .count = 4});
  const PositionCosts two =
      derive_position(m, {.micro_batch_size = 1}, {}, h100, {.first = 0, .count = 2});
  EXPECT_NEAR(four.forward_ns, 2 * two.forward_ns, 1e-6 * four.forward_ns);
  EXPECT_EQ(four.parameters, 2 * (m.mamba_parameters() + 4096) + 2 * (2 * 4096.0 * 21504 + 4096));
  // Tensor-parallel all-reduces: one per layer (one sublayer each), not two.
  const PositionCosts split =
      derive_position(m, {.micro_batch_size = 1}, {.tensor = 2}, h100, {.first = 0, .count = 4});
  EXPECT_EQ(split.tp_allreduces, 4u);
}

}  // namespace
}  // namespace perflow::model
