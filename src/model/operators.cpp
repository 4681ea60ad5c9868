// The operators of a decoder-only transformer on one tensor-parallel rank (Megatron-LM's
// partitioning, Shoeybi et al. 2019: QKV and the first MLP matrices column-parallel, the
// output projection and the last MLP matrix row-parallel, the attention heads split).
#include "perflow/model/operators.hpp"

#include <algorithm>

#include "detail/dimensions.hpp"
#include "detail/layer_parts.hpp"

namespace perflow::model {
namespace {

constexpr double kActivationBytes = 2;  // bf16 / fp16 activations (fp8 runs keep them too)

// Kernels per pass (F, B, W) as eager PyTorch with Megatron-Core and Transformer Engine
// launches them: one GEMM each for the output, the input gradient and the weight gradient.
constexpr std::array<double, 3> kGemmKernels = {1, 1, 1};

// Whether a Transformer Engine GEMM's input is a LayerNormLinear's norm output.
enum class Input : std::uint8_t { Plain, AfterNorm };

// A Transformer Engine GEMM (quantised in an fp8 or fp4 run, with its casts) or,
// `sixteen_bit`, a plain PyTorch one that stays in 16 bits and casts nothing.
Operator gemm(std::string_view name, double m, double k, double n, Input input = Input::Plain,
              bool sixteen_bit = false) {
  const double flops = 2 * m * k * n;
  return {.name = name,
          .kind = OperatorKind::Gemm,
          .flops = {flops, flops, flops},
          .shape = {.m = m, .n = n, .k = k},
          .kernels = kGemmKernels,
          .input_after_norm = input == Input::AfterNorm,
          .sixteen_bit = sixteen_bit};
}

// A batched product of two activations (the unfused attention's, one per head and sample):
// F one GEMM, B its two gradients, in 16 bits.
Operator activation_gemm(std::string_view name, double m, double k, double n, double batch) {
  const double flops = 2 * m * k * n * batch;
  return {.name = name,
          .kind = OperatorKind::Gemm,
          .flops = {flops, 2 * flops, 0},
          .shape = {.m = m, .n = n, .k = k, .batch = batch},
          .kernels = {1, 2, 0},
          .activation_operands = true,
          .sixteen_bit = true};
}

Operator memory(std::string_view name, double forward, double backward, double weight,
                std::array<double, 3> kernels) {
  return {
      .name = name,
      .kind = OperatorKind::Memory,
      .bytes = {forward * kActivationBytes, backward * kActivationBytes, weight * kActivationBytes},
      .kernels = kernels};
}

// An MLP of `model`'s type (GeLU or SwiGLU) with inner size `f` over `tokens` tokens, its
// matrices split over `t` ranks (column- then row-parallel).
struct MlpNames {
  std::string_view gate_up, swiglu, up, gelu, down;
};

// `after_norm`: the first GEMM is a LayerNormLinear (the dense MLP's; the experts' inputs come
// through the router and the dispatcher).
void append_mlp(std::vector<Operator>& ops, const MlpNames& names, Mlp mlp, double tokens, double h,
                double f, double t, bool after_norm) {
  const Input first_input = after_norm ? Input::AfterNorm : Input::Plain;
  if (mlp == Mlp::SwiGlu) {
    ops.push_back(gemm(names.gate_up, tokens, h, 2 * f / t, first_input));
    ops.push_back(memory(names.swiglu, 3 * tokens * f / t, 5 * tokens * f / t, 0, {1, 1, 0}));
  } else {
    ops.push_back(gemm(names.up, tokens, h, f / t, first_input));
    ops.push_back(memory(names.gelu, 2 * tokens * f / t, 3 * tokens * f / t, 0, {1, 1, 0}));
  }
  ops.push_back(gemm(names.down, tokens, f / t, h));
}

void append(std::vector<Operator>& to, const std::vector<Operator>& ops) {
  to.insert(to.end(), ops.begin(), ops.end());
}

}  // namespace

namespace detail {

std::vector<Operator> attention_operators(const Transformer& model, const Training& training,
                                          std::uint32_t tp, Mixer mixer) {
  const auto [t, b, s, tokens, h, f, qw, kw, vw, ow, latent, r] = dimensions(model, training, tp);
  std::vector<Operator> ops;
  if (model.is_mla()) {
    // Megatron-Core's MLASelfAttention (megatron/core/transformer/multi_latent_attention.py):
    // the down projections are duplicated TELinear modules, whole on every tensor-parallel
    // rank and run on its T r tokens (plain TELinear after the layer's norm: they cast their
    // input to fp8 themselves); the up projections are LayerNormColumnParallelLinear
    // (the latent's norm fused in) over the gathered tokens, a / t heads each.
    const Mla& m = model.mla;
    const double rope = m.qk_rope_head_dim;
    if (m.q_lora_rank > 0) {
      ops.push_back(gemm("q_down", tokens * r, h, m.q_lora_rank));
      ops.push_back(gemm("q_up", tokens, m.q_lora_rank, qw / t, Input::AfterNorm));
    } else {
      ops.push_back(gemm("q_proj", tokens, h, qw / t));
    }
    ops.push_back(gemm("kv_down", tokens * r, h, m.kv_lora_rank + rope));
    ops.push_back(gemm("kv_up", tokens, m.kv_lora_rank,
                       double(model.heads) * (m.qk_nope_head_dim + m.v_head_dim) / t,
                       Input::AfterNorm));
  } else {
    ops.push_back(gemm("qkv", tokens, h, (qw + kw + vw) / t, Input::AfterNorm));
  }
  if (training.flash_attention) {
    // Scores (2 T s a d_qk / t FLOPs) and values (2 T s a d_v / t; a d = h unless the head
    // width is set or MLA's differ), one fused kernel; its backward recomputes the scores:
    // twice the forward's work (Dao, FlashAttention-2, 2023).
    // A windowed layer's fused kernel skips the tiles outside its band: the full square's
    // s keys per query become Transformer::window_span()'s.
    const bool windowed = mixer == Mixer::WindowedAttention;
    const double keys = windowed ? model.window_span() : s;
    const double flops = 2 * tokens * keys * (qw + ow) / t;
    // Its kernels: the fused forward; the backward's preprocessing (dO . O), main kernel and
    // dQ conversion (FlashAttention-2's flash_bwd_dot_do_o, flash_bwd_dq_dk_dv and
    // flash_bwd_convert_dq kernels). A context-parallel ring runs them once a step, one step
    // per rank's K and V block (Transformer Engine's AttnFuncWithCPAndKVP2P).
    const double steps =
        training.cp_comm == CpComm::P2p ? std::max(training.context_parallel, 1u) : 1;
    ops.push_back({.name = windowed ? "window_attention" : "attention",
                   .kind = OperatorKind::Attention,
                   .flops = {flops, 2 * flops, 0},
                   .kernels = {steps, 3 * steps, 0}});
  } else {
    // Batched GEMMs per head and sample: the scores Q K^T (s x s, reducing d) and the
    // context P V (s x d, reducing s); the s x s scores go through memory for the softmax
    // and dropout. A sliding window is a mask on the same square: nothing is skipped.
    const double heads = b * model.heads / t;
    ops.push_back(activation_gemm("attention_scores", s, model.head_dim(), s, heads));
    ops.push_back(activation_gemm("attention_context", s, s, ow / model.heads, heads));
    const double probabilities = heads * s * s;
    // The fused scale-mask-softmax and the dropout, and their gradients.
    ops.push_back(memory("softmax", 3 * probabilities, 4 * probabilities, 0, {2, 2, 0}));
  }
  ops.push_back(gemm("projection", tokens, ow / t, h));
  return ops;
}

std::vector<Operator> dense_mlp_operators(const Transformer& model, const Training& training,
                                          std::uint32_t tp) {
  const Dimensions d = dimensions(model, training, tp);
  std::vector<Operator> ops;
  append_mlp(ops, {"mlp_gate_up", "swiglu", "mlp_up", "gelu", "mlp_down"}, model.mlp, d.tokens, d.h,
             d.f, d.t, true);
  return ops;
}

std::vector<Operator> moe_mlp_operators(const Transformer& model, const Training& training,
                                        std::uint32_t tp, std::uint32_t ep) {
  const Dimensions d = dimensions(model, training, tp);
  const double experts = model.experts;
  const double fe = model.expert_hidden();
  std::vector<Operator> ops;
  // The router scores this rank's tokens (T r: split with sequence parallelism) against every
  // expert; its h x E weight is replicated over the tensor-parallel ranks (Megatron-LM's
  // TopKRouter).
  ops.push_back(gemm("router", d.tokens * d.r, d.h, experts, Input::Plain, true));
  // Beside its GEMM: the scores' softmax or sigmoid, the top-k and the probabilities'
  // normalisation, and their gradients.
  ops.back().kernels = {4, 3, 1};
  // The routed experts on the slowest rank: each token goes to top_k experts; with EP ranks
  // each holding E / EP experts, balanced routing brings a rank as many expert tokens as it
  // sends (T k), the slowest rank `load` times that. Tensor parallelism splits the experts'
  // matrices like the dense MLP's (expert tensor parallelism = TP), over the gathered tokens.
  // Each local expert is its own GEMM of T k load EP / E tokens (a grouped GEMM): its
  // efficiency follows that size.
  const double routed = d.tokens * model.top_k * model.expert_load();
  const std::size_t first = ops.size();
  append_mlp(ops, {"expert_gate_up", "expert_swiglu", "expert_up", "expert_gelu", "expert_down"},
             model.mlp, routed, d.h, fe, d.t, false);
  const double local_experts = experts > 0 ? experts / ep : 1;
  for (std::size_t i = first; i < ops.size(); ++i) {
    if (ops[i].kind != OperatorKind::Gemm) continue;
    ops[i].shape.m = routed / local_experts;
    ops[i].shape.batch = local_experts;
  }
  // The dispatcher's permutations, memory-bound copies of token rows (each pass mirrors the
  // other). alltoall (Megatron-Core's MoEAlltoAllTokenDispatcher) copies each of the rank's
  // T r tokens into a row per expert before the all-to-all and sums them back after the
  // combine, and with several local experts sorts the received rows by expert after the
  // dispatch and back before the combine. deepep sends each token once per rank, and the
  // receiver permutes it into its experts' rows and back.
  const double rows = d.tokens * d.r;
  if (training.moe_dispatcher == MoeDispatcher::DeepEp) {
    ops.push_back(memory("moe_permute", 2 * routed * d.h, 2 * routed * d.h, 0, {1, 1, 0}));
    ops.push_back(memory("moe_unpermute", 2 * routed * d.h, 2 * routed * d.h, 0, {1, 1, 0}));
  } else {
    const double copy = rows * d.h + rows * model.top_k * d.h;
    ops.push_back(memory("moe_permute", copy, copy, 0, {1, 1, 0}));
    ops.push_back(memory("moe_unpermute", copy, copy, 0, {1, 1, 0}));
    if (ep > 1 && experts > ep) {
      ops.push_back(memory("moe_sort_chunks", 4 * routed * d.h, 4 * routed * d.h, 0, {2, 2, 0}));
    }
  }
  // Shared experts: every token, one MLP of inner size S f_e (Megatron-LM's shared expert).
  if (model.shared_experts > 0) {
    append_mlp(ops, {"shared_gate_up", "shared_swiglu", "shared_up", "shared_gelu", "shared_down"},
               model.mlp, d.tokens, d.h, model.shared_experts * fe, d.t, false);
  }
  return ops;
}

std::vector<Operator> mamba_operators(const Transformer& model, const Training& training,
                                      std::uint32_t tp) {
  const Dimensions d = dimensions(model, training, tp);
  const Mamba& m = model.mamba;
  const double tokens = d.tokens, t = d.t;
  // Per tensor-parallel rank (Megatron-Core's MambaMixer splits the heads and the groups):
  // the inner width H P / t, B and C 2 G N / t, dt H / t.
  const double inner = m.inner() / t;
  const double bc = 2.0 * m.groups * m.state_dim / t;
  const double heads = double(m.heads) / t;
  const double conv = inner + bc;  // the channels the convolution and the scan read
  std::vector<Operator> ops;
  // in_proj, with the layer's norm fused in (LayerNormColumnParallelLinear): z, x, B, C, dt.
  ops.push_back(gemm("mamba_in_proj", tokens, d.h, 2 * inner + bc + heads, Input::AfterNorm));
  // The causal depthwise convolution and its SiLU (causal_conv1d): read x, B and C, write them;
  // the backward reads them and their gradient, writes the input's gradient and reduces the
  // weights' (one kernel each way).
  ops.push_back(memory("mamba_conv", 2 * tokens * conv, 3 * tokens * conv, 0, {1, 1, 0}));
  // The chunked scan (SSD): fused tensor-core kernels like the attention's, whose backward
  // computes each product's two gradients.
  const double flops = tokens * model.mamba_scan_flops_per_token() / t;
  ops.push_back({.name = "mamba_scan",
                 .kind = OperatorKind::Attention,
                 .flops = {flops, 2 * flops, 0},
                 .kernels = {5, 9, 0}});
  // The gated RMSNorm: reads y and z, writes the normalised product; its backward reads
  // both and the gradient, writes two.
  ops.push_back(memory("mamba_norm", 3 * tokens * inner, 5 * tokens * inner, 0, {1, 2, 0}));
  ops.push_back(gemm("mamba_out_proj", tokens, inner, d.h));
  return ops;
}

std::vector<Operator> residual_operators(const Transformer& model, const Training& training,
                                         std::uint32_t tp, std::uint32_t sublayers) {
  const Dimensions d = dimensions(model, training, tp);
  const double tokens = d.tokens, h = d.h, r = d.r, n = sublayers;
  // A norm per sublayer (read and write; backward reads input and gradient, writes one) and
  // a residual addition with dropout (read two, write one; backward passes the gradient).
  // Kernels: a norm each (its backward also reduces the norm's weight gradient: two), a fused
  // bias-dropout-add each, and the residual gradients summed in the backward.
  return {memory("norms", n * 2 * tokens * h * r, n * 3 * tokens * h * r, 0, {n, 2 * n, 0}),
          memory("residual", n * 3 * tokens * h * r, n * 2 * tokens * h * r, 0, {n, n, 0})};
}

}  // namespace detail

std::vector<Operator> layer_operators(const Transformer& model, const Training& training,
                                      std::uint32_t tp, std::uint32_t ep, LayerKind kind) {
  std::vector<Operator> ops;
  if (kind.has_attention())
    append(ops, detail::attention_operators(model, training, tp, kind.mixer));
  if (kind.mixer == Mixer::Mamba) append(ops, detail::mamba_operators(model, training, tp));
  if (kind.feedforward == Feedforward::Dense)
    append(ops, detail::dense_mlp_operators(model, training, tp));
  if (kind.feedforward == Feedforward::Moe)
    append(ops, detail::moe_mlp_operators(model, training, tp, ep));
  append(ops, detail::residual_operators(model, training, tp, kind.sublayers()));
  return ops;
}

std::vector<Operator> layer_operators(const Transformer& model, const Training& training,
                                      std::uint32_t tp) {
  return layer_operators(model, training, tp, 1, {});
}

std::vector<Operator> moe_layer_operators(const Transformer& model, const Training& training,
                                          std::uint32_t tp, std::uint32_t ep) {
  return layer_operators(model, training, tp, ep, {.feedforward = Feedforward::Moe});
}

std::vector<Operator> embedding_operators(const Transformer& model, const Training& training,
                                          std::uint32_t tp) {
  const detail::Dimensions d = detail::dimensions(model, training, tp);
  // A row gather forward; its gradient is scattered (read-modify-write) into the table.
  // Its gradient: sorted by token, summed per row and added into the table (PyTorch's
  // embedding_dense_backward).
  return {memory("embedding", 2 * d.tokens * d.h * d.r, 0, 4 * d.tokens * d.h, {1, 0, 3})};
}

std::vector<Operator> head_operators(const Transformer& model, const Training& training,
                                     std::uint32_t tp) {
  const detail::Dimensions d = detail::dimensions(model, training, tp);
  const double t = d.t, tokens = d.tokens, h = d.h, r = d.r;
  const double logits = tokens * model.vocab / t;
  return {memory("final_norm", 2 * tokens * h * r, 3 * tokens * h * r, 0, {1, 2, 0}),
          gemm("lm_head", tokens, h, model.vocab / t, Input::Plain,
               true),  // Megatron's output layer: not TE
          // Cross-entropy in fp32 over the logits: read them, write fp32 probabilities,
          // reduce; the backward writes the logits' gradient (2-byte units). Megatron-LM's
          // vocabulary-parallel cross-entropy: the logits' max, shift, exponentials, their
          // sum, the target's logit and the loss (and the averaging), about 8 kernels;
          // its backward, the softmax less the one-hot target and its scaling, 3.
          memory("loss", 5 * logits, 4 * logits, 0, {8, 3, 0})};
}

std::vector<Operator> mtp_operators(const Transformer& model, const Training& training,
                                    std::uint32_t tp) {
  const detail::Dimensions d = detail::dimensions(model, training, tp);
  const double tokens = d.tokens, h = d.h, r = d.r;
  std::vector<Operator> ops = embedding_operators(model, training, tp);
  ops.front().name = "mtp_embedding";
  // enorm and hnorm; eh_proj over the concatenated 2h (Megatron-Core's column-parallel
  // eh_proj, a TE linear).
  ops.push_back(memory("mtp_norms", 2 * 2 * tokens * h * r, 2 * 3 * tokens * h * r, 0, {2, 4, 0}));
  ops.push_back(gemm("mtp_eh_proj", tokens, 2 * h, h / d.t));
  // Its own final norm, then the shared LM head and a loss (head_operators' three).
  constexpr std::array<std::string_view, 3> kHead = {"mtp_final_norm", "mtp_lm_head", "mtp_loss"};
  const std::vector<Operator> head = head_operators(model, training, tp);
  for (std::size_t i = 0; i < head.size() && i < kHead.size(); ++i) {
    ops.push_back(head[i]);
    ops.back().name = kHead[i];
  }
  return ops;
}

GemmPlan operator_gemm_plan(const Operator& op, Pass pass, const DeviceSpec& device,
                            Precision precision) {
  if (op.kind != OperatorKind::Gemm || op.flops[pass] == 0) return {};
  if (op.sixteen_bit && quantised(precision)) precision = Precision::Bf16;
  const GemmShape& x = op.shape;
  const GemmShape input_gradient{.m = x.m, .n = x.k, .k = x.n, .batch = x.batch};
  const GemmShape weight_gradient{.m = x.k, .n = x.n, .k = x.m, .batch = x.batch};
  switch (pass) {
    case kForward:
      return plan_gemm(x, device, precision);
    case kBackward: {
      GemmPlan plan = plan_gemm(input_gradient, device, precision);
      if (op.activation_operands) {
        const GemmPlan other = plan_gemm(weight_gradient, device, precision);
        plan.fraction_of_peak =
            op.flops[pass] / ((plan.ns + other.ns) * device.peak(precision)) * 1e9;
        plan.ns += other.ns;
        plan.arithmetic_ns += other.arithmetic_ns;
      }
      return plan;
    }
    case kWeight:
      return plan_gemm(weight_gradient, device, precision, GemmOutput::AccumulatedGradient);
  }
  return {};
}

double operator_time(const Operator& op, Pass pass, const DeviceSpec& device, Precision precision) {
  const Efficiency& e = device.efficiency;
  switch (op.kind) {
    case OperatorKind::Gemm:
      return operator_gemm_plan(op, pass, device, precision).ns;
    case OperatorKind::Attention: {
      // Attention stays in 16-bit arithmetic in fp8 and fp4 runs (Transformer Engine).
      const double peak = device.peak(quantised(precision) ? Precision::Bf16 : precision);
      const double fraction = pass == kForward ? e.attention_forward : e.attention_backward;
      return op.flops[pass] == 0 ? 0 : op.flops[pass] / (peak * fraction) * 1e9;
    }
    case OperatorKind::Memory:
      return op.bytes[pass] / (device.memory_bandwidth * e.memory) * 1e9;
  }
  return 0;
}

bool is_attention_core(std::string_view name) {
  return name == "attention" || name == "window_attention" || name == "attention_scores" ||
         name == "attention_context" || name == "softmax";
}

}  // namespace perflow::model
