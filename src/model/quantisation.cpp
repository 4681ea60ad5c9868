#include "perflow/model/quantisation.hpp"

#include <iterator>

namespace perflow::model {
namespace {

constexpr double kSixteenBit = 2;  // the bf16 tensor a cast reads

// Whether a quantised tensor needs a second, transposed copy for the products that read it
// the other way (B's and W's). Hopper's fp8 tensor cores take only the TN layout, so
// Transformer Engine writes the transpose with the cast (cast_transpose); Blackwell's take
// either and one copy serves all (transformer_engine/common/transformer_engine.cpp,
// nvte_is_non_tn_fp8_gemm_supported). Block-scaled formats always keep two: their blocks run
// along rows for one product and along columns for the other.
double copies(Precision precision, GpuGeneration generation) {
  if (precision == Precision::Fp8) return generation >= GpuGeneration::Blackwell ? 1 : 2;
  return 2;
}

}  // namespace

std::string_view to_string(Fp8Recipe recipe) {
  return kFp8RecipeNames[static_cast<std::size_t>(recipe)];
}

std::optional<Fp8Recipe> parse_fp8_recipe(std::string_view text) {
  for (std::size_t i = 0; i < std::size(kFp8RecipeNames); ++i) {
    if (kFp8RecipeNames[i] == text) return static_cast<Fp8Recipe>(i);
  }
  return std::nullopt;
}

double Quantisation::kept_input_bytes() const {
  if (!quantised(precision)) return kSixteenBit;
  // Blockwise: an fp32 scale per 128 elements.
  if (precision == Precision::Fp8 && recipe == Fp8Recipe::Blockwise) return 1.0 + 4.0 / 128;
  return element_bytes(precision);
}

double Quantisation::weight_cache_bytes() const {
  if (!quantised(precision)) return 0;
  // Both copies (rowwise and columnwise); 128x128 blocks' scales are negligible.
  if (precision == Precision::Fp8) return copies(precision, generation);
  return 2 * element_bytes(precision);
}

CastCost Quantisation::input(bool after_norm) const {
  if (!quantised(precision)) return {};
  const double written = copies(precision, generation) * kept_input_bytes();
  switch (precision) {
    case Precision::Fp8:
      switch (recipe) {
        case Fp8Recipe::Delayed:
          // One cast(-transpose) kernel, the amax recorded as it goes; after a norm, the
          // norm's kernel writes fp8 itself.
          if (after_norm) return {};
          return {1, kSixteenBit + written};
        case Fp8Recipe::Current:
          // The amax kernel (a read of its own, which a norm's kernel does as it writes),
          // the scale's kernel, then the cast.
          if (after_norm) return {2, kSixteenBit + written};
          return {3, 2 * kSixteenBit + written};
        case Fp8Recipe::Blockwise:
          // One kernel per tensor writes both blockwise copies; the norm is not fused.
          return {1, kSixteenBit + written};
      }
      break;
    case Precision::Mxfp8:
      // mxfp8::quantize writes the rowwise and columnwise copies in one pass.
      return {1, kSixteenBit + written};
    case Precision::Nvfp4:
      // The per-tensor amax (with the Hadamard-transformed one, nvte_hadamard_transform_amax)
      // in a read of its own, then one kernel quantising rowwise and, transformed,
      // columnwise.
      return {2, 2 * kSixteenBit + written};
    case Precision::Bf16:
    case Precision::Fp16:
      break;
  }
  return {};
}

CastCost Quantisation::gradient() const {
  // As an input that no norm wrote.
  return input(false);
}

}  // namespace perflow::model
