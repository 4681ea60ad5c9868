#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace perflow::model {

/// The named splits of /pipeline/layers: even_split, balanced_split with every stage on the
/// first stage's GPU, and balanced_split with each stage on its own GPU.
inline constexpr std::string_view kLayerSplits[] = {"even", "balanced", "fastest"};

/// Which layers one pipeline position (one chunk of one stage) holds.
struct LayerRange {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  bool embedding = false;  ///< the first position: the input embedding
  bool head = false;       ///< the last position: final norm, LM head and loss
  /// The first position runs on the same device (DualPipe, the V shapes): the multi-token
  /// prediction modules share its embedding instead of a copy (DeepSeek-V3 report, 2.2).
  bool embedding_on_device = false;
};

/// Megatron-LM's split, the default ("even"): the layers divided evenly over the positions,
/// the embedding riding on the first and the head on the last (Megatron-Core's
/// get_num_layers_to_build). When the positions do not divide the layers (Megatron-LM then
/// needs its uneven-split flags or a layout), the embedding and the head count as a layer
/// each and the layers + 2 units are shared as evenly as possible, the earlier positions
/// taking the spare ones: Megatron-LM's account_for_embedding_in_pipeline_split and
/// account_for_loss_in_pipeline_split where they apply (one layer fewer on the first and the
/// last position, as Llama 3 405B was trained: Llama 3 report, section 3.3.2), torchtitan's
/// default split (_generate_llm_fqn_per_model_part) everywhere. Throws
/// std::invalid_argument if a position would hold nothing.
std::vector<LayerRange> even_split(std::uint32_t layers, std::uint32_t positions);

/// Layers given per position (must add up to the model's layers).
std::vector<LayerRange> explicit_split(std::span<const std::uint32_t> counts);

/// What each unit a position may hold takes on one stage's GPU (seconds of F + B + W + R per
/// microbatch): the embedding, each layer in the model's order, the head.
struct UnitSeconds {
  double embedding = 0;
  std::vector<double> layers;
  double head = 0;
};

/// The split whose slowest stage is the fastest it can be: position k belongs to stage
/// `stage_of[k]`, which runs its units at `stages[stage_of[k]]`'s seconds and all of its
/// positions per microbatch; every position holds at least one unit (the embedding and the
/// head count as one each). With one position a stage, exact (a min-max partition by dynamic
/// programming), and of the splits as fast the one sharing the slack evenly; with several
/// (interleaved, V-shape), each layer goes to the stage whose load after taking it is lowest
/// (exact for equal layers), shared evenly over the stage's positions. Never slower than the
/// even split, which it returns when that is as fast.
/// Throws std::invalid_argument if a position would hold nothing.
std::vector<LayerRange> balanced_split(std::span<const UnitSeconds> stages,
                                       std::span<const std::uint32_t> stage_of);

/// The seconds of the slowest stage of `split` (positions and stages as in balanced_split).
double slowest_stage(std::span<const LayerRange> split, std::span<const UnitSeconds> stages,
                     std::span<const std::uint32_t> stage_of);

}  // namespace perflow::model
