#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "perflow/core/moe_routing.hpp"
#include "perflow/model/device_spec.hpp"

namespace perflow::model {

/// Activation recomputation (Korthikanti et al., "Reducing Activation Recomputation in Large
/// Transformer Models", MLSys 2023): none, the attention core only (selective), or the
/// whole layer from its input (full). Until recomputation has tasks of its own, its time
/// is added to the backward (B).
enum class Recompute : std::uint8_t { None, Selective, Full };

std::string_view to_string(Recompute recompute);
std::optional<Recompute> parse_recompute(std::string_view text);

/// The type gradients are accumulated in and reduced across data-parallel replicas.
enum class ReduceDtype : std::uint8_t { Fp32, Bf16, Fp16 };

std::string_view to_string(ReduceDtype dtype);
std::optional<ReduceDtype> parse_reduce_dtype(std::string_view text);

/// How the model is trained: batch sizes, arithmetic, memory savings.
struct Training {
  std::uint32_t micro_batch_size = 1;   ///< b, samples per microbatch
  std::uint32_t global_batch_size = 0;  ///< samples per step; 0: microbatches x b x dp
  Precision precision = Precision::Bf16;
  Recompute recompute = Recompute::None;
  bool distributed_optimizer = false;  ///< optimizer state sharded over data parallel
  bool sequence_parallel = false;      ///< Megatron sequence parallelism (with t > 1)
  bool flash_attention = true;         ///< fused attention: no s x s scores kept
  /// MLA's up projections recomputed in the backward instead of their outputs (Q, K, V) kept
  /// (Megatron-Core's --recompute-modules mla_up_proj; DeepSeek-V3 report, section 3.2.3).
  bool recompute_mla_up_proj = false;
  /// Each layer's F and backward captured as CUDA graphs (Megatron-Core's
  /// --enable-cuda-graph): the host launches one graph per layer and pass instead of each
  /// kernel and NCCL call.
  bool cuda_graphs = false;
  /// The gradients' type in their buffer and reduction; unset: Megatron-LM's choice (see
  /// reduce_dtype).
  std::optional<ReduceDtype> grad_reduce_dtype = std::nullopt;
  /// How MoE layers move their tokens (their permutation kernels and communication).
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;

  /// The gradients' type: grad_reduce_dtype if set, else fp32 unless the training is fp16
  /// (Megatron-LM's arguments.py turns on accumulate_allreduce_grads_in_fp32 for bf16, and
  /// fp8 training runs with --bf16; fp16 training reduces in fp16).
  [[nodiscard]] ReduceDtype reduce_dtype() const {
    if (grad_reduce_dtype) return *grad_reduce_dtype;
    return precision == Precision::Fp16 ? ReduceDtype::Fp16 : ReduceDtype::Fp32;
  }
  /// Bytes of one gradient in that type.
  [[nodiscard]] double gradient_width() const {
    return reduce_dtype() == ReduceDtype::Fp32 ? 4.0 : 2.0;
  }
};

}  // namespace perflow::model
