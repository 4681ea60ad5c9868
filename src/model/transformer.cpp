#include "perflow/model/transformer.hpp"

#include <algorithm>
#include <array>

namespace perflow::model {
namespace {

constexpr std::string_view kLlama3 =
    "Llama Team, \"The Llama 3 Herd of Models\", arXiv 2407.21783, Table 3";
constexpr std::string_view kLlama2 =
    "Touvron et al., \"Llama 2\", arXiv 2307.09288, Table 1; the released config.json files";
constexpr std::string_view kMegatron =
    "Narayanan et al., \"Efficient Large-Scale Language Model Training on GPU Clusters Using "
    "Megatron-LM\", SC'21, Table 1 (vocabulary 51200, sequence 2048)";

constexpr Transformer gpt(std::uint32_t layers, std::uint32_t hidden, std::uint32_t heads) {
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

constexpr Transformer llama(std::uint32_t layers, std::uint32_t hidden, std::uint32_t ffn,
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
    "pre-training sequence. The multi-token-prediction module is left out";

// DeepSeek-V2/V3's and Kimi K2's multi-head latent attention.
constexpr Mla kDeepSeekMla{.q_lora_rank = 1536,
                           .kv_lora_rank = 512,
                           .qk_nope_head_dim = 128,
                           .qk_rope_head_dim = 64,
                           .v_head_dim = 128};

// DeepSeek-V3's layer (h 7168, MLA, SwiGLU experts of f_e 2048 and one shared expert, top 8;
// dense layers of f 18432) with its heads, routed experts, dense layers and vocabulary.
constexpr Transformer deepseek_layers(std::uint32_t heads, std::uint32_t experts,
                                      std::uint32_t dense_layers, std::uint32_t vocab) {
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
constexpr Transformer deepseek_v3() {
  Transformer m = deepseek_layers(128, 256, 3, 129280);
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
constexpr Transformer mixtral(std::uint32_t layers, std::uint32_t hidden, std::uint32_t ffn,
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
constexpr Transformer qwen3(std::uint32_t layers, std::uint32_t hidden, std::uint32_t ffn,
                            std::uint32_t heads, std::uint32_t kv_heads) {
  Transformer m = llama(layers, hidden, ffn, heads, kv_heads, 151936, 4096);
  m.kv_channels = 128;
  return m;
}

// Qwen3's MoE models: every layer MoE, `experts` routed experts of f_e, top 8, no shared one.
constexpr Transformer qwen3_moe(std::uint32_t layers, std::uint32_t hidden, std::uint32_t ffn,
                                std::uint32_t heads, std::uint32_t kv_heads,
                                std::uint32_t expert_ffn) {
  Transformer m = qwen3(layers, hidden, ffn, heads, kv_heads);
  m.experts = 128;
  m.top_k = 8;
  m.expert_ffn_hidden = expert_ffn;
  return m;
}

constexpr std::array kPresets = {
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
    ModelPreset{"llama2-13b", "Llama 2 13B", kLlama2, llama(40, 5120, 13824, 40, 40, 32000, 4096)},
    ModelPreset{"llama2-70b", "Llama 2 70B (GQA, 8 KV heads)", kLlama2,
                llama(80, 8192, 28672, 64, 8, 32000, 4096)},
    ModelPreset{"qwen3-8b", "Qwen3 8B (GQA, 8 KV heads of 128)", kQwen3,
                qwen3(36, 4096, 12288, 32, 8)},
    ModelPreset{"qwen3-32b", "Qwen3 32B (GQA, 64 heads of 128 at h 5120)", kQwen3,
                qwen3(64, 5120, 25600, 64, 8)},
    ModelPreset{"qwen3-30b-a3b", "Qwen3 30B-A3B (MoE: 128 experts, top 8; 3.3B active)", kQwen3,
                qwen3_moe(48, 2048, 6144, 32, 4, 768)},
    ModelPreset{"qwen3-235b-a22b", "Qwen3 235B-A22B (MoE: 128 experts, top 8; 22B active)", kQwen3,
                qwen3_moe(94, 4096, 12288, 64, 4, 1536)},
    ModelPreset{"mixtral-8x7b", "Mixtral 8x7B (MoE: 8 experts, top 2; 12.9B active)", kMixtral,
                mixtral(32, 4096, 14336, 32, 32000)},
    ModelPreset{"mixtral-8x22b", "Mixtral 8x22B (MoE: 8 experts, top 2; 39B active)", kMixtral,
                mixtral(56, 6144, 16384, 48, 32768)},
    ModelPreset{"deepseek-v3",
                "DeepSeek-V3 (MoE: 256 routed + 1 shared experts, top 8; MLA, 128 heads)",
                kDeepSeekV3, deepseek_v3()},
    ModelPreset{"kimi-k2", "Kimi K2 (MoE: 384 routed + 1 shared experts, top 8; MLA, 64 heads)",
                kKimiK2, deepseek_layers(64, 384, 1, 163840)},
};

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

double Transformer::layer_parameters() const {
  const double h = hidden;
  const double matrices = mlp == Mlp::SwiGlu ? 3 : 2;
  return attention_parameters() + matrices * h * ffn_hidden + 2 * h;
}

double Transformer::moe_layer_parameters() const {
  const double h = hidden;
  const double attention = attention_parameters();
  const double expert = (mlp == Mlp::SwiGlu ? 3 : 2) * h * expert_hidden();
  // The router's h x E matrix, E routed and S shared experts, two norms.
  return attention + h * experts + (double(experts) + shared_experts) * expert + 2 * h;
}

std::uint32_t Transformer::moe_layers_in(std::uint32_t first, std::uint32_t count) const {
  if (experts == 0) return 0;
  const std::uint32_t start = std::max(first, first_dense_layers);
  return first + count > start ? first + count - start : 0;
}

double Transformer::parameters() const {
  const double embeddings = tied_embeddings ? 1 : 2;
  if (experts == 0) {
    return layers * layer_parameters() + embeddings * embedding_parameters() + hidden;
  }
  const std::uint32_t moe = moe_layers();
  return (layers - moe) * layer_parameters() + moe * moe_layer_parameters() +
         embeddings * embedding_parameters() + hidden;
}

double Transformer::active_parameters() const {
  const double expert = (mlp == Mlp::SwiGlu ? 3 : 2) * double(hidden) * expert_hidden();
  const double skipped = experts > top_k ? double(experts - top_k) : 0.0;
  return parameters() - moe_layers() * skipped * expert;
}

double Transformer::forward_flops_per_sample() const {
  const double s = sequence;
  const double h = hidden;
  const double matrices = mlp == Mlp::SwiGlu ? 3 : 2;
  const double gemm = 2 * s * (attention_parameters() + matrices * h * ffn_hidden);
  // Q K^T and its product with V, 2 s^2 a d each over the full square; causal: half
  // (Megatron-LM scales this term by the query width over h where --kv-channels sets it;
  // with MLA the scores are a (nope + rope) wide, the values a v).
  const double attention = s * s * (query_width() + output_width());
  if (experts == 0) return layers * (gemm + attention) + 2 * s * h * vocab;
  // A MoE layer: the top_k routed plus the shared experts per token.
  const double active = double(top_k) + shared_experts;
  const double moe_gemm =
      2 * s * (attention_parameters() + active * matrices * h * expert_hidden());
  const std::uint32_t moe = moe_layers();
  return (layers - moe) * (gemm + attention) + moe * (moe_gemm + attention) + 2 * s * h * vocab;
}

std::span<const ModelPreset> model_presets() { return kPresets; }

const ModelPreset* find_model_preset(std::string_view name) {
  const auto it = std::find_if(kPresets.begin(), kPresets.end(),
                               [name](const ModelPreset& p) { return p.name == name; });
  return it == kPresets.end() ? nullptr : &*it;
}

}  // namespace perflow::model
