// `perflow devices` and `perflow models`: the presets a config can name, with their sources.
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/commands.hpp"
#include "perflow/core/units.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/transformer.hpp"

namespace perflow::cli::detail {
namespace {

void print_devices(bool json) {
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const model::DevicePreset& p : model::device_presets()) {
      const model::DeviceSpec& d = p.spec;
      nlohmann::ordered_json peaks;
      for (const model::Precision precision : model::kPrecisions) {
        peaks[std::string(model::to_string(precision))] = d.peak(precision);
      }
      list.push_back({{"name", p.name},
                      {"description", p.description},
                      {"peak_flops", peaks},
                      {"memory_bandwidth", d.memory_bandwidth},
                      {"memory_capacity", d.memory_capacity},
                      {"link_bandwidth", d.link_bandwidth},
                      {"network_bandwidth", d.network_bandwidth},
                      {"host_link_bandwidth", d.host_link_bandwidth},
                      {"sms", d.sms},
                      {"gpus_per_node", d.gpus_per_node},
                      {"nvlink_domain", d.nvlink_domain},
                      {"gemm_efficiency", d.efficiency.gemm_max},
                      {"source", p.source}});
    }
    fmt::print("{}\n", list.dump(1));
    return;
  }
  const auto peak = [](double flops) {
    return flops > 0 ? fmt::format("{:.1f}", flops / 1e12) : std::string("-");
  };
  fmt::print("{:<10}  {:>9}  {:>9}  {:>9}  {:>10}  {:>8}  {:>10}  {:>8}  {:>6}  {}\n", "name",
             "bf16 TF/s", "fp8 TF/s", "fp4 TF/s", "HBM", "memory", "scale-up", "network", "domain",
             "description");
  for (const model::DevicePreset& p : model::device_presets()) {
    const model::DeviceSpec& d = p.spec;
    fmt::print(
        "{:<10}  {:>9.1f}  {:>9}  {:>9}  {:>6.0f}GB/s  {:>8}  {:>6.0f}GB/s  {:>4.0f}GB/s  {:>6}  "
        "{}\n",
        p.name, d.peak_bf16 / 1e12, peak(d.peak_fp8), peak(d.peak_nvfp4), d.memory_bandwidth / 1e9,
        format_memory(d.memory_capacity), d.link_bandwidth / 1e9, d.network_bandwidth / 1e9,
        d.nvlink_domain, p.description);
  }
  fmt::print(
      "\nDense tensor-core peaks (fp4: NVFP4); bandwidths per direction; domain: the GPUs one "
      "NVLink (Infinity Fabric) domain joins. Sources and the MXFP8 peaks: perflow devices "
      "--format json.\n");
}

// A model's Mamba mixer as /model/mamba writes it; null without Mamba layers.
nlohmann::ordered_json mamba_json(const model::Transformer& m) {
  if (!m.has_mamba()) return nullptr;
  nlohmann::ordered_json out;
  for (const auto& [name, field] : model::kMambaFields) out[std::string(name)] = m.mamba.*field;
  return out;
}

void print_models(bool json) {
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const model::ModelPreset& p : model::model_presets()) {
      const model::Transformer& m = p.model;
      list.push_back(
          {{"name", p.name},
           {"description", p.description},
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
           {"experts", m.experts},
           {"top_k", m.top_k},
           {"expert_ffn_hidden", m.expert_hidden()},
           {"shared_experts", m.shared_experts},
           {"first_dense_layers", m.is_hybrid() ? m.first_dense_layers : m.layers - m.moe_layers()},
           {"expert_groups", m.expert_groups},
           {"group_top_k", m.group_top_k},
           {"sliding_window", m.sliding_window},
           {"window_pattern", m.window_pattern},
           {"attention_sinks", m.attention_sinks},
           {"layer_pattern", m.layer_pattern},
           {"mamba", mamba_json(m)},
           {"mtp_layers", m.mtp_layers},
           {"mtp_pattern", m.mtp_pattern},
           {"parameters", m.parameters()},
           {"active_parameters", m.active_parameters()},
           {"mtp_parameters", m.mtp_layers * m.mtp_module_parameters()},
           {"source", p.source}});
    }
    fmt::print("{}\n", list.dump(1));
    return;
  }
  fmt::print(
      "{:<15}  {:>10}  {:>7}  {:>6}  {:>6}  {:>9}  {:>6}  {:>9}  {:>8}  {:>7}  {:>6}  {:<6}  {}\n",
      "name", "parameters", "active", "layers", "hidden", "attention", "heads", "kv heads",
      "head dim", "vocab", "seq", "mlp", "description");
  for (const model::ModelPreset& p : model::model_presets()) {
    const model::Transformer& m = p.model;
    fmt::print(
        "{:<15}  {:>9.1f}B  {:>6.1f}B  {:>6}  {:>6}  {:>9}  {:>6}  {:>9}  {:>8}  {:>7}  "
        "{:>6}  {:<6}  {}\n",
        p.name, m.parameters() / 1e9, m.active_parameters() / 1e9, m.layers, m.hidden,
        m.attention_kind(), m.heads, m.kv_heads, static_cast<std::uint64_t>(m.head_dim()), m.vocab,
        m.sequence, model::to_string(m.mlp), p.description);
  }
  // The patterns do not fit a column: the models that have one, below the table.
  bool heading = false;
  for (const model::ModelPreset& p : model::model_presets()) {
    const model::Transformer& m = p.model;
    if (m.sliding_window == 0 && !m.is_hybrid()) continue;
    if (!heading) {
      fmt::print(
          "\nLayer patterns (M Mamba-2, * attention, - MLP, E MoE; W windowed, F full "
          "attention):\n");
      heading = true;
    }
    if (m.is_hybrid()) fmt::print("{:<15}  {}\n", p.name, m.layer_pattern);
    if (m.sliding_window > 0) {
      fmt::print("{:<15}  {}-token windows on {}{}\n", p.name, m.sliding_window,
                 m.window_pattern.empty() ? std::string("every layer")
                                          : fmt::format("\"{}\" layers", m.window_pattern),
                 m.attention_sinks ? ", attention sinks" : "");
    }
  }
  fmt::print("\nSources: perflow models --format json.\n");
}

void add_preset_command(CLI::App& app, const char* name, const char* help, void (*print)(bool)) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("--format", *format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([format, print] { print(*format == "json"); });
}

}  // namespace

void add_devices_command(CLI::App& app) {
  add_preset_command(app, "devices", "List the GPU presets a config can name (/device)",
                     &print_devices);
}

void add_models_command(CLI::App& app) {
  add_preset_command(app, "models", "List the model presets a config can name (/model/preset)",
                     &print_models);
}

}  // namespace perflow::cli::detail
