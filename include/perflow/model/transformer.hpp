#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace perflow::model {

/// The feed-forward block: GeLU (two matrices, h -> f -> h) or SwiGLU (three: gate and up
/// h -> f, down f -> h).
enum class Mlp : std::uint8_t { Gelu, SwiGlu };

std::string_view to_string(Mlp mlp);
std::optional<Mlp> parse_mlp(std::string_view text);

/// Multi-head latent attention (DeepSeek-V2/V3, Kimi K2), as Megatron-Core's MLASelfAttention
/// builds it: Q and the keys and values come from low-rank latents. Per token, the down
/// projections h -> q_lora_rank and h -> kv_lora_rank + qk_rope_head_dim are replicated over
/// the tensor-parallel ranks; each latent is normalised and projected up, column-parallel, to
/// the heads (Q: a x (nope + rope); K's nope part and V: a x (nope + v)); the shared rope key
/// is copied to every head; the scores are nope + rope wide, the values v; the output
/// projection a v -> h is row-parallel.
struct Mla {
  std::uint32_t q_lora_rank = 0;  ///< 0: Q projected straight from h (h -> a (nope + rope))
  std::uint32_t kv_lora_rank = 0;
  std::uint32_t qk_nope_head_dim = 0;
  std::uint32_t qk_rope_head_dim = 0;
  std::uint32_t v_head_dim = 0;

  bool operator==(const Mla&) const = default;
};

/// A decoder-only transformer's shape.
struct Transformer {
  std::uint32_t layers = 0;
  std::uint32_t hidden = 0;      ///< h
  std::uint32_t ffn_hidden = 0;  ///< f
  std::uint32_t heads = 0;       ///< a
  std::uint32_t kv_heads = 0;    ///< g (grouped-query attention; = heads for multi-head)
  /// d, a head's width, when it is not h / a (Megatron-LM's --kv-channels, Hugging Face's
  /// head_dim: Qwen3's 128 at h 5120 and 64 heads); 0: h / a.
  std::uint32_t kv_channels = 0;
  /// Multi-head latent attention in place of multi-head / grouped-query attention when
  /// mla.kv_lora_rank is above 0 (kv_heads and kv_channels then say nothing).
  Mla mla{};
  std::uint32_t vocab = 0;     ///< V
  std::uint32_t sequence = 0;  ///< s, tokens per sample
  Mlp mlp = Mlp::Gelu;
  bool tied_embeddings = false;  ///< the LM head shares the embedding matrix
  /// Megatron-LM's --hidden-dropout (its default 0.1): the share of the hidden activations
  /// dropped after the embedding, the attention and the MLP. Above 0 each of those dropouts
  /// keeps a 1-byte mask for its backward; at 0 (Llama, DeepSeek-V3) PyTorch's dropout hands
  /// its input back and keeps nothing.
  double hidden_dropout = 0.1;

  // Mixture of experts (DeepSeek-V3, Megatron-LM MoE): a MoE layer replaces the dense MLP by
  // a router, `experts` routed experts of which each token goes through `top_k`, and
  // `shared_experts` every token goes through; each expert is an MLP of the model's type
  // with inner size expert_ffn_hidden.
  std::uint32_t experts = 0;             ///< E, routed experts per MoE layer (0: dense model)
  std::uint32_t top_k = 0;               ///< k, routed experts per token
  std::uint32_t expert_ffn_hidden = 0;   ///< f_e, an expert's MLP inner size (0: ffn_hidden)
  std::uint32_t shared_experts = 0;      ///< S, experts every token goes through
  std::uint32_t first_dense_layers = 0;  ///< leading layers keeping the dense MLP
  /// Tokens an expert takes relative to a balanced share, padded to it (Switch Transformer);
  /// 0: no capacity, the load follows expert_imbalance.
  double capacity_factor = 0;
  /// Group-limited routing (DeepSeek-V3's node-limited routing; Megatron-Core's
  /// moe_router_num_groups and moe_router_group_topk): the experts in `expert_groups` equal
  /// groups in order, a token's top_k chosen among the `group_top_k` groups it picks. 0: none.
  std::uint32_t expert_groups = 0;
  std::uint32_t group_top_k = 0;
  /// The busiest expert rank's tokens over the balanced share (1: balanced routing).
  double expert_imbalance = 1;

