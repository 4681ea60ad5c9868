#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "perflow/core/moe_routing.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/quantisation.hpp"

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

/// How context parallelism's attention reaches the keys and values of the other ranks'
/// sequence blocks (Megatron-Core's --cp-comm-type): P2p passes K and V blocks around the
/// ring under the attention's compute (ring attention), AllGather gathers them all first, A2a
/// swaps the sequence split for a head split around the attention (DeepSpeed-Ulysses).
enum class CpComm : std::uint8_t { P2p, AllGather, A2a };
/// Their names in configs, in the enum's order.
inline constexpr std::string_view kCpCommNames[] = {"p2p", "all_gather", "a2a"};

std::string_view to_string(CpComm comm);
std::optional<CpComm> parse_cp_comm(std::string_view text);

/// Fully sharded data parallelism (the config's /parallelism/fsdp): None keeps every
/// parameter on each data-parallel rank; Zero3 shards parameters, gradients and optimizer
/// state over the data x context ranks (ZeRO-3; PyTorch FSDP2, Megatron-FSDP's
/// optim_grads_params); Hsdp shards them within groups of fsdp_shard_size ranks and keeps a
/// copy per group (hybrid sharding).
enum class Fsdp : std::uint8_t { None, Zero3, Hsdp };
/// Their names in configs, in the enum's order.
inline constexpr std::string_view kFsdpNames[] = {"none", "zero3", "hsdp"};

std::string_view to_string(Fsdp fsdp);
std::optional<Fsdp> parse_fsdp(std::string_view text);

/// How the model is trained: batch sizes, arithmetic, memory savings.
struct Training {
  std::uint32_t micro_batch_size = 1;   ///< b, samples per microbatch
  std::uint32_t global_batch_size = 0;  ///< samples per step; 0: microbatches x b x dp
  Precision precision = Precision::Bf16;
  /// With Precision::Fp8: how its tensors are scaled (Megatron-LM's default, delayed).
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;
  /// In a quantised run, the first and last layers of the model that stay in bf16
  /// (Megatron-LM's --first-last-layers-bf16 with --num-layers-at-start-in-bf16 and
  /// --num-layers-at-end-in-bf16; fp8_utils.py's is_first_last_bf16_layer).
  std::uint32_t bf16_layers_at_start = 0;
  std::uint32_t bf16_layers_at_end = 0;
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
  /// Context parallelism (the config's /parallelism/context_parallel): each sample's
  /// sequence split over this many ranks, each holding s / cp tokens of every layer.
  std::uint32_t context_parallel = 1;
  CpComm cp_comm = CpComm::P2p;
  Fsdp fsdp = Fsdp::None;
  /// With Fsdp::Hsdp: the ranks one parameter is sharded over (a divisor of the data x
  /// context ranks).
  std::uint32_t fsdp_shard_size = 0;
  /// How MoE layers move their tokens (their permutation kernels and communication).
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;

  /// The gradients' type: grad_reduce_dtype if set, else fp32 unless the training is fp16
  /// (Megatron-LM's arguments.py turns on accumulate_allreduce_grads_in_fp32 for bf16, and
  /// fp8 training runs with --bf16; fp16 training reduces in fp16).
  [[nodiscard]] ReduceDtype reduce_dtype() const {
    if (grad_reduce_dtype) return *grad_reduce_dtype;
    return precision == Precision::Fp16 ? ReduceDtype::Fp16 : ReduceDtype::Fp32;
  }
  /// Whether layer l of `layers` runs its GEMMs in bf16 in a quantised run (always false in
  /// a bf16 or fp16 one).
  [[nodiscard]] bool keeps_bf16(std::uint32_t l, std::uint32_t layers) const {
    return quantised(precision) && (l < bf16_layers_at_start || l + bf16_layers_at_end >= layers);
  }
  /// The quantisation its GEMMs pay on `device`.
  [[nodiscard]] Quantisation quantisation(const DeviceSpec& device) const {
    return {.precision = precision, .recipe = fp8_recipe, .generation = device.generation};
  }
  /// The ranks each parameter is sharded over among `data_ranks` (data x context): all of
  /// them with Zero3, fsdp_shard_size with Hsdp, 1 without FSDP.
  [[nodiscard]] std::uint32_t fsdp_shard(std::uint32_t data_ranks) const {
    return fsdp == Fsdp::Zero3 ? data_ranks : fsdp == Fsdp::Hsdp ? fsdp_shard_size : 1;
  }
  /// Bytes of one gradient in that type.
  [[nodiscard]] double gradient_width() const {
    return reduce_dtype() == ReduceDtype::Fp32 ? 4.0 : 2.0;
  }
};

}  // namespace perflow::model
