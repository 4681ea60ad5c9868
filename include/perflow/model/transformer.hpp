#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

/// A Mamba-2 mixer (Dao and Gu, "Transformers are SSMs", ICML 2024), as Megatron-Core's
/// MambaMixer builds it: an input projection h -> z, x (heads x head_dim each), B and C
/// (groups x state_dim each) and dt (heads); a causal depthwise convolution over x, B and C;
/// the chunked selective scan (SSD) in chunks of chunk_size tokens; a gated RMSNorm; the
/// output projection heads x head_dim -> h.
struct Mamba {
  std::uint32_t state_dim = 0;  ///< N, the state per head and channel
  std::uint32_t head_dim = 0;   ///< P
  std::uint32_t heads = 0;      ///< H, so the inner width is H P
  std::uint32_t groups = 0;     ///< G, heads sharing B and C
  std::uint32_t conv_kernel = 0;
  std::uint32_t chunk_size = 0;  ///< Q, the scan's chunk

  bool operator==(const Mamba&) const = default;
  [[nodiscard]] double inner() const { return double(heads) * head_dim; }
  /// The fields left 0 at Megatron-Core's HybridConfig defaults: state 128, heads of 64, 8
  /// groups, kernel 4, chunks of 128, and expand 2 (2 hidden / head_dim heads, rounded down).
  [[nodiscard]] Mamba with_defaults(std::uint32_t hidden) const;
};

/// Mamba's fields by their config names (/model/mamba), for what reads and writes them.
inline constexpr std::array<std::pair<std::string_view, std::uint32_t Mamba::*>, 6> kMambaFields{{
    {"state_dim", &Mamba::state_dim},
    {"head_dim", &Mamba::head_dim},
    {"heads", &Mamba::heads},
    {"groups", &Mamba::groups},
    {"conv_kernel", &Mamba::conv_kernel},
    {"chunk_size", &Mamba::chunk_size},
}};

/// What mixes the tokens in a layer.
enum class Mixer : std::uint8_t {
  Attention,          ///< self-attention over the causal sequence
  WindowedAttention,  ///< self-attention over the sliding window
  Mamba,              ///< a Mamba-2 mixer
  None,               ///< a hybrid model's MLP or MoE layer
};

/// What transforms each token after the mixer.
enum class Feedforward : std::uint8_t {
  Dense,  ///< the dense MLP
  Moe,    ///< the router, the routed and the shared experts
  None,   ///< a hybrid model's attention or Mamba layer
};

/// A layer's parts: a standard layer has both (each with its pre-norm and residual), a hybrid
/// model's one of them.
struct LayerKind {
  Mixer mixer = Mixer::Attention;
  Feedforward feedforward = Feedforward::Dense;
  /// Its GEMMs in bf16 although the run is quantised (Training::keeps_bf16).
  bool sixteen_bit = false;

  auto operator<=>(const LayerKind&) const = default;
  /// The norm + residual blocks the layer holds: 2 for a standard layer, 1 in a hybrid model.
  [[nodiscard]] std::uint32_t sublayers() const {
    return (mixer != Mixer::None ? 1U : 0U) + (feedforward != Feedforward::None ? 1U : 0U);
  }
  [[nodiscard]] bool has_attention() const {
    return mixer == Mixer::Attention || mixer == Mixer::WindowedAttention;
  }
};

