#include "perflow/model/derive.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

#include "detail/dimensions.hpp"
#include "detail/layer_parts.hpp"

namespace perflow::model {
namespace {

void add(PositionCosts& costs, std::span<const Operator> ops, double count,
         const DeviceSpec& device, const Training& training) {
  const Precision precision = training.precision;
  const Quantisation quantisation = training.quantisation(device);
  const double bandwidth = device.memory_bandwidth * device.efficiency.memory;
  for (const Operator& op : ops) {
    OperatorTime time{
        .name = std::string(op.name), .gemm = op.kind == OperatorKind::Gemm, .count = count};
    // A Transformer Engine GEMM in a quantised run casts its input before F and its output
    // gradient before B, memory-bound kernels.
    const bool casts = op.kind == OperatorKind::Gemm && !op.sixteen_bit && quantised(precision);
    time.sixteen_bit = op.kind == OperatorKind::Gemm && op.sixteen_bit && quantised(precision);
    const double batch = std::max(op.shape.batch, 1.0);
    const std::array<CastCost, 3> cast = {
        casts ? quantisation.input(op.input_after_norm) : CastCost{},
        casts ? quantisation.gradient() : CastCost{}, CastCost{}};
    const std::array<double, 3> cast_elements = {op.shape.m * op.shape.k * batch,
                                                 op.shape.m * op.shape.n * batch, 0};
    for (const Pass pass : {kForward, kBackward, kWeight}) {
      time.flops[pass] = op.flops[pass] * count;
      if (op.kind == OperatorKind::Gemm) {
        time.plans[pass] = operator_gemm_plan(op, pass, device, precision);
        time.seconds[pass] = time.plans[pass].ns * count / 1e9;
      } else {
        time.seconds[pass] = operator_time(op, pass, device, precision) * count / 1e9;
      }
      time.quantise_seconds[pass] =
          cast[pass].bytes_per_element * cast_elements[pass] / bandwidth * count;
      time.seconds[pass] += time.quantise_seconds[pass];
      time.kernels[pass] = (op.kernels[pass] + cast[pass].kernels) * count;
    }
    costs.forward_ns += time.seconds[kForward] * 1e9;
    costs.backward_ns += time.seconds[kBackward] * 1e9;
    costs.weight_ns += time.seconds[kWeight] * 1e9;
    costs.operators.push_back(std::move(time));
  }
}

// The host floor (docs/model.md): what the host issues for each task. Eager: every kernel
// of the position's operators and, with tensor parallelism, its NCCL calls (an all-reduce,
// or with sequence parallelism a reduce-scatter and an all-gather). With CUDA graphs each
// layer's pass is one graph launch, its collectives captured in it; the embedding and the
// head stay eager.
// c.operators holds the layers' operators first (`layer_operators` of them, for `layer_count`
// layers: the position's and its MTP modules'), then the embedding's and the head's;
// `selective` is the attention core's forward kernels, what selective recomputation reruns.
void set_host_work(PositionCosts& c, const Training& training, const Degrees& degrees,
                   const DeviceSpec& device, std::size_t layer_operators, double layer_count,
                   double selective) {
  std::array<double, 3> layer_kernels{};
  std::array<double, 3> edge_kernels{};  // the embedding's and the head's
  for (std::size_t i = 0; i < c.operators.size(); ++i) {
    std::array<double, 3>& sum = i < layer_operators ? layer_kernels : edge_kernels;
    for (const Pass pass : {kForward, kBackward, kWeight})
      sum[pass] += c.operators[i].kernels[pass];
  }
  const double n = layer_count;
  const double calls_per_collective = training.sequence_parallel ? 2 : 1;
  // The embedding's one collective is one call (an all-reduce, or with sequence parallelism
  // a reduce-scatter).
  const double edge_calls = degrees.tensor > 1 && c.layers.embedding ? 1 : 0;
  const double tp_calls =
      degrees.tensor > 1 ? (c.tp_allreduces - edge_calls) * calls_per_collective + edge_calls : 0;
  const auto work = [&](double kernels, double nccl_calls) {
    return HostWork{.kernels = kernels,
                    .nccl_calls = nccl_calls,
                    .ns = (kernels + nccl_calls) * device.kernel_launch * 1e9};
  };
  const auto graphs = [n](double kernels) { return kernels > 0 ? n : 0.0; };
  if (training.cuda_graphs) {
    c.forward_host = work(graphs(layer_kernels[kForward]) + edge_kernels[kForward], edge_calls);
    c.backward_host = work(graphs(layer_kernels[kBackward]) + edge_kernels[kBackward], edge_calls);
    c.weight_host = work(graphs(layer_kernels[kWeight]) + edge_kernels[kWeight], 0);
    c.recompute_host = {HostWork{}, work(graphs(selective), 0),
                        work(graphs(layer_kernels[kForward]), 0)};
  } else {
    c.forward_host = work(layer_kernels[kForward] + edge_kernels[kForward], tp_calls);
    c.backward_host = work(layer_kernels[kBackward] + edge_kernels[kBackward], tp_calls);
    c.weight_host = work(layer_kernels[kWeight] + edge_kernels[kWeight], 0);
    // Full recomputation reruns the layers' forward with its collectives, as the R task's
    // time counts them.
    c.recompute_host = {HostWork{}, work(selective, 0), work(layer_kernels[kForward], tp_calls)};
  }
}

// Two rows of the same operator: one row, its count the layers of both.
bool same_operator(const Operator& a, const Operator& b) {
  return a.name == b.name && a.kind == b.kind && a.flops == b.flops && a.bytes == b.bytes &&
         a.shape.m == b.shape.m && a.shape.n == b.shape.n && a.shape.k == b.shape.k &&
         a.shape.batch == b.shape.batch && a.kernels == b.kernels &&
         a.input_after_norm == b.input_after_norm &&
         a.activation_operands == b.activation_operands && a.sixteen_bit == b.sixteen_bit;
}

// The operators of a position's layers with the layers running each: every kind's mixer, then
// every kind's feed-forward, then the norms and residuals (so the attention of dense and MoE
// layers is one row, and a position's rows read in a layer's order).
std::vector<std::pair<Operator, double>> position_operators(
    const Transformer& model, const Training& training, const Degrees& degrees,
    std::span<const std::pair<LayerKind, std::uint32_t>> kinds) {
  std::vector<std::pair<Operator, double>> rows;
  // A layer kept in bf16 in a quantised run prices its GEMMs as the 16-bit ones.
  const auto put = [&rows](std::vector<Operator> ops, double count, bool sixteen_bit) {
    for (Operator& op : ops) {
      if (sixteen_bit && op.kind == OperatorKind::Gemm) op.sixteen_bit = true;
      const auto same = std::find_if(rows.begin(), rows.end(), [&op](const auto& row) {
        return same_operator(row.first, op);
      });
      if (same != rows.end()) {
        same->second += count;
      } else {
        rows.emplace_back(op, count);
      }
    }
  };
  const std::uint32_t tp = degrees.tensor;
  for (const auto& [kind, count] : kinds) {
    if (kind.has_attention())
      put(detail::attention_operators(model, training, tp, kind.mixer), count, kind.sixteen_bit);
    if (kind.mixer == Mixer::Mamba)
      put(detail::mamba_operators(model, training, tp), count, kind.sixteen_bit);
  }
  for (const auto& [kind, count] : kinds) {
    if (kind.feedforward == Feedforward::Dense)
      put(detail::dense_mlp_operators(model, training, tp), count, kind.sixteen_bit);
    if (kind.feedforward == Feedforward::Moe) {
      put(detail::moe_mlp_operators(model, training, tp, degrees.expert), count, kind.sixteen_bit);
    }
  }
  for (const auto& [kind, count] : kinds) {
    put(detail::residual_operators(model, training, tp, kind.sublayers()), count, false);
  }
  return rows;
}

// Fully sharded data parallelism (Megatron-FSDP's optim_grads_params, PyTorch FSDP2 as
// torchtitan applies it): parameters, gradients and the optimizer state split over the
// shard group (the routed experts' over their expert-data-parallel ranks within it, as
// Megatron-FSDP shards them). Each unit (a layer; the embedding and the head their own, as
// torchtitan wraps them) is gathered in 2-byte parameters before it runs and its gradients
// are reduce-scattered in the reduction's type. Without pipelining a rank holds its shards
// plus the gathered units: the one running and the one prefetched, and one unit's whole
// gradients awaiting their reduce-scatter; with pipelining (torchtitan turns
// reshard_after_forward off and defers the gradient sync to the last microbatch) the stage
// keeps its parameters gathered and its gradients whole for the step, and only the optimizer
// state stays sharded. Returns the parameters the rank's optimizer steps (its shard).
double set_fsdp(PositionCosts& c, const Training& training, const Degrees& degrees,
                double dense_parameters, double expert_parameters, double largest_unit,
                std::uint32_t units) {
  // The experts are sharded over the shard group's ranks that hold the same experts: its
  // ranks over the expert-parallel degree (torchtitan's dp_shard x cp / ep; with ZeRO-3 the
  // expert-data-parallel group).
  const double shard = training.fsdp_shard(degrees.data);
  const double expert_shard = std::max(1.0, shard / std::max(degrees.expert, 1u));
  const double sharded = dense_parameters / shard + expert_parameters / expert_shard;
  const double width = training.gradient_width();
  const double kept = degrees.pipeline > 1 ? c.parameters : sharded;
  c.fp8_weight_bytes *= c.parameters > 0 ? kept / c.parameters : 0.0;
  c.weight_bytes = 2 * kept;
  c.gradient_bytes = width * kept;
  c.optimizer_bytes = 12 * sharded;
  c.fsdp_units = units;
  c.fsdp_buffer_bytes = degrees.pipeline > 1 ? 0.0 : (2 * 2 + width) * largest_unit;
  // Each collective is one ring over the shard group: the experts' bytes scaled so that it
  // takes as long as theirs over their own ranks (as dp_gradient_bytes is).
  const double ring = (shard - 1) / shard;
  const double expert_ring = (expert_shard - 1) / expert_shard;
  const double moved = dense_parameters + (ring > 0 ? expert_parameters * expert_ring / ring : 0);
  c.fsdp_parameter_bytes = 2 * moved;
  c.fsdp_gradient_bytes = width * moved;
  c.dp_gradient_bytes = 0;
  c.dp_parameter_bytes = 0;
  return sharded;
}

// Layer l's kind as it is priced: kept in bf16 where the training says so.
LayerKind priced_kind(const Transformer& model, const Training& training, std::uint32_t l) {
  LayerKind kind = model.layer_kind(l);
  kind.sixteen_bit = training.keeps_bf16(l, model.layers);
  return kind;
}

}  // namespace

PositionCosts derive_position(const Transformer& model, const Training& training,
                              const Degrees& degrees, const DeviceSpec& device,
                              const LayerRange& layers) {
  PositionCosts c;
  c.layers = layers;
  const double t = degrees.tensor;
  // The position's layers by kind (attention or a sliding window, Mamba; dense MLP or MoE);
  // a position without layers lists a standard layer's operators, none of them run.
  std::vector<std::pair<LayerKind, std::uint32_t>> kinds;
  for (std::uint32_t l = layers.first; l < layers.first + layers.count; ++l) {
    add_layer_kind(kinds, priced_kind(model, training, l), 1);
  }
  // The MTP modules ride on the last position (Megatron-Core's mtp_process): their layers
  // count with the position's, their embedding, eh_proj and second head below.
  const std::uint32_t mtp = layers.head ? model.mtp_layers : 0;
  if (mtp > 0) {
    for (const LayerKind& kind : model.mtp_kinds()) add_layer_kind(kinds, kind, mtp);
  }
  if (kinds.empty() && !model.is_hybrid()) kinds.emplace_back(LayerKind{}, 0);
  std::uint32_t moe_layers = 0;  // the MTP modules' among them
  for (const auto& [kind, count] : kinds) {
    if (kind.feedforward == Feedforward::Moe) moe_layers += count;
  }
  const Precision precision = training.precision;
  for (const auto& [op, count] : position_operators(model, training, degrees, kinds)) {
    add(c, std::span(&op, 1), count, device, training);
  }
  // Megatron-Core's --recompute-modules mla_up_proj: the backward reruns MLA's up
  // projections (their forward GEMMs) to rebuild the Q, K and V it did not keep.
  const bool up_proj_recomputed = training.recompute_mla_up_proj && model.is_mla();
  if (up_proj_recomputed) {
    for (OperatorTime& op : c.operators) {
      if (op.name != "q_up" && op.name != "kv_up" && op.name != "q_proj") continue;
      op.seconds[kBackward] += op.seconds[kForward];
      op.flops[kBackward] += op.flops[kForward];
      op.kernels[kBackward] += op.kernels[kForward];
      c.backward_ns += op.seconds[kForward] * 1e9;
    }
  }
  const double layer_forward_ns = c.forward_ns;
  double attention_forward_ns = 0;
  double attention_backward_ns = 0;
  double attention_kernels = 0;  // the attention core's forward kernels
  for (const OperatorTime& op : c.operators) {
    if (is_attention_core(op.name)) {
      attention_forward_ns += op.seconds[kForward] * 1e9;
      attention_backward_ns += op.seconds[kBackward] * 1e9;
      attention_kernels += op.kernels[kForward];
    }
  }
  const detail::Dimensions d = detail::dimensions(model, training, degrees.tensor);
  // Context parallelism: each attention layer's exchange with the other ranks of its
  // sequence (a rank's K and V block, its Q, K, V and output; 2 bytes an element, on its
  // tensor-parallel rank's heads).
  if (training.context_parallel > 1) {
    double attention_layers = 0;
    for (const auto& [kind, count] : kinds) {
      if (kind.has_attention()) attention_layers += count;
    }
    if (attention_layers > 0) {
      c.context = {.layers = attention_layers,
                   .kv_bytes = 2 * d.tokens * (d.kw + d.vw) / d.t,
                   .qkv_bytes = 2 * d.tokens * (d.qw + d.kw + d.vw) / d.t,
                   .output_bytes = 2 * d.tokens * d.ow / d.t,
                   .attention_forward_ns = attention_forward_ns / attention_layers,
                   .attention_backward_ns = attention_backward_ns / attention_layers};
    }
  }
  const std::size_t layer_operators = c.operators.size();
  if (layers.embedding)
    add(c, embedding_operators(model, training, degrees.tensor), 1, device, training);
  if (layers.head) add(c, head_operators(model, training, degrees.tensor), 1, device, training);
  if (mtp > 0) add(c, mtp_operators(model, training, degrees.tensor), mtp, device, training);
  // Recomputation reruns the layers' forward (full) or the attention core (selective) in an
  // R task before the backward.
  c.recompute_forward_ns = {0.0, attention_forward_ns, layer_forward_ns};
  c.recompute_ns = c.recompute_forward_ns[static_cast<std::size_t>(training.recompute)];

  // Activations kept per layer (Korthikanti et al. 2022, section 4, generalised to f and
  // grouped-query attention; 2-byte tensors, 1-byte dropout masks), per sublayer: a
  // standard layer's attention and MLP, a hybrid model's one part.
  const auto [tp, b, s, tokens, h, f, qw, kw, vw, ow, latent, r] = d;
  // Bytes of a GEMM input kept for the backward: Transformer Engine's quantised Linear keeps
  // its input quantised (transformer_engine/pytorch/module/linear.py saves the quantised
  // `inputmat`, its columnwise copy only: fp8 one byte an element, MXFP8 and NVFP4 with their
  // block scales; so do LayerNormLinear's normalised input and GroupedLinear's), else the
  // 2-byte activation itself.
  const Quantisation quantisation = training.quantisation(device);
  const double q = quantisation.kept_input_bytes();
  // With dropout, the mask after each sublayer (1 byte); none at rate 0.
  const double mask = model.hidden_dropout > 0 ? 1.0 : 0.0;
  // The attention core keeps Q, K, V and its output (2 bytes; the output is the projection's
  // input; Q and the output a d wide, h unless the head width is set; with MLA Q and K
  // a (nope + rope), V and the output a v). Quantised, the projection keeps its own copy of
  // it as well.
  // (A layer kept in bf16 keeps its GEMM inputs in 2 bytes: `qk` below is q or 2, and it
  // has no quantised copy.)
  // Recomputing MLA's up projections keeps none of Q, K and V, only the latents.
  const auto attention_kept = [&](double qk, bool quantised_layer) {
    return 2 * tokens * ((up_proj_recomputed ? 0.0 : qw + kw + vw) + ow) +
           (quantised_layer ? qk * tokens * ow : 0.0);
  };
  const double scores = 5 * model.heads * s * s * b / t;  // softmax output, mask, dropout
  // What W still needs after B of the attention: the inputs of its weight GEMMs (QKV or MLA's
  // down and up projections, the output projection).
  const auto attention_weight_inputs = [&](double qk) {
    return qk * tokens * h * r + qk * tokens * latent * r + qk * tokens * ow / t;
  };
  // A Mamba-2 mixer keeps, on its rank's H / t heads: in_proj's output (z, x, B, C, dt), the
  // convolution's output (x, B, C after the SiLU, the scan's inputs), the scan's output y
  // (the gated norm's input with z) and the norm's output, out_proj's input (q); its W needs
  // in_proj's and out_proj's inputs.
  const Mamba& mamba = model.mamba;
  const double inner = mamba.inner();
  const double bc = 2.0 * mamba.groups * mamba.state_dim;
  const auto mamba_kept = [&](double qk) {
    return 2 * tokens * (2 * inner + bc + mamba.heads) + 2 * tokens * (inner + bc) +
           2 * tokens * inner + qk * tokens * inner;
  };
  // The MLP's inside: the first GEMM's output for the activation's backward (2 bytes, 2f wide
  // with SwiGLU's gate and up), and the second GEMM's input (q).
  const auto inside = [&](double qk) { return model.mlp == Mlp::SwiGlu ? 4 + qk : 2 + qk; };
  // A MoE layer keeps, instead of the dense MLP's inside (m T f / t):
  //   4 T r E      the router's fp32 probabilities (its softmax output, as Korthikanti counts
  //                the attention's), over this rank's tokens;
  //   q T k L h    the routed experts' input: the T k tokens dispatched to them, L times
  //                that on the slowest rank (Transformer::expert_load), gathered over the
  //                tensor-parallel ranks (Megatron-LM's dispatcher all-gathers them, expert
  //                tensor parallelism = TP): unsplit, like the dense MLP's input without
  //                sequence parallelism;
  //   m T k L f_e / t  the experts' inside, as the dense MLP's with f_e and T k L tokens;
  //   m T S f_e / t    the shared experts' inside (their input is the MLP input, counted).
  // With m = 2 + q (gelu) or 4 + q (swiglu). W still needs the experts' inputs (q T k L h and
  // q T k L f_e / t for the down matrices) and the shared experts' down input (q T S f_e / t).
  const double fe = model.expert_hidden();
  const double routed = tokens * model.top_k * model.expert_load();
  const double shared = tokens * model.shared_experts;
  const double expert = (model.mlp == Mlp::SwiGlu ? 3 : 2) * h * fe;

  // Parameters on one tensor-parallel rank: the matrices split, the norms replicated, and
  // MLA's down projections and latent norms whole on every rank. A MoE layer's router (h x E,
  // replicated as Megatron-LM's TopKRouter is) stays whole, and the rank holds E / EP of the
  // routed experts, split like the dense MLP.
  const double whole = model.replicated_attention_parameters();
  double activation = 0;
  std::array<double, 3> kept{};
  std::array<double, 3> rebuilt{};
  double kept_by_w = 0;
  c.parameters = 0;
  // The quantised layers' GEMM weights on the rank (Transformer Engine's Linear modules): all
  // but the norms, the router, the embedding and the head (MLA's two latent norms, 2048
  // weights of DeepSeek-V3's 187M, counted with them).
  double gemm_parameters = 0;
  double expert_parameters = 0;  // the routed experts' on this rank
  double largest_unit = 0;       // FSDP's: the most parameters one layer holds on the rank
  std::uint32_t tp_collectives = 0;
  for (const auto& [kind, layer_count] : kinds) {
    const double n = layer_count;
    const bool attention = kind.has_attention();
    const bool moe = kind.feedforward == Feedforward::Moe;
    const bool quantised_layer = quantised(precision) && !kind.sixteen_bit;
    const double qk = quantised_layer ? q : 2.0;
    // Each sublayer's norm input (2), its GEMM's input (q) and dropout mask: unsplit without
    // sequence parallelism. With MLA, the latents too (q_lora + kv_lora per token): the latent
    // norms' inputs (2 bytes) and the up projections' inputs (q), split like the other GEMM
    // inputs.
    const double replicated = kind.sublayers() * (2 + qk + mask) * tokens * h * r +
                              (attention ? (2 + qk) * tokens * latent * r : 0.0);
    // Divided over the tensor-parallel ranks.
    double split = attention ? attention_kept(qk, quantised_layer) : 0.0;
    if (kind.mixer == Mixer::Mamba) split += mamba_kept(qk);
    if (kind.feedforward == Feedforward::Dense) split += inside(qk) * tokens * f;
    if (moe) split += inside(qk) * (routed + shared) * fe;
    double sharded = split / t;
    if (moe) {
      sharded += qk * routed * h;
      sharded += 4 * tokens * r * model.experts;
    }
    // Per layer, what F keeps: everything (34sbh + 5as^2b/t for a standard layer without flash
    // attention), all but the attention scores (selective: 34sbh) or the layer's input (full:
    // 2sbh).
    const double per_layer =
        replicated + sharded + (attention && !training.flash_attention ? scores : 0.0);
    const std::array<double, 3> kept_per_layer = {per_layer, replicated + sharded,
                                                  2 * tokens * h * r};
    double weight_inputs = attention ? attention_weight_inputs(qk) : 0.0;
    if (kind.mixer == Mixer::Mamba) {
      weight_inputs += qk * tokens * h * r;
      weight_inputs += qk * tokens * inner / t;
    }
    if (kind.feedforward != Feedforward::None) weight_inputs += qk * tokens * h * r;
    if (kind.feedforward == Feedforward::Dense) weight_inputs += qk * tokens * f / t;
    if (moe) {
      weight_inputs += qk * routed * h;
      weight_inputs += qk * (routed + shared) * fe / t;
    }
    activation += n * per_layer;
    kept_by_w += n * weight_inputs;
    for (std::size_t mode = 0; mode < 3; ++mode) {
      kept[mode] += n * kept_per_layer[mode];
      // One layer at a time: the larger kind of layer the position holds.
      if (n > 0) rebuilt[mode] = std::max(rebuilt[mode], per_layer - kept_per_layer[mode]);
    }

    const double norms = kind.sublayers() * h;
    const double replicated_weights = (attention ? whole : 0.0);
    const double router = moe ? h * model.experts : 0.0;
    const double routed_weights = moe ? double(model.experts) * expert : 0.0;
    const double split_weights =
        model.kind_parameters(kind) - norms - replicated_weights - router - routed_weights;
    const double on_rank = moe ? n * (double(model.experts) / degrees.expert) * expert / t : 0.0;
    expert_parameters += on_rank;
    c.parameters += n * (split_weights / t + norms + replicated_weights + router) + on_rank;
    if (n > 0) {
      largest_unit = std::max(
          largest_unit, split_weights / t + norms + replicated_weights + router + on_rank / n);
    }
    // A bf16 layer's weights are not cast (no quantised copy cached).
    if (quantised_layer) gemm_parameters += n * (split_weights / t + replicated_weights) + on_rank;
    // A tensor-parallel collective after each sublayer (the row-parallel GEMM's all-reduce, or
    // with sequence parallelism its reduce-scatter and the next all-gather). A MoE layer's
    // is its tokens' all-gather and reduce-scatter, which move as much; with expert
    // parallelism the dispatcher prices those itself (parallel::moe_dispatch_cost; DeepEP has
    // none), and only the shared experts, an MLP split over the TP ranks, keep one.
    const bool dispatcher_collective = moe && degrees.expert > 1 && model.shared_experts == 0;
    tp_collectives += layer_count * (kind.sublayers() - (dispatcher_collective ? 1 : 0));
  }
  double extra = 0;  // kept whatever is recomputed
  if (layers.embedding && model.hidden_dropout > 0) extra += tokens * h * r;  // its dropout mask
  if (layers.head) {
    // The final norm's input and the fp32 logits the loss keeps (4 bytes each).
    extra += 2 * tokens * h * r + 4 * tokens * model.vocab / t;
    kept_by_w += 2 * tokens * h * r;
  }
  // An MTP module keeps its two norms' inputs (the embedding and the hidden state), eh_proj's
  // input (2h, q bytes), its final norm's input and its logits; W needs eh_proj's and the LM
  // head's inputs.
  extra += mtp * (2 * 2 * tokens * h * r + q * 2 * tokens * h * r + 2 * tokens * h * r +
                  4 * tokens * model.vocab / t);
  kept_by_w += mtp * (q * 2 * tokens * h * r + 2 * tokens * h * r);
  c.activation = activation + extra;
  for (std::size_t mode = 0; mode < 3; ++mode) {
    c.kept_activation[mode] = kept[mode] + extra;
    c.recompute_rebuilt[mode] = rebuilt[mode];
  }
  c.backward_frees = c.activation > 0 ? std::clamp(1 - kept_by_w / c.activation, 0.0, 1.0) : 0;

  const double table = model.embedding_parameters() / t;  // vocabulary-parallel
  if (layers.embedding) c.parameters += table;
  if (layers.embedding || layers.head) largest_unit = std::max(largest_unit, table + h);
  // The head's matrix, or the tied embedding's copy on the last stage (Megatron keeps both
  // and all-reduces their gradients), plus the final norm.
  if (layers.head && !(layers.embedding && model.tied_embeddings)) c.parameters += table;
  if (layers.head) c.parameters += h;
  // The MTP modules' norms (replicated) and eh_proj (column-parallel); away from the first
  // position the word embedding's copy they look the next tokens up in.
  if (mtp > 0) {
    c.parameters += mtp * (3 * h + 2 * h * h / t);
    gemm_parameters += mtp * 2 * h * h / t;
    if (!layers.embedding && !layers.embedding_on_device) c.parameters += table;
  }
  // Mixed-precision Adam (Megatron-LM's distributed optimizer notes): 2-byte weights,
  // main gradients in the reduction's type (fp32 unless asked otherwise), fp32 master
  // weights and two moments (12 bytes, sharded over data parallelism with the distributed
  // optimizer).
  const double gradient_width = training.gradient_width();
  c.weight_bytes = 2 * c.parameters;
  c.gradient_bytes = gradient_width * c.parameters;
  c.optimizer_bytes =
      12 * c.parameters / (training.distributed_optimizer ? double(degrees.data) : 1.0);
  // Quantised, Transformer Engine casts each GEMM weight on a step's first microbatch and
  // keeps the cast for the others (fp8 on Hopper: its rowwise data for F and its transpose
  // for B, a byte each; Blackwell needs no transpose; MXFP8 and NVFP4 both blockwise copies):
  // Megatron-Core's TE modules pass is_first_microbatch unless
  // --disable-parameter-transpose-cache (megatron/core/extensions/transformer_engine.py).
  c.fp8_weight_bytes = quantisation.weight_cache_bytes() * gemm_parameters;
  // Expert parameters have data / EP replicas (the expert-data-parallel group), which also
  // shard their optimizer state (Megatron-LM).
  const double dp = degrees.data;
  const double expert_dp = std::max(1.0, dp / degrees.expert);
  const double dense_parameters = c.parameters - expert_parameters;
  if (expert_parameters > 0 && training.distributed_optimizer) {
    c.optimizer_bytes = 12 * (dense_parameters / dp + expert_parameters / expert_dp);
  }

  // Traffic: the activation to the next position, the tensor-parallel all-reduces (one per
  // sublayer in F and in B, as counted above, and one for the embedding), the gradients
  // across replicas.
  c.boundary_bytes = 2 * tokens * h * r;
  if (degrees.tensor > 1) {
    c.tp_allreduce_bytes = 2 * tokens * h;
    // An MTP module gathers eh_proj's column-parallel output (or, with sequence parallelism,
    // its all-gather and scatter): one more each.
    c.tp_allreduces = tp_collectives + (layers.embedding ? 1 : 0) + mtp;
  }
  // Each module's layers are graphed one by one (a hybrid module's pattern has several).
  set_host_work(c, training, degrees, device, layer_operators,
                layers.count + mtp * static_cast<double>(model.mtp_kinds().size()),
                attention_kernels);

  c.dp_gradient_bytes = gradient_width * c.parameters;
  c.dp_parameter_bytes = training.distributed_optimizer ? 2 * c.parameters : 0.0;
  if (expert_parameters > 0 && degrees.data > 1) {
    // Dense gradients all-reduce over the data ranks, expert gradients over their data / EP
    // replicas only. The data-parallel model runs one ring over `data` ranks per chunk
    // (2 (n - 1) / n x bytes / bandwidth), so the expert bytes are scaled to take their own
    // ring's time: x ((d/EP - 1) / (d/EP)) / ((d - 1) / d), 0 when each expert shard has a
    // single replica. (The expert ring's ranks are strided across the data group; its links
    // are taken to be the data ring's.)
    const double ring = (dp - 1) / dp;
    const double expert_ring = (expert_dp - 1) / expert_dp;
    const double reduced = dense_parameters + expert_parameters * expert_ring / ring;
    c.dp_gradient_bytes = gradient_width * reduced;
    if (training.distributed_optimizer) c.dp_parameter_bytes = 2 * reduced;
  }
  // Expert parallelism: each MoE layer dispatches this rank's T r tokens to their top_k
  // experts and combines them back, in 2-byte activations (DeepSeek-V3 report, section 3.2.2;
  // Megatron-LM's all-to-all token dispatcher). Balanced routing: a rank sends T r k h x 2
  // bytes in each (including the share that stays on it); none with EP 1.
  if (moe_layers > 0 && degrees.expert > 1) {
    c.a2a_bytes = 2 * tokens * r * model.top_k * h;
    c.a2a_per_pass = 2 * moe_layers;
    c.moe_routing = {.tokens = tokens * r,
                     .hidden = h,
                     .top_k = model.top_k,
                     .experts = model.experts,
                     .load = model.expert_load(),
                     .groups = model.expert_groups,
                     .group_top_k = model.group_top_k,
                     .layers = moe_layers};
  }
  // Adam reads and writes master weights and moments (24 bytes), reads the gradient (4) and
  // writes the 2-byte weights: 30 bytes per parameter it updates.
  double updated = c.parameters / (training.distributed_optimizer ? double(degrees.data) : 1.0);
  if (expert_parameters > 0 && training.distributed_optimizer) {
    updated = dense_parameters / dp + expert_parameters / expert_dp;
  }
  if (training.fsdp != Fsdp::None) {
    updated = set_fsdp(c, training, degrees, dense_parameters, expert_parameters, largest_unit,
                       layers.count + mtp + (layers.embedding ? 1 : 0) + (layers.head ? 1 : 0));
  }
  c.optimizer_ns = 30 * updated / (device.memory_bandwidth * device.efficiency.memory) * 1e9;
  return c;
}

std::optional<double> fit_gemm_max(std::span<const Observation> observations, double used) {
  // measured ~ gemm x (used / g) + other: least squares in x = used / g.
  double gg = 0;
  double gm = 0;
  for (const Observation& o : observations) {
    gg += o.gemm_ns * o.gemm_ns;
    gm += o.gemm_ns * (o.measured_ns - o.other_ns);
  }
  if (gg <= 0 || gm <= 0) return std::nullopt;
  return used / (gm / gg);
}

UnitSeconds unit_seconds(const Transformer& model, const Training& training, const Degrees& degrees,
                         const DeviceSpec& device, double collective_seconds) {
  // Each pass as the task will take it: the GPU's time with its collectives, or the host's
  // where longer (the host floor). Per unit, so a stage of host-bound layers adds up.
  const auto seconds = [&](const LayerRange& range) {
    const PositionCosts c = derive_position(model, training, degrees, device, range);
    const double tp_ns = c.tp_allreduces * collective_seconds * 1e9;
    const double recompute_host = c.recompute_host[static_cast<std::size_t>(training.recompute)].ns;
    return (std::max(c.forward_ns + tp_ns, c.forward_host.ns) +
            std::max(c.backward_ns + tp_ns, c.backward_host.ns) +
            std::max(c.weight_ns, c.weight_host.ns) + std::max(c.recompute_ns, recompute_host)) /
           1e9;
  };
  UnitSeconds out;
  out.embedding = seconds({.first = 0, .count = 0, .embedding = true});
  out.head = seconds({.first = model.layers, .count = 0, .head = true});
  // Each kind of layer is derived once.
  std::map<LayerKind, double> kinds;
  out.layers.reserve(model.layers);
  for (std::uint32_t l = 0; l < model.layers; ++l) {
    const auto [it, fresh] = kinds.try_emplace(priced_kind(model, training, l), 0.0);
    if (fresh) it->second = seconds({.first = l, .count = 1});
    out.layers.push_back(it->second);
  }
  return out;
}

}  // namespace perflow::model
