// `perflow explain CONFIG` (and Python's perflow.explain): how /model's costs were
// derived, stage by stage, so a user can audit every number the simulation starts from.
#include "perflow/study/explain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "detail/cost_config.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/time.hpp"
#include "perflow/core/units.hpp"
#include "perflow/parallel/data_parallel.hpp"

namespace perflow::study {
namespace {

// A GEMM operator's kernels (model::plan_gemm): the share of peak each pass reaches and the
// forward's tile and waves, e.g. "64/61/58 256x128 x 3.88 stream-K".
std::string gemm_summary(const std::array<model::GemmPlan, 3>& plans) {
  std::string shares;
  for (const model::GemmPlan& plan : plans) {
    if (!shares.empty()) shares += "/";
    shares += plan.ns > 0 ? fmt::format("{:.0f}", plan.fraction_of_peak * 100) : "-";
  }
  const model::GemmPlan& f = plans[model::kForward];
  return fmt::format("{} {}x{} x {:.2f}{}{}", shares, f.tile.m, f.tile.n, f.waves,
                     f.stream_k ? " stream-K" : "", f.memory_bound ? " memory-bound" : "");
}

nlohmann::ordered_json gemm_json(const std::array<model::GemmPlan, 3>& plans) {
  using Json = nlohmann::ordered_json;
  Json out = Json::object();
  const char* names[] = {"forward", "backward", "weight"};
  for (const model::Pass pass : {model::kForward, model::kBackward, model::kWeight}) {
    const model::GemmPlan& plan = plans[pass];
    if (plan.ns <= 0) {
      out[names[pass]] = nullptr;
      continue;
    }
    out[names[pass]] = {{"tile", fmt::format("{}x{}", plan.tile.m, plan.tile.n)},
                        {"stream_k", plan.stream_k},
                        {"waves", plan.waves},
                        {"memory_bound", plan.memory_bound},
                        {"fraction_of_peak", plan.fraction_of_peak}};
  }
  return out;
}

std::string ns(double x) { return format_duration(static_cast<TimeNs>(std::llround(x))); }

// The buckets stage s chunk c reduces `bytes` of gradients in (add_data_parallel's rule).
std::uint64_t gradient_buckets(const Config& config, std::uint32_t s, std::uint32_t c,
                               double bytes) {
  return parallel::gradient_bucket_count(config.data_parallel,
                                         std::size_t{s} * config.data_parallel.chunks + c, bytes);
}

// Which side bounds a derived task: its host when the resolved time is the host's (the floor
// was taken over the GPU's compute and collectives; a duration given by hand has none).
// The training precision, with fp8's scaling recipe.
std::string precision_text(const model::Training& t) {
  std::string text = t.precision != model::Precision::Fp8
                         ? std::string(model::to_string(t.precision))
                         : fmt::format("fp8 ({} scaling)", model::to_string(t.fp8_recipe));
  if (t.bf16_layers_at_start + t.bf16_layers_at_end > 0) {
    text += fmt::format(", the first {} and last {} layer(s) in bf16", t.bf16_layers_at_start,
                        t.bf16_layers_at_end);
  }
  return text;
}

std::string_view bound_by(double host_ns, TimeNs resolved) {
  return host_ns > 0 && std::llround(host_ns) == resolved ? "host" : "GPU";
}

nlohmann::ordered_json host_json(const model::PositionCosts& p, const parallel::TaskCosts& resolved,
                                 std::size_t recompute) {
  const auto side = [](const model::HostWork& w) {
    return nlohmann::ordered_json{
        {"ns", w.ns}, {"kernels", w.kernels}, {"nccl_calls", w.nccl_calls}};
  };
  return {{"forward", side(p.forward_host)},
          {"backward", side(p.backward_host)},
          {"weight", side(p.weight_host)},
          {"recompute", side(p.recompute_host[recompute])},
          {"bound",
           {{"forward", bound_by(p.forward_host.ns, resolved.forward)},
            {"backward", bound_by(p.backward_host.ns, resolved.backward)},
            {"weight", bound_by(p.weight_host.ns, resolved.weight)}}}};
}

// "1.083ms each (ring Simple)".
std::string describe_choice(const parallel::CollectiveChoice& c, std::string_view each) {
  return fmt::format("{}{} ({} {})", format_duration(c.time), each,
                     parallel::to_string(c.algorithm), parallel::to_string(c.protocol));
}

// With NCCL pricing: what one tensor-parallel collective and one gradient bucket of the
// position's mean size cost, and the algorithm and protocol NCCL would pick for them.
std::string describe_collectives(const Config& config, const model::PositionCosts& p,
                                 std::uint64_t buckets) {
  std::string parts;
  const auto add = [&parts](const std::string& part) {
    parts += (parts.empty() ? "" : "; ") + part;
  };
  if (config.tensor_parallel_nccl && config.tensor_parallel > 1 && p.tp_allreduces > 0) {
    const bool sp = config.model->training.sequence_parallel;
    add(fmt::format("tp {}: {}", sp ? "reduce-scatter + all-gather" : "all-reduce",
                    describe_choice(detail::tensor_parallel_collective(*config.tensor_parallel_nccl,
                                                                       config.tensor_parallel, sp,
                                                                       p.tp_allreduce_bytes),
                                    " each")));
  }
  const parallel::DataParallelSpec& dp = config.data_parallel;
  if (dp.nccl && dp.ranks() > 1 && p.dp_gradient_bytes > 0) {
    const double bytes = p.dp_gradient_bytes / static_cast<double>(buckets);
    const parallel::Collective kind =
        dp.sharded ? parallel::Collective::ReduceScatter : parallel::Collective::AllReduce;
    add(fmt::format(
        "dp {} of a {} bucket: {}", parallel::to_string(kind), format_memory(bytes),
        describe_choice(parallel::nccl_collective_time(kind, bytes, dp.ranks(), *dp.nccl), "")));
  }
  return parts.empty() ? std::string() : fmt::format("    collectives (NCCL): {}\n", parts);
}

// The FSDP line of position `i`: its units, what a gather and a reduction move, and their
// times per unit.
std::string describe_fsdp(const Config& config, std::size_t i, const model::PositionCosts& p) {
  const parallel::FsdpSpec& spec = config.fsdp;
  if (i >= spec.units.size() || spec.units[i] == 0) return {};
  const model::Training& t = config.model->training;
  const std::uint32_t shard = t.fsdp_shard(config.data_parallel.ranks());
  const std::uint32_t replicas = config.data_parallel.ranks() / shard;
  return fmt::format(
      "    fsdp ({} over {} ranks on {}{}): {} units, {} of parameters gathered {}, {} of "
      "gradients reduce-scattered {}; a unit's gather {}, reduce-scatter {}{}{}\n",
      model::to_string(t.fsdp), shard, config.fsdp_link,
      replicas > 1 ? fmt::format(", {} replicas", replicas) : "", spec.units[i],
      format_memory(p.fsdp_parameter_bytes),
      spec.reshard_after_forward ? "before each F and each backward" : "once a step",
      format_memory(p.fsdp_gradient_bytes),
      spec.reshard_after_forward ? "after each backward" : "after the last backward",
      format_duration(spec.gather[i]), format_duration(spec.reduce[i]),
      replicas > 1 ? fmt::format(", the replicas' all-reduce {} (last backward)",
                                 format_duration(spec.replica_reduce[i]))
                   : "",
      p.fsdp_buffer_bytes > 0
          ? fmt::format("; gathered units hold {}", format_memory(p.fsdp_buffer_bytes))
          : "");
}

// The expert-parallel line: the dispatcher's dispatch and combine per MoE layer, or the
// all-to-alls given by hand; `all_to_all` is what one F (and one backward) waits for.
std::string describe_expert_parallel(const Config& config, const model::PositionCosts& p,
                                     const ExpertTraffic& traffic, TimeNs all_to_all) {
  if (traffic.count == 0 && all_to_all == 0) return {};
  const auto ns = [](TimeNs t) { return format_duration(t); };
  if (traffic.by_dispatcher) {
    const parallel::MoeDispatchCost c = detail::moe_dispatch(config, p.moe_routing);
    const MoeDispatcher dispatcher = config.model->training.moe_dispatcher;
    const std::string moved =
        dispatcher == MoeDispatcher::DeepEp
            ? fmt::format("{} over NVLink, {} over the network", format_memory(c.nvlink_bytes),
                          format_memory(c.network_bytes))
            : fmt::format("{} of rows sent", format_memory(c.network_bytes));
    return fmt::format(
        "    expert parallel ({}): {} MoE layer{}, each a dispatch of {} and a combine of {} on "
        "the busiest rank ({}): {} in F and in B\n",
        to_string(dispatcher), p.moe_routing.layers, p.moe_routing.layers == 1 ? "" : "s",
        ns(c.dispatch), ns(c.combine), moved, ns(all_to_all));
  }
  return fmt::format("    expert parallel: {} all-to-alls of {} sent per rank: {} in F and in B\n",
                     traffic.count, format_memory(traffic.bytes), ns(all_to_all));
}

}  // namespace

std::string explain(const Config& config) {
  if (!config.model) {
    throw ConfigError(config.file, "",
                      "explain shows what /model derives; this config has no /model");
  }
  std::string out;
  const ModelPlan& plan = *config.model;
  const model::Transformer& m = plan.transformer;
  out += fmt::format(
      "model      {}{} layers, hidden {}, ffn {}, heads {} ({}), vocab {}, sequence "
      "{}, {}{}{}; {:.2f}B parameters{}\n",
      plan.preset.empty() ? "" : plan.preset + ": ", m.layers, m.hidden, m.ffn_hidden, m.heads,
      m.is_mla()
          ? fmt::format("MLA: q rank {}, kv rank {}, qk {}+{}, v {}", m.mla.q_lora_rank,
                        m.mla.kv_lora_rank, m.mla.qk_nope_head_dim, m.mla.qk_rope_head_dim,
                        m.mla.v_head_dim)
          : fmt::format("kv {}{}", m.kv_heads,
                        m.kv_channels > 0 ? fmt::format(", head dim {}", m.kv_channels) : ""),
      m.vocab, m.sequence, model::to_string(m.mlp), m.tied_embeddings ? ", tied embeddings" : "",
      m.hidden_dropout > 0 ? fmt::format(", hidden dropout {}", m.hidden_dropout) : "",
      m.parameters() / 1e9,
      m.mtp_layers > 0 ? fmt::format(" + {:.2f}B in {} multi-token prediction module(s)",
                                     m.mtp_layers * m.mtp_module_parameters() / 1e9, m.mtp_layers)
                       : "");
  if (m.sliding_window > 0 || m.attention_sinks) {
    std::uint32_t windowed = 0, attention = 0;
    for (const auto& [kind, count] : m.layer_kinds_in(0, m.layers)) {
      if (kind.has_attention()) attention += count;
      if (kind.mixer == model::Mixer::WindowedAttention) windowed += count;
    }
    out += fmt::format(
        "attention  {}{}\n",
        m.sliding_window > 0
            ? fmt::format("{}-token sliding window on {} of {} attention layers{}",
                          m.sliding_window, windowed, attention,
                          m.window_pattern.empty() ? "" : fmt::format(" ({})", m.window_pattern))
            : "full",
        m.attention_sinks ? ", a learned sink per head" : "");
  }
  if (m.is_hybrid()) {
    // The pattern's kinds that it has, with their counts.
    std::vector<std::string> parts;
    const auto part = [&](char c, std::string what) {
      const auto n = std::count(m.layer_pattern.begin(), m.layer_pattern.end(), c);
      if (n > 0) parts.push_back(fmt::format("{} {}", n, what));
    };
    part('M', fmt::format("Mamba-2 (heads {} x {}, state {}, {} groups)", m.mamba.heads,
                          m.mamba.head_dim, m.mamba.state_dim, m.mamba.groups));
    part('*', "attention");
    part('-', "MLP");
    part('E', "MoE");
    out += fmt::format("hybrid     {}: {}{}\n", m.layer_pattern, fmt::join(parts, ", "),
                       m.mtp_pattern.empty() ? ""
                                             : fmt::format("; {} multi-token prediction module(s) "
                                                           "of \"{}\"",
                                                           m.mtp_layers, m.mtp_pattern));
  }
  if (m.experts > 0) {
    const std::uint32_t moe = m.moe_layers();
    out += fmt::format(
        "experts    {} routed (top {}){}, expert ffn {}, MoE layers {}, slowest expert rank's "
        "load {:.2f}{}{}; {} dispatcher{}\n",
        m.experts, m.top_k,
        m.shared_experts > 0 ? fmt::format(" + {} shared", m.shared_experts) : "",
        m.expert_hidden(),
        moe == 0        ? std::string("none")
        : m.is_hybrid() ? fmt::format("the pattern's {} E", moe)
                        : fmt::format("{}-{}", m.layers - moe, m.layers - 1),
        m.expert_load(), m.capacity_factor > 0 ? " (capacity factor)" : "",
        m.expert_groups > 0 ? fmt::format(", a token's experts from {} of {} groups", m.group_top_k,
                                          m.expert_groups)
                            : "",
        to_string(plan.training.moe_dispatcher),
        config.moe_a2a_overlap ? ", all-to-alls overlapped with the other microbatch" : "");
  }
  const model::Training& t = plan.training;
  out += fmt::format(
      "training   micro batch {}, global batch {} ({} microbatches), {}, recompute {}{}{}{}{}, "
      "gradients in {}\n",
      t.micro_batch_size, t.global_batch_size, config.pipeline.microbatches, precision_text(t),
      model::to_string(t.recompute), t.recompute_mla_up_proj ? " + MLA up projections" : "",
      t.sequence_parallel ? ", sequence parallel" : "",
      t.fsdp != model::Fsdp::None ? fmt::format(", fsdp {}", model::to_string(t.fsdp))
                                  : (t.distributed_optimizer ? ", distributed optimizer" : ""),
      t.flash_attention ? ", flash attention" : "", model::to_string(t.reduce_dtype()));
  out +=
      fmt::format("layout     tp {} x {}pp {} x dp {}{}, {} chunk(s) per stage, {} split\n",
                  config.tensor_parallel,
                  config.context_parallel > 1 ? fmt::format("cp {} x ", config.context_parallel)
                                              : std::string(),
                  config.pipeline.stages, config.data_parallel.degree,
                  config.expert_parallel > 1 ? fmt::format(" (ep {})", config.expert_parallel) : "",
                  config.pipeline.chunks, plan.split);
  out += fmt::format(
      "\nPer microbatch on one tensor-parallel rank (the costs a config may override):\n");
  const std::uint32_t chunks = config.pipeline.chunks;
  for (std::uint32_t s = 0; s < config.pipeline.stages; ++s) {
    const DeviceInfo& device = config.devices[s];
    out += fmt::format("\nstage {} on {}{}\n", s, device.type.empty() ? "(no GPU)" : device.type,
                       plan.timed[s] ? "" : ": durations from /costs");
    for (std::uint32_t c = 0; c < chunks; ++c) {
      const model::PositionCosts& p = plan.positions[std::size_t{s} * chunks + c];
      const auto& l = p.layers;
      out += fmt::format(
          "  chunk {}: layers {}{}{}{}\n", c,
          l.count == 0 ? std::string("none") : fmt::format("{}-{}", l.first, l.first + l.count - 1),
          l.count == 0 ? "" : fmt::format(" ({})", l.count), l.embedding ? " + embedding" : "",
          l.head ? " + LM head and loss" : "");
      if (plan.timed[s]) {
        out += fmt::format("    {:<17} {:>12} {:>12} {:>12} {:>14}  {}\n", "operator", "F", "B",
                           "W", "F GFLOP", "GEMM % of peak F/B/W, F's tile x waves");
        for (const model::OperatorTime& op : p.operators) {
          out += fmt::format(
              "    {:<17} {:>12} {:>12} {:>12} {:>14.1f}{}\n", op.name,
              ns(op.seconds[model::kForward] * 1e9), ns(op.seconds[model::kBackward] * 1e9),
              ns(op.seconds[model::kWeight] * 1e9), op.flops[model::kForward] / 1e9,
              op.gemm ? "  " + gemm_summary(op.plans) + (op.sixteen_bit ? ", in bf16" : "")
                      : std::string());
        }
        if (model::quantised(plan.training.precision)) {
          std::array<double, 3> casts{};
          for (const model::OperatorTime& op : p.operators) {
            for (std::size_t pass = 0; pass < 3; ++pass) casts[pass] += op.quantise_seconds[pass];
          }
          out += fmt::format("    {:<17} {:>12} {:>12} {:>12}   (of the GEMMs' times above)\n",
                             "of which casts", ns(casts[model::kForward] * 1e9),
                             ns(casts[model::kBackward] * 1e9), ns(casts[model::kWeight] * 1e9));
        }
        out += fmt::format(
            "    {:<17} {:>12} {:>12} {:>12}{}\n", "task", ns(p.forward_ns), ns(p.backward_ns),
            ns(p.weight_ns),
            p.recompute_ns > 0
                ? fmt::format("   (and R {} recomputing before each B)", ns(p.recompute_ns))
                : std::string());
        const parallel::TaskCosts& resolved = config.costs.at(StageId{s}, c);
        const auto kernels = [](const model::HostWork& w) {
          return w.nccl_calls > 0 ? fmt::format("{:.0f}+{:.0f}", w.kernels, w.nccl_calls)
                                  : fmt::format("{:.0f}", w.kernels);
        };
        out += fmt::format(
            "    {:<17} {:>12} {:>12} {:>12}   ({}, {}, {} {} at {} each)\n", "host",
            ns(p.forward_host.ns), ns(p.backward_host.ns), ns(p.weight_host.ns),
            kernels(p.forward_host), kernels(p.backward_host), kernels(p.weight_host),
            plan.training.cuda_graphs ? "graph launches and kernels" : "kernels (+ NCCL calls)",
            ns(plan.kernel_launch[s] * 1e9));
        out += fmt::format(
            "    {:<17} {:>12} {:>12} {:>12}   (with the tensor-parallel collectives, or the "
            "host's time where it is longer)\n",
            "resolved", ns(double(resolved.forward)), ns(double(resolved.backward)),
            ns(double(resolved.weight)));
        out += fmt::format("    {:<17} {:>12} {:>12} {:>12}\n", "bound by",
                           bound_by(p.forward_host.ns, resolved.forward),
                           bound_by(p.backward_host.ns, resolved.backward),
                           bound_by(p.weight_host.ns, resolved.weight));
      }
      out += fmt::format(
          "    memory: activation {} per microbatch{} (B frees {:.0f}%), weights {}{}, "
          "gradients {}, optimizer state {}\n",
          format_memory(p.activation),
          plan.training.recompute == model::Recompute::None
              ? std::string()
              : fmt::format(
                    ", F keeps {} of it",
                    format_memory(
                        p.kept_activation[static_cast<std::size_t>(plan.training.recompute)])),
          p.backward_frees * 100, format_memory(p.weight_bytes),
          p.fp8_weight_bytes > 0
              ? fmt::format(" (and their {} copies {})", model::to_string(plan.training.precision),
                            format_memory(p.fp8_weight_bytes))
              : std::string(),
          format_memory(p.gradient_bytes), format_memory(p.optimizer_bytes));
      const std::uint64_t buckets = gradient_buckets(config, s, c, p.dp_gradient_bytes);
      // With FSDP its own line (describe_fsdp) says what crosses the replicas.
      const std::string gradients =
          t.fsdp != model::Fsdp::None
              ? std::string("gradients across replicas by FSDP (below)")
              : fmt::format("{} of gradients across replicas in {} bucket{}{}",
                            format_memory(p.dp_gradient_bytes), buckets, buckets == 1 ? "" : "s",
                            t.distributed_optimizer
                                ? fmt::format(" (reduce-scattered; {} of parameters gathered back)",
                                              format_memory(p.dp_parameter_bytes))
                                : std::string());
      out += fmt::format(
          "    traffic: {} to the next stage, {} tensor-parallel all-reduces of {} in F "
          "and in B, {}, optimizer step {}\n",
          format_memory(p.boundary_bytes), p.tp_allreduces, format_memory(p.tp_allreduce_bytes),
          gradients, plan.timed[s] ? ns(p.optimizer_ns) : std::string("-"));
      out += describe_collectives(config, p, buckets);
      if (p.context.layers > 0) {
        const model::CpComm comm = t.cp_comm;
        out += fmt::format(
            "    context parallel ({} over {}): {} attention layers exchange {} a layer in F{}; "
            "adds F {}, B {}\n",
            model::to_string(comm), config.context_parallel_link, p.context.layers,
            format_memory(comm == model::CpComm::A2a ? p.context.qkv_bytes + p.context.output_bytes
                          : comm == model::CpComm::AllGather
                              ? p.context.kv_bytes * config.context_parallel
                              : p.context.kv_bytes * (config.context_parallel - 1)),
            comm == model::CpComm::P2p ? " (K and V blocks under the attention's ring steps)" : "",
            ns(double(detail::context_parallel_time(config, p.context, false))),
            ns(double(detail::context_parallel_time(config, p.context, true))));
      }
      out += describe_fsdp(config, std::size_t{s} * chunks + c, p);
      out += describe_expert_parallel(config, p, config.expert_traffic[std::size_t{s} * chunks + c],
                                      config.costs.at(StageId{s}, c).all_to_all);
    }
  }
  return out;
}

nlohmann::ordered_json explain_json(const Config& config) {
  if (!config.model) {
    throw ConfigError(config.file, "",
                      "explain shows what /model derives; this config has no /model");
  }
  using Json = nlohmann::ordered_json;
  const ModelPlan& plan = *config.model;
  const model::Transformer& m = plan.transformer;
  const model::Training& t = plan.training;
  Json out;
  out["model"] = {{"preset", plan.preset},
                  {"layers", m.layers},
                  {"hidden", m.hidden},
                  {"ffn_hidden", m.ffn_hidden},
                  {"heads", m.heads},
                  {"kv_heads", m.kv_heads},
                  {"head_dim", static_cast<std::uint64_t>(m.head_dim())},
                  {"attention", m.attention_kind()},
                  {"vocab", m.vocab},
                  {"sequence", m.sequence},
                  {"mlp", model::to_string(m.mlp)},
                  {"tied_embeddings", m.tied_embeddings},
                  {"hidden_dropout", m.hidden_dropout},
                  {"sliding_window", m.sliding_window},
                  {"window_pattern", m.window_pattern},
                  {"attention_sinks", m.attention_sinks},
                  {"layer_pattern", m.layer_pattern},
                  {"mtp_layers", m.mtp_layers},
                  {"mtp_pattern", m.mtp_pattern},
                  {"parameters", m.parameters()},
                  {"experts", m.experts},
                  {"top_k", m.top_k},
                  {"shared_experts", m.shared_experts}};
  out["training"] = {
      {"micro_batch_size", t.micro_batch_size},
      {"global_batch_size", t.global_batch_size},
      {"microbatches", config.pipeline.microbatches},
      {"precision", model::to_string(t.precision)},
      {"fp8_recipe",
       t.precision == model::Precision::Fp8 ? Json(model::to_string(t.fp8_recipe)) : Json(nullptr)},
      {"bf16_layers_at_start", t.bf16_layers_at_start},
      {"bf16_layers_at_end", t.bf16_layers_at_end},
      {"recompute", model::to_string(t.recompute)},
      {"sequence_parallel", t.sequence_parallel},
      {"distributed_optimizer", t.distributed_optimizer},
      {"flash_attention", t.flash_attention},
      {"recompute_mla_up_proj", t.recompute_mla_up_proj},
      {"cuda_graphs", t.cuda_graphs},
      {"grad_reduce_dtype", model::to_string(t.reduce_dtype())}};
  out["layout"] = {{"tensor_parallel", config.tensor_parallel},
                   {"pipeline", config.pipeline.stages},
                   {"data_parallel", config.data_parallel.degree},
                   {"expert_parallel", config.expert_parallel},
                   {"context_parallel", config.context_parallel},
                   {"cp_comm", model::to_string(t.cp_comm)},
                   {"fsdp", model::to_string(t.fsdp)},
                   {"fsdp_shard_size",
                    t.fsdp == model::Fsdp::None ? 0u : t.fsdp_shard(config.data_parallel.ranks())},
                   {"chunks", config.pipeline.chunks},
                   {"split", plan.split}};
  Json positions = Json::array();
  const std::uint32_t chunks = config.pipeline.chunks;
  const auto recompute = static_cast<std::size_t>(t.recompute);
  for (std::uint32_t s = 0; s < config.pipeline.stages; ++s) {
    for (std::uint32_t c = 0; c < chunks; ++c) {
      const model::PositionCosts& p = plan.positions[std::size_t{s} * chunks + c];
      const TimeNs a2a = config.costs.at(StageId{s}, c).all_to_all;
      const ExpertTraffic& traffic = config.expert_traffic[std::size_t{s} * chunks + c];
      const bool by_dispatcher = traffic.by_dispatcher;
      const parallel::MoeDispatchCost dispatch =
          by_dispatcher ? detail::moe_dispatch(config, p.moe_routing) : parallel::MoeDispatchCost{};
      Json operators = Json::array();
      for (const model::OperatorTime& op : p.operators) {
        Json row = {{"name", op.name},
                    {"forward_ns", op.seconds[model::kForward] * 1e9},
                    {"backward_ns", op.seconds[model::kBackward] * 1e9},
                    {"weight_ns", op.seconds[model::kWeight] * 1e9},
                    {"forward_flops", op.flops[model::kForward]}};
        if (op.gemm) row["gemm"] = gemm_json(op.plans);
        if (model::quantised(t.precision) && op.gemm) {
          row["forward_quantise_ns"] = op.quantise_seconds[model::kForward] * 1e9;
          row["backward_quantise_ns"] = op.quantise_seconds[model::kBackward] * 1e9;
          row["bf16"] = op.sixteen_bit;
        }
        operators.push_back(std::move(row));
      }
      // Durations of a stage whose GPU is unknown come from /costs, not the model: null.
      const auto timed = [&](double x) { return plan.timed[s] ? Json(x) : Json(nullptr); };
      positions.push_back(
          {{"stage", s},
           {"chunk", c},
           {"device_type", config.devices[s].type},
           {"layers",
            {{"first", p.layers.first},
             {"count", p.layers.count},
             {"embedding", p.layers.embedding},
             {"head", p.layers.head}}},
           {"forward_ns", timed(p.forward_ns)},
           {"backward_ns", timed(p.backward_ns)},
           {"weight_ns", timed(p.weight_ns)},
           {"recompute_ns", timed(p.recompute_ns)},
           {"host", plan.timed[s] ? host_json(p, config.costs.at(StageId{s}, c), recompute)
                                  : Json(nullptr)},
           {"operators", plan.timed[s] ? operators : Json::array()},
           {"activation", p.activation},
           {"kept_activation", p.kept_activation[recompute]},
           {"backward_frees", p.backward_frees},
           {"weight_bytes", p.weight_bytes},
           {"gradient_bytes", p.gradient_bytes},
           {"optimizer_bytes", p.optimizer_bytes},
           {"fp8_weight_bytes", p.fp8_weight_bytes},
           {"boundary_bytes", p.boundary_bytes},
           {"tp_allreduces", p.tp_allreduces},
           {"tp_allreduce_bytes", p.tp_allreduce_bytes},
           {"dp_gradient_bytes", p.dp_gradient_bytes},
           {"dp_buckets", gradient_buckets(config, s, c, p.dp_gradient_bytes)},
           {"dp_parameter_bytes", p.dp_parameter_bytes},
           {"optimizer_ns", timed(p.optimizer_ns)},
           {"a2a_per_pass", traffic.count},
           {"a2a_bytes", traffic.bytes},
           {"all_to_all_ns", a2a},
           {"moe_dispatch_ns", by_dispatcher ? dispatch.dispatch : 0},
           {"moe_combine_ns", by_dispatcher ? dispatch.combine : 0}});
      if (const std::size_t i = std::size_t{s} * chunks + c;
          i < config.fsdp.units.size() && config.fsdp.units[i] > 0) {
        positions.back()["fsdp"] = {{"units", config.fsdp.units[i]},
                                    {"parameter_bytes", p.fsdp_parameter_bytes},
                                    {"gradient_bytes", p.fsdp_gradient_bytes},
                                    {"buffer_bytes", p.fsdp_buffer_bytes},
                                    {"gather_ns", config.fsdp.gather[i]},
                                    {"reduce_scatter_ns", config.fsdp.reduce[i]},
                                    {"replica_all_reduce_ns", config.fsdp.replica_reduce[i]},
                                    {"per_microbatch", config.fsdp.reshard_after_forward}};
      }
      if (p.context.layers > 0) {
        positions.back()["context_parallel"] = {
            {"attention_layers", p.context.layers},
            {"kv_bytes", p.context.kv_bytes},
            {"qkv_bytes", p.context.qkv_bytes},
            {"output_bytes", p.context.output_bytes},
            {"forward_ns", detail::context_parallel_time(config, p.context, false)},
            {"backward_ns", detail::context_parallel_time(config, p.context, true)}};
      }
    }
  }
  out["positions"] = std::move(positions);
  return out;
}

}  // namespace perflow::study
