// /model, /training and device presets: a config that derives its costs, memory and traffic
// from the transformer's shape and the GPUs' specs (src/model), instead of typing them.
#include "detail/model_config.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "detail/config_fields.hpp"
#include "detail/cost_config.hpp"
#include "perflow/core/did_you_mean.hpp"
#include "perflow/core/units.hpp"
#include "perflow/parallel/nccl_collectives.hpp"
#include "perflow/parallel/pipeline_layout.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::study::detail {
namespace {

std::uint32_t read_model_integer(const JsonCursor& c, std::string_view name) {
  return static_cast<std::uint32_t>(read_integer(c, kModelSection.field(name)));
}

// /model's integer `name` into `out`, when given.
void read_model_integer_into(const JsonCursor& c, std::string_view name, std::uint32_t& out) {
  if (auto x = c.find(name)) out = read_model_integer(*x, name);
}

double read_model_number(const JsonCursor& c, std::string_view name) {
  const Field& field = kModelSection.field(name);
  const double x = c.as_number();
  if (!(x >= field.min && x <= field.max)) {
    c.fail_expected(fmt::format("a number in [{}, {}]", field.min, field.max));
  }
  return x;
}

// /model/mla over the preset's (field by field; without an MLA preset every field but
// q_lora_rank is needed), and /model/attention, which "mha" or "gqa" turns MLA off with.
// kv_heads is settled after (attention_heads). Returns the attention asked for ("" if none).
std::string read_attention(const JsonCursor& c, model::Transformer& m) {
  const std::optional<JsonCursor> attention = c.find("attention");
  const std::string kind = attention ? attention->as_string() : "";
  if (attention && kind != "mha" && kind != "gqa" && kind != "mla") {
    attention->fail_expected("\"mha\", \"gqa\" or \"mla\"");
  }
  if ((kind == "mha" || kind == "gqa") && c.has("mla")) {
    c.at("mla").fail(fmt::format("given with attention \"{}\"; drop one", kind));
  }
  if (auto x = c.find("mla")) {
    x->expect_object(kMlaSection.keys());
    const bool preset_mla = m.is_mla();
    const std::pair<std::string_view, std::uint32_t*> fields[] = {
        {"q_lora_rank", &m.mla.q_lora_rank},
        {"kv_lora_rank", &m.mla.kv_lora_rank},
        {"qk_nope_head_dim", &m.mla.qk_nope_head_dim},
        {"qk_rope_head_dim", &m.mla.qk_rope_head_dim},
        {"v_head_dim", &m.mla.v_head_dim}};
    // The values given first (a bad one is named before a missing one), then what is missing.
    for (const auto& [name, out] : fields) {
      if (auto v = x->find(name)) {
        *out = static_cast<std::uint32_t>(read_integer(*v, kMlaSection.field(name)));
      }
    }
    for (const auto& [name, out] : fields) {
      if (name != "q_lora_rank" && !preset_mla && !x->has(name)) {
        x->fail(fmt::format("missing required key '{}' (or give an MLA preset)", name));
      }
    }
  }
  if (kind == "mla" && !m.is_mla()) {
    attention->fail("\"mla\" needs /model/mla (its ranks and head widths)");
  }
  if (kind == "mha" || kind == "gqa") m.mla = {};
  return kind;
}

// After kv_heads is read: "mha" has as many key/value heads as heads, "gqa" fewer; MLA's
// heads are its own (kv_heads and head_dim say nothing).
void attention_heads(const JsonCursor& c, std::string_view kind, model::Transformer& m) {
  if (m.is_mla()) {
    if (auto x = c.find("head_dim")) {
      x->fail("with multi-head latent attention a head's widths are /model/mla's");
    }
    m.kv_heads = m.heads;
    m.kv_channels = 0;
    return;
  }
  if (kind == "mha") {
    if (c.has("kv_heads") && m.kv_heads != m.heads) {
      c.at("attention")
          .fail(fmt::format("\"mha\" has as many key/value heads as heads ({}), but kv_heads is {}",
                            m.heads, m.kv_heads));
    }
    m.kv_heads = m.heads;
  } else if (kind == "gqa" && m.kv_heads >= m.heads) {
    c.at("attention")
        .fail(fmt::format("\"gqa\" needs kv_heads below heads ({}); kv_heads is {}", m.heads,
                          m.kv_heads));
  }
}

// The mixture-of-experts fields of /model (over the preset's), checked against each other.
void read_experts(const JsonCursor& c, model::Transformer& m) {
  read_model_integer_into(c, "experts", m.experts);
  read_model_integer_into(c, "top_k", m.top_k);
  read_model_integer_into(c, "expert_ffn_hidden", m.expert_ffn_hidden);
  read_model_integer_into(c, "shared_experts", m.shared_experts);
  read_model_integer_into(c, "first_dense_layers", m.first_dense_layers);
  read_model_integer_into(c, "expert_groups", m.expert_groups);
  read_model_integer_into(c, "group_top_k", m.group_top_k);
  if (auto x = c.find("capacity_factor")) {
    m.capacity_factor = read_model_number(*x, "capacity_factor");
  }
  if (auto x = c.find("expert_imbalance")) {
    m.expert_imbalance = read_model_number(*x, "expert_imbalance");
  }
  // Where a failure about these keys points: the first of them given, else /model.
  const auto at = [&c](std::initializer_list<std::string_view> keys) {
    for (std::string_view key : keys) {
      if (auto x = c.find(key)) return *x;
    }
    return c;
  };
  if (m.is_hybrid()) {
    // The pattern says which layers are MoE ones.
    const bool moe_layers = m.layer_pattern.find('E') != std::string::npos ||
                            m.mtp_pattern.find('E') != std::string::npos;
    for (std::string_view key : {"first_dense_layers", "moe_layers"}) {
      if (auto x = c.find(key)) {
        x->fail("the layer_pattern says which layers are MoE (E): drop " + std::string(key));
      }
    }
    if (moe_layers && m.experts == 0) {
      at({"experts", "layer_pattern"})
          .fail("the layer_pattern has MoE layers (E), but no /model/experts above 0");
    }
    if (!moe_layers && m.experts > 0) {
      at({"experts", "layer_pattern"})
          .fail(fmt::format("{} experts, but the layer_pattern has no MoE layer (E)", m.experts));
    }
    m.first_dense_layers = 0;
  }
  if (m.experts == 0) {
    for (std::string_view key :
         {"top_k", "expert_ffn_hidden", "shared_experts", "first_dense_layers", "moe_layers",
          "capacity_factor", "expert_imbalance", "expert_groups", "group_top_k"}) {
      if (auto x = c.find(key)) {
        x->fail(fmt::format(
            "{} describes MoE layers, but {}: give /model/experts (routed experts per MoE layer) "
            "above 0",
            key, c.has("experts") ? "experts is 0" : "there is no /model/experts"));
      }
    }
    // A dense model (or a MoE preset made dense with experts 0): no expert fields left over.
    const model::Transformer dense;
    m.top_k = dense.top_k;
    m.expert_ffn_hidden = dense.expert_ffn_hidden;
    m.shared_experts = dense.shared_experts;
    m.first_dense_layers = dense.first_dense_layers;
    m.capacity_factor = dense.capacity_factor;
    m.expert_imbalance = dense.expert_imbalance;
    m.expert_groups = dense.expert_groups;
    m.group_top_k = dense.group_top_k;
    return;
  }
  if (m.top_k == 0) {
    c.fail("missing required key 'top_k' (routed experts per token) with experts");
  }
  if (m.top_k > m.experts) {
    at({"top_k", "experts"})
        .fail(fmt::format("top_k {} is more than the {} experts", m.top_k, m.experts));
  }
  if (auto x = c.find("moe_layers")) {
    const std::uint32_t moe = read_model_integer(*x, "moe_layers");
    if (moe > m.layers) {
      x->fail(fmt::format("moe_layers {} is more than layers {}", moe, m.layers));
    }
    if (c.has("first_dense_layers") && m.first_dense_layers + moe != m.layers) {
      x->fail(
          fmt::format("first_dense_layers {} + moe_layers {} is not layers {}: give one of them",
                      m.first_dense_layers, moe, m.layers));
    }
    m.first_dense_layers = m.layers - moe;
  }
  if (m.first_dense_layers > m.layers) {
    at({"first_dense_layers", "layers"})
        .fail(fmt::format("first_dense_layers {} is more than layers {}", m.first_dense_layers,
                          m.layers));
  }
  if (m.expert_groups == 0 && c.has("group_top_k")) {
    c.at("group_top_k").fail("group_top_k picks among expert groups: give /model/expert_groups");
  }
  if (m.expert_groups > 0) {
    if (m.experts % m.expert_groups != 0) {
      at({"expert_groups", "experts"})
          .fail(fmt::format("{} expert groups do not split the {} experts", m.expert_groups,
                            m.experts));
    }
    if (m.group_top_k == 0 || m.group_top_k > m.expert_groups) {
      at({"group_top_k", "expert_groups"})
          .fail(fmt::format("group_top_k must pick 1 to {} of the expert groups, got {}",
                            m.expert_groups, m.group_top_k));
    }
    if (std::uint64_t{m.group_top_k} * (m.experts / m.expert_groups) < m.top_k) {
      at({"group_top_k", "top_k"})
          .fail(fmt::format("{} groups of {} experts hold fewer than top_k {} experts",
                            m.group_top_k, m.experts / m.expert_groups, m.top_k));
    }
  }
  if (c.has("capacity_factor") && c.has("expert_imbalance")) {
    c.at("expert_imbalance")
        .fail(
            "capacity_factor pads every expert to its capacity, which sets the slowest "
            "expert's load; expert_imbalance does not apply: give one of them");
  }
}

// /model's sliding window, its pattern and the attention sinks, over the preset's.
void read_windows(const JsonCursor& c, model::Transformer& m) {
  read_model_integer_into(c, "sliding_window", m.sliding_window);
  if (auto x = c.find("window_pattern")) {
    m.window_pattern = x->as_string();
    const std::size_t bad = m.window_pattern.find_first_not_of("WF");
    if (m.window_pattern.empty() || bad != std::string::npos) {
      x->fail(fmt::format(
          "expected W (windowed) or F (full attention) per layer, got \"{}\"{}", m.window_pattern,
          m.window_pattern.empty()
              ? ""
              : fmt::format(" (character {} is '{}')", bad, m.window_pattern[bad])));
    }
    if (m.sliding_window == 0) {
      x->fail("says which layers are windowed, but there is no /model/sliding_window");
    }
  }
  if (m.sliding_window == 0) m.window_pattern.clear();
  if (auto x = c.find("attention_sinks")) m.attention_sinks = x->as_bool();
}

// /model/layer_pattern and /model/mamba over the preset's: the pattern's characters, its
// length as the layers, Mamba's shape where it has M layers (Megatron-Core's defaults for
// what is not given).
void read_hybrid(const JsonCursor& c, model::Transformer& m) {
  // Where `text` has a character other than a layer's, its message.
  const auto bad_layer = [](std::string_view text) -> std::optional<std::string> {
    const std::size_t bad = text.find_first_not_of("M*-E");
    if (!text.empty() && bad == std::string_view::npos) return std::nullopt;
    return fmt::format(
        "expected M (Mamba-2), * (attention), - (MLP) or E (MoE) per layer, got \"{}\"{}", text,
        text.empty() ? ""
        : text[bad] == '|'
            ? fmt::format(" (character {} is Megatron-LM's stage boundary: set /pipeline/layers)",
                          bad)
            : fmt::format(" (character {} is '{}')", bad, text[bad]));
  };
  const std::optional<JsonCursor> pattern = c.find("layer_pattern");
  if (pattern) {
    // Megatron-Core's unified pattern: the decoder's layers, then one MTP module's after
    // each '/' (hybrid_layer_allocation.py's parse_hybrid_pattern).
    const std::string text = pattern->as_string();
    const std::size_t slash = text.find('/');
    m.layer_pattern = text.substr(0, slash);
    if (const auto message = bad_layer(m.layer_pattern)) {
      pattern->fail(slash == std::string::npos
                        ? *message
                        : fmt::format("the layers before the first '/': {}", *message));
    }
    if (slash != std::string::npos) {
      std::vector<std::string> modules;
      for (std::size_t from = slash + 1;;) {
        const std::size_t next = text.find('/', from);
        modules.push_back(text.substr(from, next == std::string::npos ? next : next - from));
        if (next == std::string::npos) break;
        from = next + 1;
      }
      for (std::size_t i = 0; i < modules.size(); ++i) {
        if (const auto message = bad_layer(modules[i])) {
          pattern->fail(fmt::format("multi-token prediction module {} (after '/' {}): {}", i + 1,
                                    i + 1, *message));
        }
        if (modules[i] != modules.front()) {
          pattern->fail(fmt::format(
              "every multi-token prediction module has the same layers, got \"{}\" after '/' 1 "
              "and \"{}\" after '/' {}",
              modules.front(), modules[i], i + 1));
        }
      }
      if (auto x = c.find("mtp_pattern")) {
        x->fail(
            "the layer_pattern gives the multi-token prediction module after '/': drop "
            "mtp_pattern");
      }
      m.mtp_pattern = modules.front();
      m.mtp_layers = static_cast<std::uint32_t>(modules.size());
    }
  }
  if (auto x = c.find("mtp_pattern")) {
    m.mtp_pattern = x->as_string();
    if (const auto message = bad_layer(m.mtp_pattern)) x->fail(*message);
  }
  // Over the preset's, field by field.
  if (auto x = c.find("mamba")) {
    x->expect_object(kMambaSection.keys());
    for (const auto& [name, field] : model::kMambaFields) {
      if (auto v = x->find(name)) {
        m.mamba.*field = static_cast<std::uint32_t>(read_integer(*v, kMambaSection.field(name)));
      }
    }
  }
  if (!m.is_hybrid()) {
    if (auto x = c.find("mamba"))
      x->fail("the Mamba mixer of M layers, but there is no /model/layer_pattern");
    return;
  }
  const std::uint32_t length = static_cast<std::uint32_t>(m.layer_pattern.size());
  if (c.has("layers") && m.layers != length) {
    c.at("layers").fail(fmt::format("layers {} but the layer_pattern{} has {}: give one of them",
                                    m.layers, pattern ? "" : " (the preset's)", length));
  }
  m.layers = length;
  if (!m.has_mamba()) {
    if (auto x = c.find("mamba")) x->fail("the layer_pattern has no M (Mamba) layer");
    m.mamba = {};
    return;
  }
  const model::Mamba mamba = m.mamba.with_defaults(m.hidden);
  const JsonCursor at = c.has("mamba") ? c.at("mamba") : c;
  if (m.mamba.heads == 0 && 2ULL * m.hidden % mamba.head_dim != 0) {
    at.fail(fmt::format(
        "2 x hidden {} is not a multiple of the Mamba head_dim {}: give /model/mamba/heads",
        m.hidden, mamba.head_dim));
  }
  if (mamba.heads % mamba.groups != 0) {
    at.fail(
        fmt::format("the Mamba groups ({}) do not split its {} heads", mamba.groups, mamba.heads));
  }
  m.mamba = mamba;
}

// /model/mtp_layers against the modules the layer_pattern gives after '/', and whether the
// modules' layers can be said: a hybrid model's are mtp_pattern's, a transformer's one of
// its last layer's kind.
void read_mtp(const JsonCursor& c, model::Transformer& m) {
  if (auto x = c.find("mtp_layers")) {
    const std::uint32_t given = read_model_integer(*x, "mtp_layers");
    const bool in_pattern =
        c.has("layer_pattern") && c.at("layer_pattern").as_string().find('/') != std::string::npos;
    if (in_pattern && given != m.mtp_layers) {
      x->fail(
          fmt::format("mtp_layers {} but the layer_pattern has {} module(s) after '/': give "
                      "one of them",
                      given, m.mtp_layers));
    }
    m.mtp_layers = given;
  }
  if (m.mtp_pattern.empty()) {
    if (m.mtp_layers > 0 && m.is_hybrid()) {
      (c.has("mtp_layers") ? c.at("mtp_layers") : c.at("layer_pattern"))
          .fail(
              "a hybrid model's multi-token prediction module needs its layers: give "
              "/model/mtp_pattern, or write them after '/' in the layer_pattern "
              "(\"M-M*-/*-\")");
    }
    return;
  }
  const JsonCursor at = c.has("mtp_pattern") ? c.at("mtp_pattern") : c.at("layer_pattern");
  if (!m.is_hybrid()) {
    at.fail(
        "mtp_pattern is a hybrid model's (with /model/layer_pattern); a transformer's "
        "multi-token prediction module is one layer of its last layer's kind");
  }
  if (m.mtp_layers == 0) at.fail("an mtp_pattern but mtp_layers is 0: give /model/mtp_layers");
}

// A preset's name, or a failure listing the valid ones with the closest.
template <class Preset>
const Preset& read_preset(const JsonCursor& cursor, std::span<const Preset> presets,
                          const Preset* (*find)(std::string_view), std::string_view what) {
  const std::string name = cursor.as_string();
  if (const Preset* preset = find(name)) return *preset;
  std::vector<std::string> names;
  for (const Preset& p : presets) names.emplace_back(p.name);
  cursor.fail(fmt::format("unknown {} '{}'{} (valid: {})", what, name,
                          did_you_mean_suffix(name, names), fmt::join(names, ", ")));
}

model::Transformer read_transformer(const JsonCursor& c, std::string& preset_name) {
  c.expect_object(kModelSection.keys());
  model::Transformer m;
  bool kv_given = false;
  if (auto preset = c.find("preset")) {
    const model::ModelPreset& p =
        read_preset(*preset, model::model_presets(), &model::find_model_preset, "model");
    m = p.model;
    preset_name = std::string(p.name);
    // A grouped-query preset keeps its key/value heads; a multi-head one follows `heads`.
    kv_given = p.model.kv_heads != p.model.heads;
  }
  read_model_integer_into(c, "layers", m.layers);
  read_model_integer_into(c, "hidden", m.hidden);
  read_model_integer_into(c, "ffn_hidden", m.ffn_hidden);
  read_model_integer_into(c, "heads", m.heads);
  if (auto x = c.find("kv_heads")) {
    m.kv_heads = read_model_integer(*x, "kv_heads");
    kv_given = true;
  }
  read_model_integer_into(c, "head_dim", m.kv_channels);
  const std::string attention = read_attention(c, m);
  read_windows(c, m);
  read_hybrid(c, m);
  read_model_integer_into(c, "vocab", m.vocab);
  read_model_integer_into(c, "sequence", m.sequence);
  if (auto x = c.find("mlp")) {
    const auto mlp = model::parse_mlp(x->as_string());
    if (!mlp) x->fail_expected("\"gelu\" or \"swiglu\"");
    m.mlp = *mlp;
  }
  if (auto x = c.find("tied_embeddings")) m.tied_embeddings = x->as_bool();
  if (auto x = c.find("hidden_dropout")) {
    m.hidden_dropout = read_model_number(*x, "hidden_dropout");
  }
  if (!kv_given) m.kv_heads = m.heads;
  attention_heads(c, attention, m);
  // Every shape field is needed, from the preset or given.
  for (const auto& [name, value] : {std::pair<std::string_view, std::uint32_t>{"layers", m.layers},
                                    {"hidden", m.hidden},
                                    {"ffn_hidden", m.ffn_hidden},
                                    {"heads", m.heads},
                                    {"vocab", m.vocab},
                                    {"sequence", m.sequence}}) {
    if (value == 0) c.fail(fmt::format("missing required key '{}' (or give a preset)", name));
  }
  // Without a head width of its own a head is h / a wide, which must be whole.
  if (m.kv_channels == 0 && !m.is_mla() && m.hidden % m.heads != 0) {
    const std::optional<JsonCursor> key = c.has("hidden") ? c.find("hidden") : c.find("heads");
    (key ? *key : c)
        .fail(fmt::format(
            "hidden {} is not a multiple of heads {} (give head_dim where a head's width is not "
            "hidden / heads)",
            m.hidden, m.heads));
  }
  if (m.heads % m.kv_heads != 0) {
    c.fail(fmt::format("heads {} are not a multiple of kv_heads {}", m.heads, m.kv_heads));
  }
  read_experts(c, m);
  read_mtp(c, m);
  return m;
}

model::Training read_training(const JsonCursor& c) {
  c.expect_object(kTrainingSection.keys());
  model::Training t;
  const auto integer = [&](std::string_view name) {
    return static_cast<std::uint32_t>(read_integer(c.at(name), kTrainingSection.field(name)));
  };
  if (c.has("micro_batch_size")) t.micro_batch_size = integer("micro_batch_size");
  if (c.has("global_batch_size")) t.global_batch_size = integer("global_batch_size");
  const auto choice = [&](std::string_view name, auto parse, auto& out) {
    if (auto x = c.find(name)) {
      const auto parsed = parse(x->as_string());
      if (!parsed) {
        x->fail_expected(
            fmt::format("one of {}", fmt::join(kTrainingSection.field(name).choices, ", ")));
      }
      out = *parsed;
    }
  };
  choice("precision", &model::parse_precision, t.precision);
  choice("fp8_recipe", &model::parse_fp8_recipe, t.fp8_recipe);
  if (auto x = c.find("fp8_recipe"); x && t.precision != model::Precision::Fp8) {
    x->fail(fmt::format(
        "fp8_recipe scales fp8 tensors, but /training/precision is {}{}", to_string(t.precision),
        model::quantised(t.precision) ? " (its blocks carry their own scales)" : ""));
  }
  // Layers kept in bf16 (Megatron-LM's --first-last-layers-bf16): only in a quantised run,
  // and not with delayed scaling (transformer_config.py refuses it).
  for (const auto& [name, out] : {std::pair{"bf16_layers_at_start", &t.bf16_layers_at_start},
                                  std::pair{"bf16_layers_at_end", &t.bf16_layers_at_end}}) {
    const std::optional<JsonCursor> x = c.find(name);
    if (!x) continue;
    *out = integer(name);
    if (*out == 0) continue;
    if (!model::quantised(t.precision)) {
      x->fail(
          fmt::format("{} keeps layers in bf16 in a quantised run, but /training/precision "
                      "is {}",
                      name, to_string(t.precision)));
    }
    if (t.precision == model::Precision::Fp8 && t.fp8_recipe == model::Fp8Recipe::Delayed) {
      x->fail(
          fmt::format("{}: Megatron-LM keeps no layer in bf16 with delayed scaling; set "
                      "/training/fp8_recipe to \"current\" or \"blockwise\"",
                      name));
    }
  }
  choice("recompute", &model::parse_recompute, t.recompute);
  if (c.has("grad_reduce_dtype")) {
    model::ReduceDtype dtype{};
    choice("grad_reduce_dtype", &model::parse_reduce_dtype, dtype);
    t.grad_reduce_dtype = dtype;
  }
  if (auto x = c.find("distributed_optimizer")) t.distributed_optimizer = x->as_bool();
  if (auto x = c.find("sequence_parallel")) t.sequence_parallel = x->as_bool();
  if (auto x = c.find("flash_attention")) t.flash_attention = x->as_bool();
  if (auto x = c.find("cuda_graphs")) t.cuda_graphs = x->as_bool();
  if (auto x = c.find("recompute_mla_up_proj")) t.recompute_mla_up_proj = x->as_bool();
  return t;
}

double read_fraction(const JsonCursor& c, const Field& field) {
  const double x = c.as_number();
  if (!(x > field.min && x <= field.max)) c.fail_expected("a fraction in (0, 1]");
  return x;
}

}  // namespace

