#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "perflow/model/device_spec.hpp"
#include "perflow/model/gemm.hpp"
#include "perflow/model/training.hpp"
#include "perflow/model/transformer.hpp"

namespace perflow::model {

/// The three passes of a piece of work: forward (F), input gradients (B), weight
/// gradients (W).
enum Pass : std::uint8_t { kForward = 0, kBackward = 1, kWeight = 2 };

enum class OperatorKind : std::uint8_t {
  Gemm,       ///< a matrix multiplication: compute-bound, efficiency by shape
  Attention,  ///< the attention core (scores, softmax, values), one fused kernel
  Memory,     ///< element-wise or reduction kernels: bound by memory bandwidth
};

/// One operator of a layer, for one microbatch on one tensor-parallel rank.
struct Operator {
  std::string_view name;
  OperatorKind kind = OperatorKind::Memory;
  std::array<double, 3> flops{};  ///< per pass
  std::array<double, 3> bytes{};  ///< moved through memory, per pass (Memory kind)
  /// Gemm: its forward product (m x n output, k reduced, `batch` of them). B computes the
  /// input gradient (m x k, reducing n) and W the weight gradient (k x n, reducing m).
  GemmShape shape{};
  /// Kernels it launches per pass, each issued by the host (docs/model.md, "The host floor").
  std::array<double, 3> kernels{};
  /// Gemm: its input is a LayerNormLinear's norm output, which some fp8 recipes quantise in
  /// the norm's kernel (model::Quantisation). Otherwise, in a quantised run, Transformer
  /// Engine casts a GEMM's input before F and its output gradient before B, except for the
  /// GEMMs that stay in 16 bits (router, LM head, unfused attention).
  bool input_after_norm = false;
  /// Gemm: both operands are activations (the unfused attention's products): B computes
  /// both gradients and there is no W.
  bool activation_operands = false;
  /// Gemm: stays in 16-bit arithmetic in an fp8 or fp4 run (Megatron-LM's output layer, the
  /// router and the unfused attention are not Transformer Engine GEMMs).
  bool sixteen_bit = false;
};

/// The operators of one transformer layer with tensor parallelism `tp`: QKV projection,
/// attention core, output projection, MLP matrices (column- then row-parallel, Megatron-LM),
/// the norms, activation function and residual additions. FLOPs count 2 per multiply-add;
/// a GEMM's B and W each redo its forward FLOPs (dX = dY W^T, dW = X^T dY); the attention
/// core has no weights and its backward is twice its forward. Element-wise bytes are 2-byte
/// activations read and written once per kernel.
std::vector<Operator> layer_operators(const Transformer& model, const Training& training,
                                      std::uint32_t tp);
/// The operators of one layer of `kind` (a hybrid model's carry one part, and one norm and
/// residual; a windowed layer's attention core is `window_attention`), experts over `ep`
/// ranks.
std::vector<Operator> layer_operators(const Transformer& model, const Training& training,
                                      std::uint32_t tp, std::uint32_t ep, LayerKind kind);
/// The operators of one MoE layer: the attention's as layer_operators, then, instead of the
/// dense MLP, the router (T r x h x E), the routed experts of the slowest of `ep`
/// expert-parallel ranks (an MLP over T x top_k x Transformer::expert_load() tokens, inner
/// size f_e / tp) and the shared experts (an MLP over T tokens, inner size S f_e / tp), then
/// the norms and residuals.
std::vector<Operator> moe_layer_operators(const Transformer& model, const Training& training,
                                          std::uint32_t tp, std::uint32_t ep);
/// The input embedding (a lookup, and its gradient scattered into the table).
std::vector<Operator> embedding_operators(const Transformer& model, const Training& training,
                                          std::uint32_t tp);
/// The final norm, the LM head (vocabulary-parallel) and the cross-entropy loss.
std::vector<Operator> head_operators(const Transformer& model, const Training& training,
                                     std::uint32_t tp);
/// One multi-token-prediction module's own operators (Transformer::mtp_layers; its layer is
/// the position's): the next tokens' embedding, its two norms, eh_proj (T x h / t, k = 2h),
/// its final norm, the LM head and a loss.
std::vector<Operator> mtp_operators(const Transformer& model, const Training& training,
                                    std::uint32_t tp);

/// Nanoseconds `op` takes in `pass` on `device` (a roofline: compute at the efficiency its
/// kind and shape reach, or memory traffic at the device's achievable bandwidth).
double operator_time(const Operator& op, Pass pass, const DeviceSpec& device, Precision precision);

/// How a Gemm operator's `pass` runs (model::plan_gemm on that pass's product; with
/// activation operands, B's two products: their summed time, the first's tile). An empty
/// plan for passes without FLOPs and operators of other kinds.
GemmPlan operator_gemm_plan(const Operator& op, Pass pass, const DeviceSpec& device,
                            Precision precision);

/// The attention core's operators: what selective recomputation reruns.
bool is_attention_core(std::string_view name);

}  // namespace perflow::model