  [[nodiscard]] bool is_mla() const { return mla.kv_lora_rank > 0; }
  /// d, a head's query/key width: with MLA nope + rope, else kv_channels, or h / a when it
  /// is 0.
  [[nodiscard]] double head_dim() const {
    if (is_mla()) return double(mla.qk_nope_head_dim) + mla.qk_rope_head_dim;
    return kv_channels > 0 ? double(kv_channels) : double(hidden) / heads;
  }
  /// "mla", "gqa" (fewer key/value heads than heads) or "mha".
  [[nodiscard]] std::string_view attention_kind() const {
    return is_mla() ? "mla" : kv_heads < heads ? "gqa" : "mha";
  }
  /// The widths of the attention's tensors over all heads, per token: Q and K (a d and g d;
  /// with MLA both a (nope + rope)), V (g d; a v) and the attention's output, which the
  /// output projection takes (a d; a v).
  [[nodiscard]] double query_width() const { return heads * head_dim(); }
  [[nodiscard]] double key_width() const {
    return is_mla() ? query_width() : kv_heads * head_dim();
  }
  [[nodiscard]] double value_width() const {
    return is_mla() ? double(heads) * mla.v_head_dim : kv_heads * head_dim();
  }
  [[nodiscard]] double output_width() const { return is_mla() ? value_width() : query_width(); }
  /// MLA's latents per token, the up projections' inputs: q_lora_rank + kv_lora_rank (the
  /// rope key skips them); 0 without MLA.
  [[nodiscard]] double latent_width() const {
    return is_mla() ? double(mla.q_lora_rank) + mla.kv_lora_rank : 0.0;
  }
  /// The attention's weights: Q (h x a d), K and V (h x g d each), the output projection
  /// (a d x h); with MLA the down and up projections, the latents' two norms and the output
  /// projection (a v x h).
  [[nodiscard]] double attention_parameters() const;
  /// The part of attention_parameters() every tensor-parallel rank holds whole: MLA's down
  /// projections and latent norms (Megatron-Core's duplicated TELinear); 0 without MLA.
  [[nodiscard]] double replicated_attention_parameters() const;
  /// Weights of one dense transformer layer: Q, K, V and output projections, the MLP
  /// matrices, two norms (biases left out).
  [[nodiscard]] double layer_parameters() const;
  /// Weights of one MoE layer: the attention's and norms as a dense layer's, the router
  /// (h x E), every routed expert and the shared ones.
  [[nodiscard]] double moe_layer_parameters() const;
  /// The embedding matrix (V x h); the LM head is as large unless tied.
  [[nodiscard]] double embedding_parameters() const { return double(vocab) * hidden; }
  [[nodiscard]] double parameters() const;
  /// The weights a token goes through: parameters() less, in each MoE layer, the routed
  /// experts it skips (E - top_k of them); parameters() for a dense model.
  [[nodiscard]] double active_parameters() const;
  /// Model FLOPs of one sample's forward pass as Megatron-LM counts them
  /// (megatron/training/training.py, num_floating_point_operations): the matrix
  /// multiplications at 2 per multiply-add, the attention scores and their product with the
  /// values over the causal half of the s x s square, the LM head's logits; no norms, no
  /// softmax, no router. A MoE layer counts the top_k + shared experts a token goes through
  /// (balanced: no imbalance, no capacity padding). A training step does 3x; recomputation
  /// is not counted. The time model counts its own FLOPs (operators.cpp).
  [[nodiscard]] double forward_flops_per_sample() const;

  /// f_e: expert_ffn_hidden, or ffn_hidden when it is 0.
  [[nodiscard]] std::uint32_t expert_hidden() const {
    return expert_ffn_hidden > 0 ? expert_ffn_hidden : ffn_hidden;
  }
  /// The MoE layers among layers [first, first + count): the ones from first_dense_layers
  /// on, none in a dense model.
  [[nodiscard]] std::uint32_t moe_layers_in(std::uint32_t first, std::uint32_t count) const;
  [[nodiscard]] std::uint32_t moe_layers() const { return moe_layers_in(0, layers); }
  /// The load of the slowest expert rank relative to a balanced share: capacity_factor when
  /// given (tokens padded to capacity), else expert_imbalance.
  [[nodiscard]] double expert_load() const {
    return capacity_factor > 0 ? capacity_factor : expert_imbalance;
  }
};

/// A named model with the public source of its shape.
struct ModelPreset {
  std::string_view name;
  std::string_view description;
  std::string_view source;
  Transformer model;
};

std::span<const ModelPreset> model_presets();
/// nullptr if no preset has that name.
const ModelPreset* find_model_preset(std::string_view name);

}  // namespace perflow::model