const model::DevicePreset& read_device_preset(const JsonCursor& cursor) {
  return read_preset(cursor, model::device_presets(), &model::find_device_preset, "device");
}

std::optional<model::DeviceSpec> read_device_type_spec(const JsonCursor& type) {
  std::optional<model::DeviceSpec> spec;
  if (auto preset = type.find("preset")) spec = read_device_preset(*preset).spec;
  if (auto peak = type.find("peak_flops")) {
    if (!spec) spec = model::DeviceSpec{};
    const double x = peak->as_number();
    const Field& field = kDeviceTypeSection.field("peak_flops");
    if (!(x > field.min && x <= field.max)) peak->fail_expected("FLOP/s > 0");
    // The one precision the run uses is the one that matters; set them all.
    spec->peak_bf16 = spec->peak_fp16 = spec->peak_fp8 = spec->peak_mxfp8 = spec->peak_nvfp4 = x;
  }
  if (!spec) {
    for (std::string_view key :
         {"memory_bandwidth", "link_bandwidth", "network_bandwidth", "sms", "gemm_efficiency",
          "attention_efficiency", "memory_efficiency", "kernel_launch"}) {
      if (auto x = type.find(key)) {
        x->fail(fmt::format("{} describes a GPU for /model: give a preset or peak_flops too", key));
      }
    }
    return spec;
  }
  if (auto x = type.find("memory_bandwidth")) spec->memory_bandwidth = read_bandwidth(*x);
  if (auto x = type.find("link_bandwidth")) spec->link_bandwidth = read_bandwidth(*x);
  if (auto x = type.find("network_bandwidth")) spec->network_bandwidth = read_bandwidth(*x);
  if (auto x = type.find("sms")) {
    spec->sms = static_cast<std::uint32_t>(read_integer(*x, kDeviceTypeSection.field("sms")));
  }
  if (auto x = type.find("gemm_efficiency")) {
    spec->efficiency.gemm_max = read_fraction(*x, kDeviceTypeSection.field("gemm_efficiency"));
  }
  if (auto x = type.find("attention_efficiency")) {
    const double forward = read_fraction(*x, kDeviceTypeSection.field("attention_efficiency"));
    // The backward keeps its ratio to the forward.
    spec->efficiency.attention_backward *= forward / spec->efficiency.attention_forward;
    spec->efficiency.attention_forward = forward;
  }
  if (auto x = type.find("memory_efficiency")) {
    spec->efficiency.memory = read_fraction(*x, kDeviceTypeSection.field("memory_efficiency"));
  }
  if (auto x = type.find("kernel_launch")) {
    spec->kernel_launch = static_cast<double>(x->as_duration()) / 1e9;
  }
  if (spec->memory_bandwidth <= 0) {
    type.fail("a GPU for /model needs memory_bandwidth (or a preset that has it)");
  }
  return spec;
}

