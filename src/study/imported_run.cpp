// What the importers share: the GPUs and world size they need from the user, and the config
// they write (docs/cli.md "perflow import").
#include "detail/imported_run.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/did_you_mean.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/option_error.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/layer_split.hpp"

namespace perflow::study::detail {
namespace {

using P = OptionError;

bool same_shape(const model::Transformer& a, const model::Transformer& b) {
  return a.layers == b.layers && a.hidden == b.hidden && a.ffn_hidden == b.ffn_hidden &&
         a.heads == b.heads && a.kv_heads == b.kv_heads && a.head_dim() == b.head_dim() &&
         a.mla == b.mla && a.vocab == b.vocab && a.mlp == b.mlp &&
         a.tied_embeddings == b.tied_embeddings && a.experts == b.experts && a.top_k == b.top_k &&
         a.expert_hidden() == b.expert_hidden() && a.shared_experts == b.shared_experts &&
         a.first_dense_layers == b.first_dense_layers && a.capacity_factor == b.capacity_factor &&
         a.expert_imbalance == b.expert_imbalance && a.expert_groups == b.expert_groups &&
         a.group_top_k == b.group_top_k && a.hidden_dropout == b.hidden_dropout &&
         a.sliding_window == b.sliding_window && a.window_pattern == b.window_pattern &&
         a.attention_sinks == b.attention_sinks && a.layer_pattern == b.layer_pattern &&
         a.mamba == b.mamba && a.mtp_layers == b.mtp_layers && a.mtp_pattern == b.mtp_pattern;
}

nlohmann::ordered_json write_model(const ImportedRun& run) {
  const model::Transformer& m = run.shape;
  // A preset with the same shape (the sequence may differ) is written by name: the config
  // reads as the examples do and `perflow explain` cites the preset's source.
  const model::ModelPreset* preset =
      run.preset.empty() ? nullptr : model::find_model_preset(run.preset);
  if (preset == nullptr) {
    for (const model::ModelPreset& p : model::model_presets()) {
      if (same_shape(p.model, m)) {
        preset = &p;
        break;
      }
    }
  }
  nlohmann::ordered_json out;
  if (preset != nullptr) {
    out["preset"] = std::string(preset->name);
    if (preset->model.sequence != m.sequence) out["sequence"] = m.sequence;
    return out;
  }
  out["layers"] = m.layers;
  out["hidden"] = m.hidden;
  out["ffn_hidden"] = m.ffn_hidden;
  out["heads"] = m.heads;
  if (m.kv_heads != m.heads) out["kv_heads"] = m.kv_heads;
  if (m.kv_channels != 0) out["head_dim"] = m.kv_channels;
  if (m.is_mla()) {
    out["attention"] = "mla";
    out["mla"] = {{"q_lora_rank", m.mla.q_lora_rank},
                  {"kv_lora_rank", m.mla.kv_lora_rank},
                  {"qk_nope_head_dim", m.mla.qk_nope_head_dim},
                  {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
                  {"v_head_dim", m.mla.v_head_dim}};
  }
  if (m.sliding_window > 0) {
    out["sliding_window"] = m.sliding_window;
    if (!m.window_pattern.empty()) out["window_pattern"] = m.window_pattern;
  }
  if (m.attention_sinks) out["attention_sinks"] = true;
  if (m.is_hybrid()) {
    out["layer_pattern"] = m.layer_pattern;
    if (m.has_mamba()) {
      for (const auto& [name, field] : model::kMambaFields) {
        out["mamba"][std::string(name)] = m.mamba.*field;
      }
    }
  }
  out["vocab"] = m.vocab;
  out["sequence"] = m.sequence;
  out["mlp"] = std::string(model::to_string(m.mlp));
  out["tied_embeddings"] = m.tied_embeddings;
  if (m.hidden_dropout != model::Transformer{}.hidden_dropout) {
    out["hidden_dropout"] = m.hidden_dropout;
  }
  if (m.mtp_layers > 0) out["mtp_layers"] = m.mtp_layers;
  if (!m.mtp_pattern.empty()) out["mtp_pattern"] = m.mtp_pattern;
  if (m.experts > 0) {
    out["experts"] = m.experts;
    out["top_k"] = m.top_k;
    if (m.expert_ffn_hidden != 0 && m.expert_ffn_hidden != m.ffn_hidden) {
      out["expert_ffn_hidden"] = m.expert_ffn_hidden;
    }
    if (m.shared_experts > 0) out["shared_experts"] = m.shared_experts;
    if (m.first_dense_layers > 0) out["first_dense_layers"] = m.first_dense_layers;
    if (m.capacity_factor > 0) out["capacity_factor"] = m.capacity_factor;
    if (m.expert_groups > 0) {
      out["expert_groups"] = m.expert_groups;
      out["group_top_k"] = m.group_top_k;
    }
  }
  return out;
}

}  // namespace

void require_gpus(const ImportOptions& options, std::optional<std::uint32_t> gpus_per_node,
                  std::optional<std::uint32_t> nodes, ImportedRun& run) {
  if (options.gpu.empty()) {
    std::vector<std::string> names;
    for (const model::DevicePreset& p : model::device_presets()) names.emplace_back(p.name);
    throw OptionError(
        "gpu", {P::text(fmt::format("which GPU runs the job is not in the {}: give ", run.tool)),
                P::field("gpu"), P::text(fmt::format(" (one of {})", fmt::join(names, ", ")))});
  }
  if (model::find_device_preset(options.gpu) == nullptr) {
    std::vector<std::string> names;
    for (const model::DevicePreset& p : model::device_presets()) names.emplace_back(p.name);
    throw OptionError("gpu", {P::field("gpu", "'" + options.gpu + "'"),
                              P::text(fmt::format(": not a GPU preset{} (presets: {})",
                                                  did_you_mean_suffix(options.gpu, names),
                                                  fmt::join(names, ", ")))});
  }
  const std::optional<std::uint32_t> per_node =
      options.gpus_per_node ? options.gpus_per_node : gpus_per_node;
  const std::optional<std::uint32_t> node_count = options.nodes ? options.nodes : nodes;
  if (per_node && *per_node == 0) {
    throw OptionError("gpus_per_node",
                      {P::field("gpus_per_node", "0"), P::text(": a node has at least one GPU")});
  }
  if (!node_count) {
    throw OptionError(
        "nodes",
        {P::text(fmt::format("how many GPUs run the job is not in the {}: give ", run.tool)),
         P::field("nodes"), P::text(" (and, unless 8, "), P::field("gpus_per_node"), P::text(")")});
  }
  if (*node_count == 0) {
    throw OptionError("nodes", {P::field("nodes", "0"), P::text(": a job has at least one node")});
  }
  run.gpus_per_node = per_node.value_or(8);
  run.nodes = *node_count;
}

std::vector<std::uint32_t> unless_even(std::vector<std::uint32_t> counts) {
  if (counts.size() <= 1) return {};
  const std::uint32_t layers = std::accumulate(counts.begin(), counts.end(), 0u);
  try {
    const std::vector<model::LayerRange> even =
        model::even_split(layers, static_cast<std::uint32_t>(counts.size()));
    const bool same =
        std::equal(counts.begin(), counts.end(), even.begin(),
                   [](std::uint32_t c, const model::LayerRange& r) { return c == r.count; });
    if (same) return {};
  } catch (const std::invalid_argument&) {
    // No even split of these: the counts stand.
  }
  return counts;
}

void derive_data_parallel(ImportedRun& run, std::string_view what) {
  const std::uint64_t world = std::uint64_t{run.nodes} * run.gpus_per_node;
  const std::uint64_t model =
      std::uint64_t{run.tensor_parallel} * run.pipeline_parallel * run.context_parallel;
  if (world % model != 0) {
    throw Error(
        fmt::format("{} nodes x {} GPUs = {} GPUs is not a multiple of tensor x pipeline x context "
                    "parallel = {} x {} x {} = {} ({})",
                    run.nodes, run.gpus_per_node, world, run.tensor_parallel, run.pipeline_parallel,
                    run.context_parallel, model, what));
  }
  run.data_parallel = static_cast<std::uint32_t>(world / model);
}

void check_global_batch(const ImportedRun& run, std::string_view what) {
  const std::uint64_t step = std::uint64_t{run.micro_batch} * run.data_parallel;
  if (run.global_batch % step != 0) {
    throw Error(fmt::format(
        "global batch {} is not a multiple of micro batch x data parallel = {} x {} = {}: "
        "microbatches per step would not be whole ({})",
        run.global_batch, run.micro_batch, run.data_parallel, step, what));
  }
}

nlohmann::ordered_json write_config(const ImportedRun& run, const std::string& gpu) {
  nlohmann::ordered_json config;
  config["description"] =
      fmt::format("{} on {} x {} {} (tp {} x {}pp {} x dp {})", run.tool, run.nodes,
                  run.gpus_per_node, gpu, run.tensor_parallel,
                  run.context_parallel > 1 ? fmt::format("cp {} x ", run.context_parallel) : "",
                  run.pipeline_parallel, run.data_parallel);
  config["model"] = write_model(run);

  nlohmann::ordered_json training;
  training["micro_batch_size"] = run.micro_batch;
  training["global_batch_size"] = run.global_batch;
  training["precision"] = run.precision;
  if (!run.fp8_recipe.empty()) training["fp8_recipe"] = run.fp8_recipe;
  if (run.bf16_layers_at_start > 0) training["bf16_layers_at_start"] = run.bf16_layers_at_start;
  if (run.bf16_layers_at_end > 0) training["bf16_layers_at_end"] = run.bf16_layers_at_end;
  training["recompute"] = run.recompute;
  if (run.sequence_parallel) training["sequence_parallel"] = true;
  if (run.distributed_optimizer) training["distributed_optimizer"] = true;
  if (!run.grad_reduce_dtype.empty()) training["grad_reduce_dtype"] = run.grad_reduce_dtype;
  if (!run.flash_attention) training["flash_attention"] = false;
  if (run.recompute_mla_up_proj) training["recompute_mla_up_proj"] = true;
  if (run.cuda_graphs) training["cuda_graphs"] = true;
  config["training"] = training;

  config["device"] = gpu;

  nlohmann::ordered_json pipeline;
  const std::string schedule = !run.schedule.empty() ? run.schedule
                               : run.chunks > 1      ? "interleaved-1f1b"
                                                     : "1f1b";
  pipeline["schedule"] = schedule;
  pipeline["stages"] = run.pipeline_parallel;
  if (run.chunks > 1) pipeline["chunks"] = run.chunks;
  if (run.microbatch_group_size) pipeline["microbatch_group_size"] = *run.microbatch_group_size;
  if (!run.layers.empty()) pipeline["layers"] = run.layers;
  config["pipeline"] = pipeline;

  nlohmann::ordered_json parallelism;
  parallelism["tensor_parallel"] = run.tensor_parallel;
  parallelism["data_parallel"] = run.data_parallel;
  if (run.context_parallel > 1) parallelism["context_parallel"] = run.context_parallel;
  if (run.context_parallel > 1 && !run.cp_comm.empty()) parallelism["cp_comm"] = run.cp_comm;
  if (run.expert_parallel > 1) parallelism["expert_parallel"] = run.expert_parallel;
  if (!run.fsdp.empty()) parallelism["fsdp"] = run.fsdp;
  if (run.fsdp == "hsdp") parallelism["fsdp_shard_size"] = run.fsdp_shard_size;
  if (!run.overlap_grad_reduce) parallelism["overlap_grad_reduce"] = false;
  if (run.grad_bucket_size) parallelism["grad_bucket_size"] = *run.grad_bucket_size;
  if (run.overlap_param_gather) parallelism["overlap_param_gather"] = true;
  if (!run.moe_dispatcher.empty()) parallelism["moe_dispatcher"] = run.moe_dispatcher;
  if (run.moe_a2a_overlap) parallelism["moe_a2a_overlap"] = true;
  config["parallelism"] = parallelism;

  // Both tools place the pipeline outermost (Megatron-LM's default order tp-cp-ep-dp-pp,
  // megatron/core/parallel_state.py; torchtitan's mesh pp, dp, cp, tp): consecutive stages
  // are tp x cp x dp GPUs apart, so a node holds gpus_per_node / that of them.
  const std::uint64_t stride =
      std::uint64_t{run.tensor_parallel} * run.context_parallel * run.data_parallel;
  nlohmann::ordered_json network;
  network["devices_per_node"] =
      static_cast<std::uint32_t>(std::max<std::uint64_t>(1, run.gpus_per_node / stride));
  if (run.gpus_per_node != 8) network["gpus_per_node"] = run.gpus_per_node;
  config["network"] = network;
  return config;
}

}  // namespace perflow::study::detail