/// Adds `count` layers of `kind` to `kinds`, which stay in LayerKind's order with one entry
/// a kind.
void add_layer_kind(std::vector<std::pair<LayerKind, std::uint32_t>>& kinds, LayerKind kind,
                    std::uint32_t count);

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
  /// Sliding-window attention (Mistral; gpt-oss's 128): a windowed layer's query attends to
  /// the `sliding_window` tokens up to and including it. 0: every layer attends to all.
  std::uint32_t sliding_window = 0;
  /// Which layers are windowed, repeated over the layers by index: 'W' windowed, 'F' full
  /// (gpt-oss: "WF", Megatron-LM's --window-attn-skip-freq 2). Empty: every attention layer
  /// when sliding_window is set.
  std::string window_pattern{};
  /// Learned per-head sink logits in the softmax's denominator (gpt-oss): a heads weights a
  /// layer, computed inside the fused attention.
  bool attention_sinks = false;
  /// A hybrid model's layers, one character each (Megatron-Core's hybrid_override_pattern):
  /// 'M' a Mamba-2 layer, '*' attention, '-' an MLP, 'E' a MoE layer, each with its own norm
  /// and residual. Empty: every layer attention then the MLP (or MoE).
  std::string layer_pattern{};
  Mamba mamba{};               ///< the 'M' layers' mixer
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
  /// Multi-token prediction (DeepSeek-V3 report, section 2.2; Megatron-Core's
  /// MultiTokenPredictionBlock): modules after the last layer, on the last pipeline position,
  /// each predicting one token further: the next tokens' embedding and the hidden state,
  /// each normalised, concatenated and projected 2h -> h (eh_proj), one layer of the last
  /// layer's kind (or mtp_pattern's layers), its own final norm, then the shared LM head and
  /// a loss.
  std::uint32_t mtp_layers = 0;
  /// A hybrid model's MTP module: its layers, one character each as in layer_pattern
  /// (Megatron-Core's unified hybrid pattern repeats it after each '/', "M*M*/*E/*E" two
  /// modules of an attention and a MoE layer). Empty: one layer of the last layer's kind.
  std::string mtp_pattern{};

  [[nodiscard]] bool is_mla() const { return mla.kv_lora_rank > 0; }
  [[nodiscard]] bool is_hybrid() const { return !layer_pattern.empty(); }
  [[nodiscard]] bool has_mamba() const {
    return layer_pattern.find('M') != std::string::npos ||
           mtp_pattern.find('M') != std::string::npos;
  }
  /// Whether `t` tensor-parallel ranks split the attention heads and, with Mamba layers, the
  /// Mamba heads and groups (Megatron-Core's MambaMixer divides both).
  [[nodiscard]] bool splits_over(std::uint32_t t) const {
    return heads % t == 0 && (!has_mamba() || (mamba.heads % t == 0 && mamba.groups % t == 0));
  }
  /// Layer l's parts: from layer_pattern, or attention (windowed as window_pattern says) and
  /// the MLP, MoE from first_dense_layers on.
  [[nodiscard]] LayerKind layer_kind(std::uint32_t l) const;
  /// Layer l written `symbol` in a hybrid pattern ('M', '*', '-' or 'E').
  [[nodiscard]] LayerKind pattern_kind(char symbol, std::uint32_t l) const;
  /// Layer l's attention: windowed as sliding_window and window_pattern say, else full.
  [[nodiscard]] Mixer attention_mixer(std::uint32_t l) const;
  /// The kinds of layers [first, first + count) with how many of each, in LayerKind's order.
  [[nodiscard]] std::vector<std::pair<LayerKind, std::uint32_t>> layer_kinds_in(
      std::uint32_t first, std::uint32_t count) const;
  /// The weights of one layer of `kind`: its mixer's, its feed-forward's and a norm each.
  [[nodiscard]] double kind_parameters(LayerKind kind) const;
  /// One layer of `kind`'s forward FLOPs per sample (model FLOPs: the matrices, the
  /// attention core over the keys a query sees, the Mamba mixer's).
  [[nodiscard]] double kind_forward_flops(LayerKind kind) const;
  /// The Mamba-2 mixer's weights: the input projection, the convolution (with its bias),
  /// A, D and the dt bias per head, the gated norm and the output projection.
  [[nodiscard]] double mamba_parameters() const;
  /// The Mamba-2 mixer's forward FLOPs per token: its projections, the convolution and the
  /// chunked scan (docs/model.md, "Mamba-2 layers").
  [[nodiscard]] double mamba_forward_flops_per_token() const;
  /// Of those, the chunked scan's (SSD's four products; Dao and Gu 2024, section 6).
  [[nodiscard]] double mamba_scan_flops_per_token() const;
  /// What a windowed layer's fused attention computes, as keys per query in the full
  /// square's convention (s for a full causal layer, whose kernel skips the empty half):
  /// s times the window band's share of the causal 128 x 128 tiles (docs/model.md,
  /// "Sliding windows").
  [[nodiscard]] double window_span() const;
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
  /// The kinds of an MTP module's layers: mtp_pattern's, else the last layer's (Megatron-Core
  /// builds a transformer's from the decoder's last layer spec).
  [[nodiscard]] std::vector<LayerKind> mtp_kinds() const;
  /// One MTP module's own weights: its two input norms, eh_proj (2h x h), its layers and its
  /// final norm (the embedding and the LM head are the model's). Not in parameters(), as
  /// the DeepSeek-V3 report counts 671B "plus 14B" for the module with their copies.
  [[nodiscard]] double mtp_module_parameters() const;
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
