#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "perflow/model/device_spec.hpp"
#include "perflow/model/layer_split.hpp"
#include "perflow/model/operators.hpp"
#include "perflow/model/training.hpp"
#include "perflow/model/transformer.hpp"

namespace perflow::model {

/// One operator's time in each pass, for the derivation's explanation.
struct OperatorTime {
  std::string name;
  bool gemm = false;                ///< a matrix multiplication (model::plan_gemm)
  double count = 1;                 ///< how many (layers) the position holds
  std::array<double, 3> flops{};    ///< per pass, all of them
  std::array<double, 3> seconds{};  ///< per pass, all of them
  std::array<double, 3> kernels{};  ///< per pass, all of them (fp8's casts included)
  /// Per pass, of `seconds`: quantising its input (F) and its output gradient (B) in an fp8
  /// or fp4 run (model::Quantisation).
  std::array<double, 3> quantise_seconds{};
  std::array<GemmPlan, 3> plans{};  ///< per pass, a GEMM's kernel (tile, waves, % of peak)
  /// A GEMM in 16 bits in a quantised run: the LM head, a layer kept in bf16
  /// (Training::keeps_bf16).
  bool sixteen_bit = false;
};

/// What the host does for one task: the kernels (and NCCL calls) it issues and the time it
/// takes to issue them (docs/model.md, "The host floor"). The task takes at least that.
struct HostWork {
  double kernels = 0;  ///< compute kernels, or CUDA graph launches with cuda_graphs
  double nccl_calls = 0;
  double ns = 0;  ///< (kernels + nccl_calls) x the device's kernel_launch
};

/// What context parallelism exchanges in a position's attention layers, per microbatch on one
/// rank (Training::cp_comm says how): each layer's K and V block (a ring step's send with
/// p2p; a rank's share of the gather with all_gather), its Q, K and V and its output (the
/// all-to-alls with a2a), and the time of its attention core, which a p2p ring step hides.
struct ContextExchange {
  double layers = 0;  ///< attention layers of the position (with its MTP modules')
  double kv_bytes = 0;
  double qkv_bytes = 0;
  double output_bytes = 0;
  double attention_forward_ns = 0;  ///< one layer's attention core, F, all ring steps
  double attention_backward_ns = 0;
};

/// What one position costs per microbatch on one tensor-parallel rank, and holds.
struct PositionCosts {
  LayerRange layers;
  double forward_ns = 0;    ///< F
  double backward_ns = 0;   ///< B (recomputation is an R task of its own)
  double weight_ns = 0;     ///< W
  double recompute_ns = 0;  ///< R with the training's recomputation (0 without)
  /// The host's side of F, B, W and, per model::Recompute, of R: the GPU cannot run a
  /// kernel before its host has issued it, so a task takes the longer of its GPU time and
  /// this.
  HostWork forward_host, backward_host, weight_host;
  std::array<HostWork, 3> recompute_host{};
  /// Bytes one F's forward leaves for its backward (what F keeps without recomputation).
  double activation = 0;
  double backward_frees = 0;  ///< the share of them B frees (W needs the rest)
  /// Per model::Recompute (none, selective, full): the R task's time and what F keeps
  /// until its backward (Korthikanti et al. 2022, section 4).
  std::array<double, 3> recompute_forward_ns{};
  std::array<double, 3> kept_activation{};
  /// Per model::Recompute: what R holds at once, one layer's recomputed activations
  /// (checkpoints per layer, as Megatron-LM's recompute_num_layers 1).
  std::array<double, 3> recompute_rebuilt{};
  double parameters = 0;       ///< on one tensor-parallel rank
  double weight_bytes = 0;     ///< parameters in the training precision (2 bytes)
  double gradient_bytes = 0;   ///< main gradients (4 bytes per parameter in fp32, 2 in bf16/fp16)
  double optimizer_bytes = 0;  ///< fp32 master weights and Adam moments (12, or 12/dp)
  /// In fp8: Transformer Engine's cached fp8 copies of the GEMM weights (the weight and its
  /// transpose, 2 bytes per weight), kept from a step's first microbatch to its last.
  double fp8_weight_bytes = 0;
  double boundary_bytes = 0;  ///< the activation sent to the next position
  double tp_allreduce_bytes = 0;
  std::uint32_t tp_allreduces = 0;  ///< in each F and each B
  /// All-reduced across data parallel replicas; with expert parallelism the expert
  /// parameters' share is scaled so that one ring over `data` ranks takes as long as theirs
  /// over data / expert ranks (derive.cpp).
  double dp_gradient_bytes = 0;
  /// With the distributed optimizer: the 2-byte parameters all-gathered back after the step,
  /// with the same scaling of the expert share.
  double dp_parameter_bytes = 0;
  /// Bytes one rank sends in one expert-parallel all-to-all (a dispatch or a combine) of one
  /// microbatch: its T r tokens x top_k x h x 2 bytes; 0 when the position has none.
  double a2a_bytes = 0;
  /// All-to-alls in each F (and each backward): a dispatch and a combine per MoE layer the
  /// position holds; 0 for a dense model or an expert degree of 1.
  std::uint32_t a2a_per_pass = 0;
  /// What the position's MoE layers route (tokens 0 for a dense model or an expert degree
  /// of 1): the dispatcher's costs follow from it and the network (parallel::moe_dispatch_cost).
  MoeRouting moe_routing{};
  /// With context parallelism (Training::context_parallel > 1): what its attention exchanges.
  ContextExchange context;
  /// With FSDP (Training::fsdp): the units its parameters are gathered in (a layer each,
  /// the embedding and the head their own), the bytes one gather of all of them moves
  /// (2-byte parameters on this tensor-parallel rank) and one reduce-scatter of their
  /// gradients, and what gathered units hold at once (the unit running, the one prefetched
  /// and a unit's whole gradients; 0 where the stage keeps its parameters gathered).
  std::uint32_t fsdp_units = 0;
  double fsdp_parameter_bytes = 0;
  double fsdp_gradient_bytes = 0;
  double fsdp_buffer_bytes = 0;
  double optimizer_ns = 0;  ///< the Adam step of this position's parameters
  std::vector<OperatorTime> operators;

