#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "perflow/core/hardware.hpp"
#include "perflow/model/device_spec.hpp"

namespace perflow::model {

/// How an fp8 run scales its tensors (Megatron-LM's --fp8-recipe, Transformer Engine's
/// recipes): Delayed (DelayedScaling: each tensor's scale from the amax history, recorded
/// while casting), Current (Float8CurrentScaling, Megatron's "tensorwise": the tensor's own
/// amax, read before the cast) or Blockwise (Float8BlockScaling, DeepSeek-V3's: a scale per
/// 1x128 activation block and per 128x128 weight block).
enum class Fp8Recipe : std::uint8_t { Delayed, Current, Blockwise };
/// Their names in configs, in the enum's order.
inline constexpr std::string_view kFp8RecipeNames[] = {"delayed", "current", "blockwise"};

std::string_view to_string(Fp8Recipe recipe);
std::optional<Fp8Recipe> parse_fp8_recipe(std::string_view text);

/// What quantising one tensor for a GEMM costs on the GPU: kernels launched and bytes moved
/// through memory per element of the tensor.
struct CastCost {
  double kernels = 0;
  double bytes_per_element = 0;
};

/// The quantisation work of a Transformer Engine GEMM in `precision` (none when it is not
/// quantised) on a GPU of `generation`, and what it keeps. docs/model.md, "Low precision",
/// gives each recipe's kernels with its source.
struct Quantisation {
  Precision precision = Precision::Bf16;
  Fp8Recipe recipe = Fp8Recipe::Delayed;
  GpuGeneration generation = GpuGeneration::Hopper;

  /// A GEMM's input before its F; `after_norm`: a LayerNormLinear's norm output, which the
  /// delayed and current recipes quantise within the norm's kernel.
  [[nodiscard]] CastCost input(bool after_norm) const;
  /// A GEMM's output gradient before its B.
  [[nodiscard]] CastCost gradient() const;
  /// Bytes per element of a GEMM input kept for the backward (2 when not quantised).
  [[nodiscard]] double kept_input_bytes() const;
  /// Bytes per GEMM parameter of the quantised weights kept across a step's microbatches
  /// (0 when not quantised).
  [[nodiscard]] double weight_cache_bytes() const;
};

}  // namespace perflow::model
