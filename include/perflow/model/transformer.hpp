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

/// A decoder-only transformer's shape.
struct Transformer {
  std::uint32_t layers = 0;
  std::uint32_t hidden = 0;      ///< h
  std::uint32_t ffn_hidden = 0;  ///< f
  std::uint32_t heads = 0;       ///< a
  std::uint32_t kv_heads = 0;    ///< g (grouped-query attention; = heads for multi-head)
  std::uint32_t vocab = 0;       ///< V
  std::uint32_t sequence = 0;    ///< s, tokens per sample
  Mlp mlp = Mlp::Gelu;
  bool tied_embeddings = false;  ///< the LM head shares the embedding matrix

  [[nodiscard]] double head_dim() const { return double(hidden) / heads; }
  /// Weights of one transformer layer: Q, K, V and output projections, the MLP matrices,
  /// two norms (biases left out).
  [[nodiscard]] double layer_parameters() const;
  /// The embedding matrix (V x h); the LM head is as large unless tied.
  [[nodiscard]] double embedding_parameters() const { return double(vocab) * hidden; }
  [[nodiscard]] double parameters() const;
  /// Model FLOPs of one sample's forward pass (matrix multiplications: 2 per multiply-add;
  /// attention over the full s x s scores, the SC'21 convention). A training step does 3x.
  [[nodiscard]] double forward_flops_per_sample() const;
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