  [[nodiscard]] double static_memory() const {
    return weight_bytes + gradient_bytes + optimizer_bytes + fp8_weight_bytes + fsdp_buffer_bytes;
  }
};

/// Parallel degrees the derivation needs beyond the pipeline.
struct Degrees {
  std::uint32_t tensor = 1;
  std::uint32_t data = 1;
  /// Expert parallelism: the ranks of a MoE layer's all-to-all, each holding experts / expert
  /// of its routed experts; taken from the data-parallel replicas (Megatron-LM, DeepSeek-V3),
  /// so it divides `data`.
  std::uint32_t expert = 1;
  /// Pipeline stages: with FSDP over more than one, each stage keeps its parameters
  /// gathered and its gradients whole for the step (torchtitan with pipelining).
  std::uint32_t pipeline = 1;
};

/// Costs, memory and traffic of one position on `device`.
PositionCosts derive_position(const Transformer& model, const Training& training,
                              const Degrees& degrees, const DeviceSpec& device,
                              const LayerRange& layers);

/// One measured duration against the model's: `gemm_ns` of the model's time is the GEMMs'
/// arithmetic (GemmPlan::arithmetic_ns, which scales with 1 / gemm_max), `other_ns` the rest
/// (the GEMMs' latency and memory-bound time, attention, memory-bound kernels, all-reduces).
struct Observation {
  double gemm_ns = 0;
  double other_ns = 0;
  double measured_ns = 0;
};

/// The gemm_max that fits the observations best (least squares on the durations), given
/// the gemm_max the model used; nullopt when no observation has GEMM time.
std::optional<double> fit_gemm_max(std::span<const Observation> observations, double used);

/// What each unit a position may hold (the embedding, each layer, the head) takes on
/// `device` per microbatch: its F + B + W + R, plus `collective_seconds` for each
/// tensor-parallel collective it waits for in F and in B, each pass at least its host's
/// time to issue it (the host floor; what balanced_split weighs).
UnitSeconds unit_seconds(const Transformer& model, const Training& training, const Degrees& degrees,
                         const DeviceSpec& device, double collective_seconds = 0);

}  // namespace perflow::model
