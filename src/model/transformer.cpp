#include "perflow/model/transformer.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

namespace perflow::model {
namespace {

constexpr std::string_view kLlama3 =
    "Llama Team, \"The Llama 3 Herd of Models\", arXiv 2407.21783, Table 3";
constexpr std::string_view kLlama2 =
    "Touvron et al., \"Llama 2\", arXiv 2307.09288, Table 1; the released config.json files";
constexpr std::string_view kMegatron =
    "Narayanan et al., \"Efficient Large-Scale Language Model Training on GPU Clusters Using "
    "Megatron-LM\", SC'21, Table 1 (vocabulary 51200, sequence 2048)";

Transformer gpt(std::uint32_t layers, std::uint32_t hidden, std::uint32_t heads) {
  return {.layers = layers,
          .hidden = hidden,
          .ffn_hidden = 4 * hidden,
          .heads = heads,
          .kv_heads = heads,
          .vocab = 51200,
          .sequence = 2048,
          .mlp = Mlp::Gelu,
          .tied_embeddings = true};
}

Transformer llama(std::uint32_t layers, std::uint32_t hidden, std::uint32_t ffn,
                  std::uint32_t heads, std::uint32_t kv_heads, std::uint32_t vocab,
                  std::uint32_t sequence) {
  return {.layers = layers,
          .hidden = hidden,
          .ffn_hidden = ffn,
          .heads = heads,
          .kv_heads = kv_heads,
          .vocab = vocab,
          .sequence = sequence,
          .mlp = Mlp::SwiGlu,
          .tied_embeddings = false,
          .hidden_dropout = 0};
}

constexpr std::string_view kDeepSeekV3 =
    "DeepSeek-AI, \"DeepSeek-V3 Technical Report\", arXiv 2412.19437, section 4.2; the released "
    "config.json (num_hidden_layers 61, first_k_dense_replace 3, intermediate_size 18432, "
    "moe_intermediate_size 2048, n_routed_experts 256, n_shared_experts 1, "
    "num_experts_per_tok 8, n_group 8, topk_group 4, vocab_size 129280; MLA: q_lora_rank 1536, "
    "kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128); 4K "
    "pre-training sequence; one multi-token-prediction module (section 2.2)";

// DeepSeek-V2/V3's and Kimi K2's multi-head latent attention.
constexpr Mla kDeepSeekMla{.q_lora_rank = 1536,
                           .kv_lora_rank = 512,
                           .qk_nope_head_dim = 128,
                           .qk_rope_head_dim = 64,
                           .v_head_dim = 128};

// DeepSeek-V3's layer (h 7168, MLA, SwiGLU experts of f_e 2048 and one shared expert, top 8;
// dense layers of f 18432) with its heads, routed experts, dense layers and vocabulary.
Transformer deepseek_layers(std::uint32_t heads, std::uint32_t experts, std::uint32_t dense_layers,
                            std::uint32_t vocab) {
  Transformer m = llama(61, 7168, 18432, heads, heads, vocab, 4096);
  m.experts = experts;
  m.top_k = 8;
  m.expert_ffn_hidden = 2048;
  m.shared_experts = 1;
  m.first_dense_layers = dense_layers;
  m.mla = kDeepSeekMla;
  return m;
}

// 61 layers, the first 3 dense, the rest MoE with 256 routed experts; node-limited routing: a
// token's experts from 4 of 8 groups (n_group 8, topk_group 4), at most 4 nodes (DeepSeek-V3
// report, section 2.1.2).
Transformer deepseek_v3() {
  Transformer m = deepseek_layers(128, 256, 3, 129280);
  m.mtp_layers = 1;
  m.expert_groups = 8;
  m.group_top_k = 4;
  return m;
}

constexpr std::string_view kKimiK2 =
    "Kimi Team, \"Kimi K2: Open Agentic Intelligence\", arXiv 2507.20534; the released "
    "config.json (DeepSeek-V3's architecture with 64 heads, 384 routed experts and 1 dense "
    "layer; vocab_size 163840)";

constexpr std::string_view kMixtral =
    "Jiang et al., \"Mixtral of Experts\", arXiv 2401.04088, Table 1 (32,768-token context); "
    "the released config.json files (Mixtral-8x7B-v0.1: vocab_size 32000; Mixtral-8x22B-v0.1: "
    "hidden 6144, 56 layers, 48 heads, intermediate_size 16384, vocab_size 32768)";

// Mixtral: every layer's MLP is 8 SwiGLU experts of the model's ffn size, top 2.
Transformer mixtral(std::uint32_t layers, std::uint32_t hidden, std::uint32_t ffn,
                    std::uint32_t heads, std::uint32_t vocab) {
  Transformer m = llama(layers, hidden, ffn, heads, 8, vocab, 32768);
  m.experts = 8;
  m.top_k = 2;
  return m;
}

constexpr std::string_view kQwen3 =
    "Qwen Team, \"Qwen3 Technical Report\", arXiv 2505.09388, Tables 1 and 2 (4,096-token "
    "pre-training sequence); the released config.json files (head_dim 128, vocab_size 151936, "
    "untied embeddings from 8B up). The per-head Q and K norms (2 x 128 weights a layer) are "
    "left out";

// Qwen3: SwiGLU, grouped-query attention with heads of 128 whatever the hidden size.
Transformer qwen3(std::uint32_t layers, std::uint32_t hidden, std::uint32_t ffn,
                  std::uint32_t heads, std::uint32_t kv_heads) {
  Transformer m = llama(layers, hidden, ffn, heads, kv_heads, 151936, 4096);
  m.kv_channels = 128;
  return m;
}

// Qwen3's MoE models: every layer MoE, `experts` routed experts of f_e, top 8, no shared one.
Transformer qwen3_moe(std::uint32_t layers, std::uint32_t hidden, std::uint32_t ffn,
                      std::uint32_t heads, std::uint32_t kv_heads, std::uint32_t expert_ffn) {
  Transformer m = qwen3(layers, hidden, ffn, heads, kv_heads);
  m.experts = 128;
  m.top_k = 8;
  m.expert_ffn_hidden = expert_ffn;
  return m;
}

constexpr std::string_view kGptOss =
    "OpenAI, \"gpt-oss-120b & gpt-oss-20b Model Card\", arXiv 2508.10925, Table 1 and "
    "section 2.1 (116.83B and 20.91B parameters); the released config.json files (64 heads of "
    "64, 8 KV heads, 128-token windows on every other layer from the first, sinks); the "
    "attention's and experts' biases left out";

// gpt-oss: h 2880, SwiGLU experts of 2880, top 4, attention of 64 heads of 64 with 8 KV heads
// alternating a 128-token window and the full sequence, a learned sink per head.
Transformer gpt_oss(std::uint32_t layers, std::uint32_t experts) {
  Transformer m = llama(layers, 2880, 2880, 64, 8, 201088, 4096);
  m.kv_channels = 64;
  m.sliding_window = 128;
  m.window_pattern = "WF";
  m.attention_sinks = true;
  m.experts = experts;
  m.top_k = 4;
  return m;
}

constexpr std::string_view kNemotronH =
    "NVIDIA, \"Nemotron-H: A Family of Accurate and Efficient Hybrid Mamba-Transformer "
    "Models\", arXiv 2504.03624, Table 1 and section 2.1; the released 8B config.json "
    "(hybrid_override_pattern, Mamba-2 heads 128 x 64, state 128, 8 groups; squared-ReLU MLP)";

constexpr std::string_view kNemotronH56b =
    "NVIDIA, \"Nemotron-H: A Family of Accurate and Efficient Hybrid Mamba-Transformer "
    "Models\", arXiv 2504.03624, section 2.1 (118 layers: 54 Mamba-2, 54 MLP, 10 attention); "
    "NVIDIA-NeMo/Megatron-Bridge NemotronHModelProvider56B (hybrid_layer_pattern, hidden 8192, "
    "FFN 32768, 64 heads, 8 KV groups, Mamba-2 heads 256 x 64, state 256, 8 groups)";

constexpr std::string_view kNemotron3Nano =
    "NVIDIA, \"Nemotron 3 Nano: Open, Efficient Mixture-of-Experts Hybrid Mamba-Transformer "
    "Model\", arXiv 2512.20848, section 2 (52 layers: 23 Mamba-2, 23 MoE, 6 attention; 128 "
    "experts of 1856, top 6, a shared expert of 3712; 31.6B total, 3.2B active without the "
    "embeddings)";

// Nemotron-H and Nemotron 3: one part per layer (Megatron-Core's hybrid pattern), a
// squared-ReLU MLP (two matrices), Mamba-2 mixers of groups 8, state 128, kernel 4, chunks of
// 128, an untied head over a 131072-token vocabulary.
Transformer nemotron(std::string pattern, std::uint32_t hidden, std::uint32_t ffn,
                     std::uint32_t heads, std::uint32_t kv_heads, std::uint32_t mamba_heads) {
  Transformer m =
      llama(static_cast<std::uint32_t>(pattern.size()), hidden, ffn, heads, kv_heads, 131072, 8192);
  m.mlp = Mlp::Gelu;
  m.kv_channels = 128;
  m.layer_pattern = std::move(pattern);
  m.mamba = {.state_dim = 128,
             .head_dim = 64,
             .heads = mamba_heads,
             .groups = 8,
             .conv_kernel = 4,
             .chunk_size = 128};
  return m;
}

// Nemotron-H 56B: Megatron-Bridge's NemotronHModelProvider56B (its hybrid_layer_pattern; a
// Mamba-2 state of 256 over 256 heads), the pattern the paper's 54 / 54 / 10 layers describe.
Transformer nemotron_h_56b() {
  Transformer m = nemotron(
      "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-"
      "M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
      8192, 32768, 64, 8, 256);
  m.mamba.state_dim = 256;
  return m;
}

Transformer nemotron3_nano() {
  Transformer m =
      nemotron("MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", 2688, 1856, 32, 2, 64);
  m.experts = 128;
  m.top_k = 6;
  m.shared_experts = 2;  // one shared MLP of 3712, twice an expert's width
  return m;
}

const std::vector<ModelPreset>& presets() {
  static const std::vector<ModelPreset> kPresets = {
      ModelPreset{"gpt3-175b", "GPT-3 175B (96 layers, h 12288)",
                  "Brown et al., \"Language Models are Few-Shot Learners\", NeurIPS 2020, Table "
                  "2.1; vocabulary padded to 51200 as Megatron-LM does",
                  gpt(96, 12288, 96)},
      ModelPreset{"gpt-1.7b", "GPT 1.7B of the Megatron-LM weak-scaling study", kMegatron,
                  gpt(24, 2304, 24)},
      ModelPreset{"gpt-3.6b", "GPT 3.6B of the Megatron-LM weak-scaling study", kMegatron,
                  gpt(30, 3072, 32)},
      ModelPreset{"gpt-7.5b", "GPT 7.5B of the Megatron-LM weak-scaling study", kMegatron,
                  gpt(36, 4096, 32)},
      ModelPreset{"gpt-18b", "GPT 18B of the Megatron-LM weak-scaling study", kMegatron,
                  gpt(40, 6144, 48)},
      ModelPreset{"gpt-39b", "GPT 39B of the Megatron-LM weak-scaling study", kMegatron,
                  gpt(48, 8192, 64)},
      ModelPreset{"gpt-76b", "GPT 76B of the Megatron-LM weak-scaling study", kMegatron,
                  gpt(60, 10240, 80)},
      ModelPreset{"gpt-145b", "GPT 145B of the Megatron-LM weak-scaling study", kMegatron,
                  gpt(80, 12288, 96)},
      ModelPreset{"gpt-310b", "GPT 310B of the Megatron-LM weak-scaling study", kMegatron,
                  gpt(96, 16384, 128)},
      ModelPreset{"gpt-530b", "GPT 530B of the Megatron-LM weak-scaling study", kMegatron,
                  gpt(105, 20480, 128)},
      ModelPreset{"gpt-1t", "GPT 1T of the Megatron-LM weak-scaling study", kMegatron,
                  gpt(128, 25600, 160)},
      ModelPreset{"llama3-8b", "Llama 3 8B (GQA, 8 KV heads)", kLlama3,
                  llama(32, 4096, 14336, 32, 8, 128256, 8192)},
      ModelPreset{"llama3-70b", "Llama 3 70B (GQA, 8 KV heads)", kLlama3,
                  llama(80, 8192, 28672, 64, 8, 128256, 8192)},
      ModelPreset{"llama3-405b", "Llama 3.1 405B (GQA, 8 KV heads)", kLlama3,
                  llama(126, 16384, 53248, 128, 8, 128256, 8192)},
      ModelPreset{"llama3.1-8b", "Llama 3.1 8B (the Llama 3 8B shape)", kLlama3,
                  llama(32, 4096, 14336, 32, 8, 128256, 8192)},
      ModelPreset{"llama3.1-70b", "Llama 3.1 70B (the Llama 3 70B shape)", kLlama3,
                  llama(80, 8192, 28672, 64, 8, 128256, 8192)},
      ModelPreset{"llama3.1-405b", "Llama 3.1 405B (GQA, 8 KV heads)", kLlama3,
                  llama(126, 16384, 53248, 128, 8, 128256, 8192)},
      ModelPreset{"llama2-7b", "Llama 2 7B", kLlama2, llama(32, 4096, 11008, 32, 32, 32000, 4096)},
      ModelPreset{"llama2-13b", "Llama 2 13B", kLlama2,
                  llama(40, 5120, 13824, 40, 40, 32000, 4096)},
      ModelPreset{"llama2-70b", "Llama 2 70B (GQA, 8 KV heads)", kLlama2,
                  llama(80, 8192, 28672, 64, 8, 32000, 4096)},
      ModelPreset{"qwen3-8b", "Qwen3 8B (GQA, 8 KV heads of 128)", kQwen3,
                  qwen3(36, 4096, 12288, 32, 8)},
      ModelPreset{"qwen3-32b", "Qwen3 32B (GQA, 64 heads of 128 at h 5120)", kQwen3,
                  qwen3(64, 5120, 25600, 64, 8)},
      ModelPreset{"qwen3-30b-a3b", "Qwen3 30B-A3B (MoE: 128 experts, top 8; 3.3B active)", kQwen3,
                  qwen3_moe(48, 2048, 6144, 32, 4, 768)},
      ModelPreset{"qwen3-235b-a22b", "Qwen3 235B-A22B (MoE: 128 experts, top 8; 22B active)",
                  kQwen3, qwen3_moe(94, 4096, 12288, 64, 4, 1536)},
      ModelPreset{"mixtral-8x7b", "Mixtral 8x7B (MoE: 8 experts, top 2; 12.9B active)", kMixtral,
                  mixtral(32, 4096, 14336, 32, 32000)},
      ModelPreset{"mixtral-8x22b", "Mixtral 8x22B (MoE: 8 experts, top 2; 39B active)", kMixtral,
                  mixtral(56, 6144, 16384, 48, 32768)},
      ModelPreset{
          "deepseek-v3",
          "DeepSeek-V3 (MoE: 256 routed + 1 shared experts, top 8; MLA, 128 heads; 1 MTP module)",
          kDeepSeekV3, deepseek_v3()},
      ModelPreset{"kimi-k2", "Kimi K2 (MoE: 384 routed + 1 shared experts, top 8; MLA, 64 heads)",
                  kKimiK2, deepseek_layers(64, 384, 1, 163840)},
      ModelPreset{"gpt-oss-20b",
                  "gpt-oss-20b (MoE: 32 experts, top 4; 128-token windows on every other layer)",
                  kGptOss, gpt_oss(24, 32)},
      ModelPreset{"gpt-oss-120b",
                  "gpt-oss-120b (MoE: 128 experts, top 4; 128-token windows on every other layer)",
                  kGptOss, gpt_oss(36, 128)},
      ModelPreset{"nemotron-h-8b", "Nemotron-H 8B (hybrid: 24 Mamba-2, 4 attention, 24 MLP layers)",
                  kNemotronH,
                  nemotron("M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-", 4096, 21504, 32,
                           8, 128)},
      ModelPreset{"nemotron-h-56b",
                  "Nemotron-H 56B (hybrid: 54 Mamba-2, 10 attention, 54 MLP layers)", kNemotronH56b,
                  nemotron_h_56b()},
      ModelPreset{"nemotron-3-nano",
                  "Nemotron 3 Nano 30B-A3B (hybrid MoE: 23 Mamba-2, 6 attention, 23 MoE layers)",
                  kNemotron3Nano, nemotron3_nano()},
  };
  return kPresets;
}

}  // namespace

std::string_view to_string(Mlp mlp) { return mlp == Mlp::SwiGlu ? "swiglu" : "gelu"; }

std::optional<Mlp> parse_mlp(std::string_view text) {
  if (text == "gelu") return Mlp::Gelu;
  if (text == "swiglu") return Mlp::SwiGlu;
  return std::nullopt;
}

double Transformer::attention_parameters() const {
  const double h = hidden;
  if (!is_mla()) return h * (query_width() + key_width() + value_width()) + output_width() * h;
  // Q: down, norm and up, or straight from h; the keys and values: down (latent and the rope
  // key), norm and up (K's nope part and V); the output projection.
  const double q = mla.q_lora_rank > 0
                       ? h * mla.q_lora_rank + mla.q_lora_rank + mla.q_lora_rank * query_width()
                       : h * query_width();
  const double kv_up = double(heads) * (mla.qk_nope_head_dim + mla.v_head_dim);
  const double kv = h * (double(mla.kv_lora_rank) + mla.qk_rope_head_dim) + mla.kv_lora_rank +
                    mla.kv_lora_rank * kv_up;
  return q + kv + output_width() * h;
}

double Transformer::replicated_attention_parameters() const {
  if (!is_mla()) return 0;
  const double h = hidden;
  const double q = mla.q_lora_rank > 0 ? h * mla.q_lora_rank + mla.q_lora_rank : 0.0;
  return q + h * (double(mla.kv_lora_rank) + mla.qk_rope_head_dim) + mla.kv_lora_rank;
}

Mamba Mamba::with_defaults(std::uint32_t hidden) const {
  Mamba m = *this;
  if (m.state_dim == 0) m.state_dim = 128;
  if (m.head_dim == 0) m.head_dim = 64;
  if (m.groups == 0) m.groups = 8;
  if (m.conv_kernel == 0) m.conv_kernel = 4;
  if (m.chunk_size == 0) m.chunk_size = 128;
  if (m.heads == 0) m.heads = static_cast<std::uint32_t>(2ULL * hidden / m.head_dim);
  return m;
}

double Transformer::mamba_parameters() const {
  const double h = hidden;
  const double inner = mamba.inner();
  const double bc = 2.0 * mamba.groups * mamba.state_dim;  // B and C
  const double conv_channels = inner + bc;                 // x, B and C
  // in_proj (z, x, B, C, dt), the convolution's weights and bias, A, D and dt's bias per
  // head, the gated norm, out_proj.
  return h * (2 * inner + bc + mamba.heads) + conv_channels * (mamba.conv_kernel + 1) +
         3.0 * mamba.heads + inner + inner * h;
}

double Transformer::mamba_scan_flops_per_token() const {
  // SSD in chunks of Q tokens (Dao and Gu 2024, section 6, "the SSD algorithm"): within a
  // chunk, C B^T (Q x Q, reducing N, per group) and its decayed product with x (Q x P,
  // reducing Q, per head); across chunks, each chunk's state B^T x (N x P, reducing Q) and
  // the output's read of the states C h (P, reducing N), per head. Per token, at 2 FLOPs a
  // multiply-add: 2 Q N G + 2 Q P H + 4 N P H. The state passing between chunks (N P per
  // chunk and head) is left out.
  const double q = mamba.chunk_size, n = mamba.state_dim, p = mamba.head_dim;
  return 2 * q * n * mamba.groups + 2 * q * p * mamba.heads + 4 * n * p * mamba.heads;
}

double Transformer::mamba_forward_flops_per_token() const {
  const double h = hidden;
  const double inner = mamba.inner();
  const double bc = 2.0 * mamba.groups * mamba.state_dim;
  // in_proj and out_proj, the depthwise convolution (K multiply-adds a channel), the scan.
  return 2 * h * (2 * inner + bc + mamba.heads) + 2 * inner * h +
         2.0 * mamba.conv_kernel * (inner + bc) + mamba_scan_flops_per_token();
}

double Transformer::kind_parameters(LayerKind kind) const {
  const double h = hidden;
  const double matrices = mlp == Mlp::SwiGlu ? 3 : 2;
  double mixer = 0;
  if (kind.has_attention()) mixer = attention_parameters() + (attention_sinks ? heads : 0);
  if (kind.mixer == Mixer::Mamba) mixer = mamba_parameters();
  double feedforward = 0;
  if (kind.feedforward == Feedforward::Dense) feedforward = matrices * h * ffn_hidden;
  if (kind.feedforward == Feedforward::Moe) {
    // The router's h x E matrix, E routed and S shared experts.
    feedforward = h * experts + (double(experts) + shared_experts) * matrices * h * expert_hidden();
  }
  return mixer + feedforward + kind.sublayers() * h;  // a norm before each part
}

double Transformer::layer_parameters() const { return kind_parameters({}); }

double Transformer::mtp_module_parameters() const {
  const double h = hidden;
  double layers_parameters = 0;
  for (const LayerKind& kind : mtp_kinds()) layers_parameters += kind_parameters(kind);
  return 3 * h + 2 * h * h + layers_parameters;
}

double Transformer::moe_layer_parameters() const {
  return kind_parameters({.feedforward = Feedforward::Moe});
}

// Layer l of a hybrid pattern, written `symbol` (an unknown one reads as the MLP).
LayerKind Transformer::pattern_kind(char symbol, std::uint32_t l) const {
  switch (symbol) {
    case 'M':
      return {.mixer = Mixer::Mamba, .feedforward = Feedforward::None};
    case '*':
      return {.mixer = attention_mixer(l), .feedforward = Feedforward::None};
    case 'E':
      return {.mixer = Mixer::None, .feedforward = Feedforward::Moe};
    default:
      return {.mixer = Mixer::None, .feedforward = Feedforward::Dense};
  }
}

Mixer Transformer::attention_mixer(std::uint32_t l) const {
  const bool windowed = sliding_window > 0 && (window_pattern.empty() ||
                                               window_pattern[l % window_pattern.size()] == 'W');
  return windowed ? Mixer::WindowedAttention : Mixer::Attention;
}

LayerKind Transformer::layer_kind(std::uint32_t l) const {
  if (!layer_pattern.empty())
    return pattern_kind(l < layer_pattern.size() ? layer_pattern[l] : '-', l);
  const bool moe = experts > 0 && l >= first_dense_layers;
  return {.mixer = attention_mixer(l), .feedforward = moe ? Feedforward::Moe : Feedforward::Dense};
}

std::vector<LayerKind> Transformer::mtp_kinds() const {
  if (mtp_pattern.empty()) return {layer_kind(layers > 0 ? layers - 1 : 0)};
  // Megatron-Core numbers an MTP module's layers after the decoder's.
  std::vector<LayerKind> kinds;
  for (std::size_t i = 0; i < mtp_pattern.size(); ++i) {
    kinds.push_back(pattern_kind(mtp_pattern[i], layers + static_cast<std::uint32_t>(i)));
  }
  return kinds;
}

void add_layer_kind(std::vector<std::pair<LayerKind, std::uint32_t>>& kinds, LayerKind kind,
                    std::uint32_t count) {
  const auto it = std::lower_bound(kinds.begin(), kinds.end(), kind,
                                   [](const auto& entry, LayerKind k) { return entry.first < k; });
  if (it != kinds.end() && it->first == kind) {
    it->second += count;
  } else {
    kinds.insert(it, {kind, count});
  }
}

std::vector<std::pair<LayerKind, std::uint32_t>> Transformer::layer_kinds_in(
    std::uint32_t first, std::uint32_t count) const {
  std::vector<std::pair<LayerKind, std::uint32_t>> kinds;
  for (std::uint32_t l = first; l < first + count; ++l) add_layer_kind(kinds, layer_kind(l), 1);
  return kinds;
}

double Transformer::window_span() const {
  const double s = sequence;
  if (sliding_window == 0 || sliding_window >= sequence) return s;
  // FlashAttention and cuDNN compute whole tiles of kTile queries x kTile keys and skip the
  // tiles a mask leaves empty: a causal layer the lower triangle's, a windowed one the band's
  // (FlashAttention-2's local attention; Dao 2023). The windowed layer takes the full one's
  // time (the full square s in this convention) times its share of the causal tiles.
  constexpr std::uint64_t kTile = 128;
  const std::uint64_t w = sliding_window;
  const std::uint64_t blocks = (std::uint64_t(sequence) + kTile - 1) / kTile;
  std::uint64_t band = 0;
  for (std::uint64_t j = 0; j < blocks; ++j) {
    // Query tile j's rows j T .. j T + T - 1 see keys from j T - w + 1 on.
    const std::uint64_t first_key = j * kTile + 1 > w ? j * kTile + 1 - w : 0;
    band += j - first_key / kTile + 1;
  }
  const std::uint64_t causal = blocks * (blocks + 1) / 2;
  return s * double(band) / double(causal);
}

std::uint32_t Transformer::moe_layers_in(std::uint32_t first, std::uint32_t count) const {
  if (experts == 0) return 0;
  if (is_hybrid()) {
    std::uint32_t moe = 0;
    for (std::uint32_t l = first; l < first + count; ++l)
      moe += layer_kind(l).feedforward == Feedforward::Moe ? 1U : 0U;
    return moe;
  }
  const std::uint32_t start = std::max(first, first_dense_layers);
  return first + count > start ? first + count - start : 0;
}

double Transformer::parameters() const {
  const double embeddings = tied_embeddings ? 1 : 2;
  double layer_weights = 0;
  for (const auto& [kind, count] : layer_kinds_in(0, layers)) {
    layer_weights += count * kind_parameters(kind);
  }
  return layer_weights + embeddings * embedding_parameters() + hidden;
}

double Transformer::active_parameters() const {
  const double expert = (mlp == Mlp::SwiGlu ? 3 : 2) * double(hidden) * expert_hidden();
  const double skipped = experts > top_k ? double(experts - top_k) : 0.0;
  return parameters() - moe_layers() * skipped * expert;
}

double Transformer::kind_forward_flops(LayerKind kind) const {
  const double s = sequence;
  const double h = hidden;
  const double matrices = mlp == Mlp::SwiGlu ? 3 : 2;
  double layer = 0;
  if (kind.has_attention()) {
    // Q K^T and its product with V, 2 s^2 a d each over the full square; causal: half
    // (Megatron-LM scales this term by the query width over h where --kv-channels sets it;
    // with MLA the scores are a (nope + rope) wide, the values a v). A windowed query sees
    // w keys, not its position's: 2 s w - w^2 of the full square's 2 s^2.
    const double w =
        kind.mixer == Mixer::WindowedAttention ? std::min(s, double(sliding_window)) : s;
    layer +=
        2 * s * attention_parameters() + (2 * s * w - w * w) * (query_width() + output_width());
  }
  if (kind.mixer == Mixer::Mamba) layer += mamba_forward_flops_per_token() * s;
  if (kind.feedforward == Feedforward::Dense) layer += 2 * s * matrices * h * ffn_hidden;
  if (kind.feedforward == Feedforward::Moe) {
    // The top_k routed plus the shared experts a token goes through (no router).
    const double active = double(top_k) + shared_experts;
    layer += 2 * s * active * matrices * h * expert_hidden();
  }
  return layer;
}

double Transformer::forward_flops_per_sample() const {
  const double s = sequence;
  const double h = hidden;
  double flops = 2 * s * h * vocab;  // the LM head's logits
  for (const auto& [kind, count] : layer_kinds_in(0, layers)) {
    flops += count * kind_forward_flops(kind);
  }
  // Each MTP module (Megatron-LM's num_floating_point_operations): its layers (one of the
  // last layer's kind in a transformer), eh_proj and another pass of the logits.
  double module = 2 * s * 2 * h * h + 2 * s * h * vocab;
  for (const LayerKind& kind : mtp_kinds()) module += kind_forward_flops(kind);
  flops += mtp_layers * module;
  return flops;
}

std::span<const ModelPreset> model_presets() { return presets(); }

const ModelPreset* find_model_preset(std::string_view name) {
  const std::vector<ModelPreset>& all = presets();
  const auto it =
      std::find_if(all.begin(), all.end(), [name](const ModelPreset& p) { return p.name == name; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace perflow::model
