#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "perflow/model/device_spec.hpp"

namespace perflow::model {

/// Activation recomputation (Korthikanti et al., "Reducing Activation Recomputation in Large
/// Transformer Models", MLSys 2023): none, the attention core only (selective), or the
/// whole layer from its input (full). Until recomputation has tasks of its own, its time
/// is added to the backward (B).
enum class Recompute : std::uint8_t { None, Selective, Full };

std::string_view to_string(Recompute recompute);
std::optional<Recompute> parse_recompute(std::string_view text);

/// How the model is trained: batch sizes, arithmetic, memory savings.
struct Training {
  std::uint32_t micro_batch_size = 1;   ///< b, samples per microbatch
  std::uint32_t global_batch_size = 0;  ///< samples per step; 0: microbatches x b x dp
  Precision precision = Precision::Bf16;
  Recompute recompute = Recompute::None;
  bool distributed_optimizer = false;  ///< optimizer state sharded over data parallel
  bool sequence_parallel = false;      ///< Megatron sequence parallelism (with t > 1)
  bool flash_attention = true;         ///< fused attention: no s x s scores kept
};

}  // namespace perflow::model