// /parallelism/context_parallel and cp_comm: into the training, with what Megatron-Core and
// Transformer Engine refuse (or PerFlow does not model) refused at the degree.
void read_context_parallelism(const JsonCursor& root, const Config& config, ModelPlan& plan) {
  const std::optional<JsonCursor> parallelism = root.find("parallelism");
  if (auto comm = parallelism ? parallelism->find("cp_comm") : std::nullopt) {
    const auto parsed = model::parse_cp_comm(comm->as_string());
    if (!parsed) comm->fail_expected("\"p2p\", \"all_gather\" or \"a2a\"");
    plan.training.cp_comm = *parsed;
  }
  const std::uint32_t cp = config.context_parallel;
  plan.training.context_parallel = cp;
  if (cp <= 1) return;
  const JsonCursor at = parallelism->at("context_parallel");
  const model::Transformer& m = plan.transformer;
  // Each rank holds two of 2 cp sequence chunks, one from each end, so that causal attention
  // loads the ranks alike (Megatron-Core's get_batch_on_this_cp_rank).
  if (m.sequence % (2 * cp) != 0) {
    at.fail(
        fmt::format("the sequence of {} tokens does not split into 2 x {} chunks (each "
                    "context-parallel rank takes two)",
                    m.sequence, cp));
  }
  if (m.has_mamba()) {
    at.fail(
        "context parallelism over Mamba layers is not modelled (their scan runs along the "
        "whole sequence)");
  }
  if (m.sliding_window > 0) {
    at.fail("context parallelism with sliding-window attention is not modelled");
  }
  if (!plan.training.flash_attention) {
    at.fail(
        "context parallelism runs Transformer Engine's fused attention: "
        "/training/flash_attention must be true");
  }
  if (plan.training.cp_comm == model::CpComm::A2a) {
    const std::uint32_t tp = config.tensor_parallel;
    const std::uint32_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
    if (m.heads % (std::uint64_t{tp} * cp) != 0 || kv % (std::uint64_t{tp} * cp) != 0) {
      at.fail(
          fmt::format("a2a splits the attention heads over tensor x context parallelism "
                      "({} x {}), which do not divide {} query and {} key/value heads",
                      tp, cp, m.heads, kv));
    }
  }
}

void parse_model_sections(const JsonCursor& root, Config& config) {
  const std::optional<JsonCursor> model_section = root.find("model");
  const std::optional<JsonCursor> training_section = root.find("training");
  if (!model_section) {
    if (training_section) {
      training_section->fail("the training setup derives costs from a model: add /model");
    }
    if (auto layers = root.at("pipeline").find("layers")) {
      layers->fail("the layers of each position come from a model: add /model");
    }
    if (config.context_parallel > 1) {
      root.at("parallelism")
          .at("context_parallel")
          .fail("context parallelism splits /model's sequence over ranks: add /model");
    }
    if (config.fsdp_mode != model::Fsdp::None) {
      root.at("parallelism")
          .at("fsdp")
          .fail("FSDP gathers /model's layers and shards its parameters: add /model");
    }
    if (auto comm = root.find("parallelism").value_or(root).find("cp_comm")) {
      comm->fail("cp_comm is how /model's attention runs with context parallelism: add /model");
    }
    if (auto dispatcher = root.find("parallelism").value_or(root).find("moe_dispatcher")) {
      dispatcher->fail(
          "the dispatcher moves the tokens of /model's MoE layers: add /model with experts "
          "(costs given by hand give their all-to-alls as a2a_bytes and a2a_per_pass)");
    }
    return;
  }
  ModelPlan plan;
  plan.transformer = read_transformer(*model_section, plan.preset);
  if (training_section) plan.training = read_training(*training_section);
  // Expert parallelism splits a MoE layer's experts over ranks taken from the data-parallel
  // replicas (Megatron-LM, DeepSeek-V3; parse_parallelism checks that they divide them).
  // Without experts it only matters to all-to-all costs given by hand.
  if (const model::Transformer& m = plan.transformer; m.experts > 0 && config.expert_parallel > 1) {
    const JsonCursor ep = root.at("parallelism").at("expert_parallel");
    if (m.experts % config.expert_parallel != 0) {
      ep.fail(fmt::format("{} expert-parallel ranks do not split the {} experts of /model",
                          config.expert_parallel, m.experts));
    }
  }
  plan.training.moe_dispatcher = config.moe_dispatcher;
  plan.training.fsdp = config.fsdp_mode;
  plan.training.fsdp_shard_size = config.fsdp_shard_size;
  read_context_parallelism(root, config, plan);
  if (config.moe_dispatcher == MoeDispatcher::DeepEp) {
    const JsonCursor where = root.at("parallelism").at("moe_dispatcher");
    if (plan.transformer.experts == 0) {
      where.fail("deepep dispatches the tokens of MoE layers, but /model has no experts");
    }
    // DeepEP needs peers to send to (Megatron-Core's flex dispatcher asserts TP x EP > 1);
    // PerFlow prices it over expert-parallel ranks.
    if (config.expert_parallel <= 1) {
      where.fail(
          "deepep sends tokens among the expert-parallel ranks, but expert_parallel is 1: set "
          "/parallelism/expert_parallel (or use \"alltoall\")");
    }
  }
  // Megatron-LM reads --recompute-modules (mla_up_proj among them) only with selective
  // granularity; full recomputation reruns the up projections in its R task already.
  if (plan.training.recompute_mla_up_proj) {
    const JsonCursor at = training_section->at("recompute_mla_up_proj");
    if (!plan.transformer.is_mla()) {
      at.fail("the model has no multi-head latent attention (/model/mla) to recompute");
    }
    if (plan.training.recompute == model::Recompute::Full) {
      at.fail("full recomputation reruns the up projections already: drop one");
    }
  }
  // Megatron-Core's MoELayer raises during training when tensor parallelism runs MoE layers
  // without sequence parallelism (moe_layer.py): each TP rank would route every token.
  if (plan.transformer.moe_layers() > 0 && config.tensor_parallel > 1 &&
      !plan.training.sequence_parallel) {
    (training_section && training_section->has("sequence_parallel")
         ? training_section->at("sequence_parallel")
         : root.at("parallelism").at("tensor_parallel"))
        .fail(
            "MoE layers with tensor parallelism need sequence parallelism (Megatron-Core's "
            "MoELayer refuses to train without it): set /training/sequence_parallel to true");
  }
  if (plan.training.sequence_parallel && config.tensor_parallel == 1) {
    training_section->at("sequence_parallel")
        .fail(
            "sequence parallelism splits over tensor-parallel ranks: set "
            "/parallelism/tensor_parallel > 1");
  }
  const std::uint64_t per_microbatch =
      std::uint64_t{plan.training.micro_batch_size} * config.data_parallel.degree;
  if (plan.training.global_batch_size > 0) {
    const JsonCursor global = training_section->at("global_batch_size");
    if (plan.training.global_batch_size % per_microbatch != 0) {
      global.fail(fmt::format(
          "global_batch_size {} is not a multiple of micro_batch_size x data_parallel = {}",
          plan.training.global_batch_size, per_microbatch));
    }
    const std::uint64_t microbatches = plan.training.global_batch_size / per_microbatch;
    const Field& field = kPipelineSection.field("microbatches");
    if (microbatches > static_cast<std::uint64_t>(field.max)) {
      global.fail(fmt::format("gives {} microbatches; at most {}", microbatches, field.max));
    }
    if (config.pipeline.microbatches != 0 && config.pipeline.microbatches != microbatches) {
      global.fail(
          fmt::format("gives {} microbatches ({} / ({} x {})), but /pipeline/microbatches is {}",
                      microbatches, plan.training.global_batch_size, plan.training.micro_batch_size,
                      config.data_parallel.degree, config.pipeline.microbatches));
    }
    config.pipeline.microbatches = static_cast<std::uint32_t>(microbatches);
  } else {
    plan.training.global_batch_size = static_cast<std::uint32_t>(std::min<std::uint64_t>(
        per_microbatch * std::max(config.pipeline.microbatches, 1u), UINT32_MAX));
  }
  config.model = std::move(plan);
}

void derive_model_costs(const JsonCursor& root, Config& config,
                        std::span<const std::optional<model::DeviceSpec>> devices) {
  ModelPlan& plan = *config.model;
  const std::uint32_t stages = config.pipeline.stages;
  const std::uint32_t chunks = config.pipeline.chunks;
  const JsonCursor pipeline = root.at("pipeline");
  const std::optional<JsonCursor> layers = pipeline.find("layers");
  plan.peak_flops.assign(stages, 0.0);
  for (std::uint32_t s = 0; s < stages; ++s) {
    if (devices[s]) plan.peak_flops[s] = devices[s]->peak(plan.training.precision);
  }
  // A stage without a GPU still gets the model's memory and traffic; its durations must
  // come from /costs.
  plan.timed.assign(stages, false);
  model::DeviceSpec untimed;
  untimed.peak_bf16 = untimed.peak_fp16 = untimed.peak_fp8 = untimed.peak_mxfp8 =
      untimed.peak_nvfp4 = 1;
  untimed.memory_bandwidth = 1;
  plan.gemm_max.assign(stages, 0.0);
  plan.kernel_launch.assign(stages, 0.0);
  for (std::uint32_t s = 0; s < stages; ++s) {
    plan.timed[s] = devices[s].has_value();
    if (devices[s]) plan.gemm_max[s] = devices[s]->efficiency.gemm_max;
    if (devices[s]) plan.kernel_launch[s] = devices[s]->kernel_launch;
  }
  const auto device = [&](std::uint32_t s) -> const model::DeviceSpec& {
    return devices[s] ? *devices[s] : untimed;
  };
  const bool all_timed =
      std::all_of(plan.timed.begin(), plan.timed.end(), [](bool t) { return t; });
  for (std::uint32_t s = 0; s < stages; ++s) {
    if (plan.timed[s] && plan.peak_flops[s] <= 0) {
      // Which GPU, from where, and what it does have: the user picks a precision or a GPU.
      const DeviceInfo& d = config.devices[s];
      const std::string gpu =
          root.has("device")
              ? fmt::format("its GPU '{}' (/device)", d.preset)
              : fmt::format("its device type '{}' (/device_types/{}{})", d.type, d.type,
                            d.preset.empty() ? "" : fmt::format(", preset '{}'", d.preset));
      std::vector<std::string_view> has;
      for (const model::Precision p : model::kPrecisions) {
        if (devices[s]->peak(p) > 0) has.push_back(model::to_string(p));
      }
      const std::optional<JsonCursor> training = root.find("training");
      const std::optional<JsonCursor> precision =
          training ? training->find("precision") : std::nullopt;
      (precision ? *precision : root)
          .fail(fmt::format("stage {} runs on {}, which has no {} arithmetic (it has {})", s, gpu,
                            model::to_string(plan.training.precision),
                            has.empty() ? "none" : fmt::format("{}", fmt::join(has, ", "))));
    }
  }

  // Transformer Engine's blockwise fp8 needs Hopper's tensor cores or newer (NVIDIA's).
  if (plan.training.precision == model::Precision::Fp8 &&
      plan.training.fp8_recipe == model::Fp8Recipe::Blockwise) {
    for (std::uint32_t s = 0; s < stages; ++s) {
      if (!devices[s] || devices[s]->generation >= GpuGeneration::Hopper) continue;
      root.at("training")
          .at("fp8_recipe")
          .fail(fmt::format("stage {} runs on {}, which Transformer Engine's blockwise fp8 does "
                            "not support (it needs an NVIDIA Hopper or newer GPU): use "
                            "\"delayed\" or \"current\"",
                            s,
                            config.devices[s].preset.empty() ? config.devices[s].type
                                                             : config.devices[s].preset));
    }
  }
  if (const std::uint32_t bf16 =
          plan.training.bf16_layers_at_start + plan.training.bf16_layers_at_end;
      bf16 > plan.transformer.layers) {
    const JsonCursor training = root.at("training");
    training
        .at(training.has("bf16_layers_at_start") ? "bf16_layers_at_start" : "bf16_layers_at_end")
        .fail(fmt::format("{} layers kept in bf16 at the start and end, but the model has {}", bf16,
                          plan.transformer.layers));
  }
  const parallel::PipelineShape shape = parallel::schedule_shape(config.pipeline);
  const std::uint32_t positions = parallel::position_count(shape, stages, chunks);
  // The stage whose load each position adds to. DualPipe's device s runs positions s and
  // p - 1 - s (one direction each, half the microbatches each): the pair is one load,
  // priced on the slower of the two GPUs (both run both).
  const bool dual = shape == parallel::PipelineShape::DualPipe;
  std::vector<std::uint32_t> stage_of(positions, 0);
  for (std::uint32_t s = 0; s < stages; ++s) {
    for (std::uint32_t c = 0; c < chunks; ++c) {
      const std::uint32_t k = parallel::chunk_position(shape, stages, s, c);
      stage_of[k] = dual ? std::min(k, positions - 1 - k) : s;
    }
  }
  const model::Transformer& m = plan.transformer;
  const model::Degrees degrees{.tensor = config.tensor_parallel,
                               .data = config.data_parallel.degree * config.context_parallel,
                               .expert = config.expert_parallel,
                               .pipeline = stages};
  if (m.heads % degrees.tensor != 0) {
    root.at("parallelism")
        .at("tensor_parallel")
        .fail(fmt::format("{} attention heads do not split over {} tensor-parallel ranks", m.heads,
                          degrees.tensor));
  }
  // Megatron-Core's MambaMixer splits its heads and its groups over the TP ranks.
  if (m.has_mamba() &&
      (m.mamba.heads % degrees.tensor != 0 || m.mamba.groups % degrees.tensor != 0)) {
    root.at("parallelism")
        .at("tensor_parallel")
        .fail(fmt::format("the Mamba mixer's {} heads in {} group(s) do not split over {} "
                          "tensor-parallel ranks",
                          m.mamba.heads, m.mamba.groups, degrees.tensor));
  }
  // Each unit's time on one stage's GPU, with its tensor-parallel collectives priced as the
  // simulation will (the network is placed later): NCCL over the slowest GPU's scale-up link,
  // the oldest generation, NVLS only if every GPU has it.
  double collective = 0;
  if (config.tensor_parallel > 1 && all_timed) {
    parallel::NcclNetwork link = gpus_nccl_network(devices);
    link.overhead = parallel::kNcclCallOverhead;
    if (link.intra.bandwidth > 0) {
      const double bytes = 2.0 * plan.training.micro_batch_size * m.sequence * m.hidden;
      collective =
          static_cast<double>(tensor_parallel_collective(link, config.tensor_parallel,
                                                         plan.training.sequence_parallel, bytes)
                                  .time) /
          1e9;
    }
  }
  const auto unit_seconds = [&](std::uint32_t s) {
    return model::unit_seconds(m, plan.training, degrees, device(s), collective);
  };
  std::vector<model::LayerRange> split;
  try {
    if (!layers || layers->value().is_string()) {
      plan.split = layers ? layers->as_string() : "even";
      if (plan.split == "even") {
        split = model::even_split(m.layers, positions);
      } else if (plan.split == "balanced") {
        // Every stage on one GPU: the first stage's with one (without any, each unit counts
        // as one).
        model::UnitSeconds one{
            .embedding = 1, .layers = std::vector<double>(m.layers, 1.0), .head = 1};
        const auto timed = std::find(plan.timed.begin(), plan.timed.end(), true);
        if (timed != plan.timed.end()) {
          one = unit_seconds(static_cast<std::uint32_t>(timed - plan.timed.begin()));
        }
        split = model::balanced_split(std::vector<model::UnitSeconds>(stages, one), stage_of);
      } else if (plan.split == "fastest") {
        if (!all_timed) {
          layers->fail(
              "the fastest split needs a GPU on every stage (/device, or a device type's "
              "preset)");
        }
        // Each stage on its own GPU (derived once per device type).
        std::vector<model::UnitSeconds> gpus(stages);
        std::map<std::string, std::uint32_t> first_of_type;
        for (std::uint32_t s = 0; s < stages; ++s) {
          const auto [it, fresh] = first_of_type.try_emplace(config.devices[s].type, s);
          gpus[s] = fresh || config.devices[s].type.empty() ? unit_seconds(s) : gpus[it->second];
        }
        if (dual) {
          // Pair s runs on devices s and p - 1 - s: each unit at the slower one's seconds.
          for (std::uint32_t s = 0; s < stages / 2; ++s) {
            const model::UnitSeconds& other = gpus[stages - 1 - s];
            model::UnitSeconds& pair = gpus[s];
            pair.embedding = std::max(pair.embedding, other.embedding);
            pair.head = std::max(pair.head, other.head);
            for (std::size_t l = 0; l < pair.layers.size(); ++l) {
              pair.layers[l] = std::max(pair.layers[l], other.layers[l]);
            }
          }
        }
        split = model::balanced_split(gpus, stage_of);
      } else {
        layers->fail_expected(
            "\"even\", \"balanced\", \"fastest\" or an array of layers per position");
      }
    } else {
      plan.split = "explicit";
      if (layers->array_size() != positions) {
        layers->fail(
            fmt::format("expected {} layer counts (one per pipeline position: {} "
                        "stages x {} chunks), got {}",
                        positions, stages, positions == stages ? 1 : chunks, layers->array_size()));
      }
      std::vector<std::uint32_t> counts(positions);
      std::uint64_t total = 0;
      for (std::uint32_t k = 0; k < positions; ++k) {
        counts[k] = static_cast<std::uint32_t>(layers->at(k).as_integer(0, m.layers));
        total += counts[k];
      }
      if (total != m.layers) {
        layers->fail(
            fmt::format("the counts add up to {} layers; the model has {}", total, m.layers));
      }
      split = model::explicit_split(counts);
    }
  } catch (const std::invalid_argument& e) {
    (layers ? *layers : pipeline)
        .fail(fmt::format("cannot split {} layers over {} pipeline positions: {}", m.layers,
                          positions, e.what()));
  }

  plan.positions.clear();
  plan.positions.reserve(std::size_t{stages} * chunks);
  for (std::uint32_t s = 0; s < stages; ++s) {
    bool embedding = false;  // on this device
    for (std::uint32_t c = 0; c < chunks; ++c) {
      embedding = embedding || split[parallel::chunk_position(shape, stages, s, c)].embedding;
    }
    for (std::uint32_t c = 0; c < chunks; ++c) {
      model::LayerRange range = split[parallel::chunk_position(shape, stages, s, c)];
      range.embedding_on_device = embedding && !range.embedding;
      plan.positions.push_back(model::derive_position(m, plan.training, degrees, device(s), range));
    }
  }
}

}  // namespace perflow::study::detail
