// perflow search: enumerate the plans of a model on a cluster, prune the ones that cannot
// work (divisibility, schedule constraints, a lower bound of memory), simulate the rest on
// every core and rank them by step time, with the Pareto front of step time vs memory.
#include "perflow/explore/search.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "detail/file_fields.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/json_cursor.hpp"
#include "perflow/core/memory_budget.hpp"
#include "perflow/core/units.hpp"
#include "perflow/explore/sweep_runner.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/training.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/study/config.hpp"
#include "perflow/study/config_schema.hpp"

namespace perflow::explore {
namespace {

constexpr std::int64_t kMaxValue = detail::kMaxSearchValue;

std::vector<std::uint32_t> read_integers(const JsonCursor& c, std::int64_t min) {
  if (!c.value().is_array() || c.array_size() == 0) c.fail_expected("a non-empty list of integers");
  std::vector<std::uint32_t> values;
  for (std::size_t i = 0; i < c.array_size(); ++i) {
    values.push_back(static_cast<std::uint32_t>(c.at(i).as_integer(min, kMaxValue)));
  }
  return values;
}

std::vector<std::string> read_choices(const JsonCursor& c, std::span<const std::string> valid) {
  if (!c.value().is_array() || c.array_size() == 0) c.fail_expected("a non-empty list of names");
  std::vector<std::string> values;
  for (std::size_t i = 0; i < c.array_size(); ++i) {
    const JsonCursor item = c.at(i);
    std::string name = item.as_string();
    if (std::find(valid.begin(), valid.end(), name) == valid.end()) {
      item.fail_expected(fmt::format("one of {}", fmt::join(valid, ", ")));
    }
    values.push_back(std::move(name));
  }
  return values;
}

// A ConfigError of a probe config (the base with a one-stage pipeline on GPU type `gpu`) as
// an error of the search file: the base's fields are at /base, the device types at
// /cluster/gpus. An error of the whole probe (no pointer) is about the GPU type it placed:
// without a preset or its specs, the model's costs cannot be derived on it.
[[noreturn]] void rethrow_in_search(const ConfigError& e, const std::string& file,
                                    const nlohmann::json& base, const JsonCursor& gpu) {
  const std::string& pointer = e.pointer();
  if (pointer.empty()) {
    const nlohmann::json& entry = gpu.value();
    if (!entry.contains("preset") && !entry.contains("peak_flops")) {
      std::vector<std::string> presets;
      for (const auto& preset : model::device_presets()) presets.emplace_back(preset.name);
      gpu.fail(
          fmt::format("this GPU type has no \"preset\" (one of {}) and no specs "
                      "(peak_flops, memory_bandwidth, ...): the search derives the "
                      "model's costs from them",
                      fmt::join(presets, ", ")));
    }
    gpu.fail(e.message());
  }
  std::string where = "/base";
  const std::string first = pointer.substr(1, pointer.find('/', 1) - 1);
  if (first == "device_types") {
    where = "/cluster/gpus" + pointer.substr(std::string("/device_types").size());
  } else if (!first.empty() && base.contains(first)) {
    where = "/base" + pointer;
  }
  throw ConfigError(file, where, e.message());
}

// The GPU preset a GPU type names; nullptr without one.
const model::DevicePreset* preset_of(const GpuType& gpu) {
  const auto preset = gpu.entry.find("preset");
  if (preset == gpu.entry.end() || !preset->is_string()) return nullptr;
  return model::find_device_preset(preset->get<std::string>());
}

// Whether a GPU type has tensor cores for `precision`: its preset's peak, or a peak_flops of
// its own (which stands for every precision).
bool has_precision(const GpuType& gpu, const std::string& precision) {
  if (gpu.entry.contains("peak_flops")) return true;
  const model::DevicePreset* preset = preset_of(gpu);
  const std::optional<model::Precision> p = model::parse_precision(precision);
  return preset == nullptr || !p || preset->spec.peak(*p) > 0;
}

// The base with the search's choices filled in: one complete config.
nlohmann::json plan_config(const Search& search, const Plan& plan,
                           const std::vector<std::pair<std::size_t, std::uint32_t>>& shares) {
  nlohmann::json config = search.base;
  config["description"] = fmt::format(
      "perflow search plan: {} pp {} x tp {} x {}dp {}, micro-batch {} x {}, {} chunks, "
      "recompute {}{}{}, {}{}, {} ({} layers)",
      plan.schedule, plan.pipeline, plan.tensor_parallel,
      plan.context_parallel > 1 ? fmt::format("cp {} x ", plan.context_parallel) : "",
      plan.data_parallel, plan.micro_batch_size, plan.microbatches, plan.chunks, plan.recompute,
      plan.offload > 0 ? fmt::format(", offload {:g}", plan.offload) : "",
      plan.expert_parallel > 1 ? fmt::format(", ep {}", plan.expert_parallel) : "", plan.precision,
      plan.fsdp == "none"   ? std::string()
      : plan.fsdp == "hsdp" ? fmt::format(", fsdp hsdp over {}", plan.fsdp_shard_size)
                            : ", fsdp " + plan.fsdp,
      plan.placement, plan.layers);
  // The axis sets the ratio (and drops a budget); the base's other offload fields stay.
  if (!search.space.offload.empty()) {
    nlohmann::json& offload = config["costs"]["offload"];
    offload["ratio"] = plan.offload;
    offload.erase("budget");
  }
  nlohmann::json& training = config["training"];
  training["micro_batch_size"] = plan.micro_batch_size;
  training["recompute"] = plan.recompute;
  training["precision"] = plan.precision;
  if (plan.precision != "fp8") training.erase("fp8_recipe");
  if (plan.tensor_parallel == 1 && training.contains("sequence_parallel")) {
    training["sequence_parallel"] = false;
  } else if (plan.tensor_parallel > 1 && search.moe) {
    training["sequence_parallel"] = true;
  }
  nlohmann::json types = nlohmann::json::object();
  nlohmann::json placement = nlohmann::json::array();
  std::uint32_t stage = 0;
  for (const auto& [type, stages] : shares) {
    const GpuType& gpu = search.gpus[type];
    types[gpu.name] = gpu.entry;
    placement.push_back(
        {{"stages", fmt::format("{}-{}", stage, stage + stages - 1)}, {"device_type", gpu.name}});
    stage += stages;
  }
  config["device_types"] = std::move(types);
  config["placement"] = std::move(placement);
  config["pipeline"] = {{"schedule", plan.schedule},
                        {"stages", plan.pipeline},
                        {"chunks", plan.chunks},
                        {"layers", plan.layers}};
  config["parallelism"] = {{"tensor_parallel", plan.tensor_parallel},
                           {"data_parallel", plan.data_parallel}};
  if (plan.expert_parallel > 1) config["parallelism"]["expert_parallel"] = plan.expert_parallel;
  if (plan.context_parallel > 1) config["parallelism"]["context_parallel"] = plan.context_parallel;
  if (plan.fsdp != "none") config["parallelism"]["fsdp"] = plan.fsdp;
  if (plan.fsdp == "hsdp") config["parallelism"]["fsdp_shard_size"] = plan.fsdp_shard_size;
  nlohmann::json& network = config["network"];
  // An all-to-all over more GPUs than a node holds crosses nodes.
  if (plan.expert_parallel > 1 && !network.contains("gpus_per_node")) {
    network["gpus_per_node"] = search.devices_per_node;
  }
  if (!network.contains("devices_per_node")) {
    // Megatron's rank order: tensor, context, then data, then pipeline; a stage's GPUs are
    // adjacent.
    const std::uint32_t group = plan.tensor_parallel * plan.context_parallel * plan.data_parallel;
    network["devices_per_node"] = std::max<std::uint32_t>(1, search.devices_per_node / group);
  }
  return config;
}

// How many stages each GPU type takes, for a pipeline of `stages` with `group` GPUs per
// stage: every assignment, each order of the types that take stages.
std::vector<std::vector<std::pair<std::size_t, std::uint32_t>>> assignments(const Search& search,
                                                                            std::uint32_t stages,
                                                                            std::uint32_t group) {
  std::vector<std::vector<std::pair<std::size_t, std::uint32_t>>> result;
  const std::size_t types = search.gpus.size();
  std::vector<std::uint32_t> most(types);
  for (std::size_t t = 0; t < types; ++t) most[t] = search.gpus[t].count / group;
  std::vector<std::uint32_t> share(types, 0);
  const auto emit = [&] {
    std::vector<std::size_t> order;
    for (std::size_t t = 0; t < types; ++t) {
      if (share[t] > 0) order.push_back(t);
    }
    do {
      std::vector<std::pair<std::size_t, std::uint32_t>> one;
      for (std::size_t t : order) one.emplace_back(t, share[t]);
      result.push_back(std::move(one));
    } while (std::next_permutation(order.begin(), order.end()));
  };
  if (search.use_all_gpus) {
    std::uint32_t total = 0;
    for (std::size_t t = 0; t < types; ++t) {
      if (search.gpus[t].count % group != 0) return result;
      share[t] = most[t];
      total += most[t];
    }
    if (total == stages) emit();
    return result;
  }
  // Every composition of `stages` with share[t] <= most[t].
  const auto place = [&](auto& self, std::size_t t, std::uint32_t left) -> void {
    if (t == types) {
      if (left == 0) emit();
      return;
    }
    for (std::uint32_t n = 0; n <= std::min(left, most[t]); ++n) {
      share[t] = n;
      self(self, t + 1, left - n);
    }
    share[t] = 0;
  };
  place(place, 0, stages);
  return result;
}

}  // namespace

Search parse_search(const nlohmann::json& document, const std::vector<std::string>& gpu_order,
                    const std::string& file) {
  const JsonCursor root(document, file);
  root.expect_object(detail::kSearchSection.keys());
  Search search;
  search.file = file;
  const JsonCursor base = root.at("base");
  if (!base.value().is_object()) base.fail_expected("a config object (model, training, ...)");
  for (std::string_view key : detail::kSearchChosenKeys) {
    if (auto x = base.find(key)) {
      x->fail(fmt::format("the search chooses /{}: remove it from the base", key));
    }
  }
  if (!base.has("model")) base.fail("missing required key 'model' (the search derives costs)");
  search.base = base.value();
  const JsonCursor training = base.at("training");
  if (!training.value().is_object()) training.fail_expected("an object with global_batch_size");
  search.global_batch_size = static_cast<std::uint32_t>(
      training.at("global_batch_size").as_integer(1, std::numeric_limits<std::uint32_t>::max()));

  const JsonCursor cluster = root.at("cluster");
  cluster.expect_object(detail::kClusterSection.keys());
  if (auto n = cluster.find("devices_per_node")) {
    search.devices_per_node = static_cast<std::uint32_t>(n->as_integer(1, kMaxValue));
  }
  const JsonCursor gpus = cluster.at("gpus");
  if (!gpus.value().is_object() || gpus.value().empty()) {
    gpus.fail_expected(
        "an object of GPU types, e.g. {\"H100\": {\"preset\": \"h100-sxm\", "
        "\"count\": 64}}");
  }
  std::vector<std::string> names;
  for (const std::string& name : gpu_order) {
    if (gpus.value().contains(name) && std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  for (const auto& [name, value] : gpus.value().items()) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::optional<double> cap;
  std::optional<JsonCursor> constraints = root.find("constraints");
  if (constraints) {
    constraints->expect_object(detail::kConstraintsSection.keys());
    if (auto x = constraints->find("use_all_gpus")) search.use_all_gpus = x->as_bool();
    if (auto x = constraints->find("memory")) {
      if (x->value().is_number()) {
        cap = x->as_number_at_least(1);
      } else {
        try {
          cap = parse_bytes(x->as_string());
        } catch (const std::invalid_argument& e) {
          x->fail_expected(e.what());
        }
      }
    }
  }

  // Each GPU type is checked (and its capacity read) by parsing the base on one stage of it.
  nlohmann::json probe = search.base;
  probe["training"].erase("micro_batch_size");
  probe["training"].erase("global_batch_size");
  probe["training"]["sequence_parallel"] = false;
  probe["pipeline"] = {{"schedule", "1f1b"}, {"stages", 1}, {"microbatches", 1}};
  std::optional<study::Config> probed;
  for (const std::string& name : names) {
    const JsonCursor gpu = gpus.at(name);
    if (!gpu.value().is_object()) gpu.fail_expected("an object with preset and count");
    GpuType type;
    type.name = name;
    const JsonCursor count = gpu.at("count");
    const std::int64_t n = count.as_integer(1, std::numeric_limits<std::int64_t>::max());
    if (n > kMaxValue) count.fail(fmt::format("at most {} GPUs of a type, got {}", kMaxValue, n));
    type.count = static_cast<std::uint32_t>(n);
    type.entry = gpu.value();
    type.entry.erase("count");
    probe["device_types"] = {{name, type.entry}};
    probe["placement"] = {{{"stages", 0}, {"device_type", name}}};
    try {
      probed = study::parse_config(probe, file);
    } catch (const ConfigError& e) {
      rethrow_in_search(e, file, search.base, gpu);
    }
    type.capacity = probed->devices.at(0).memory_capacity;
    if (cap && (type.capacity <= 0 || *cap < type.capacity)) {
      type.capacity = *cap;
      type.entry["memory"] = static_cast<std::uint64_t>(*cap);
    }
    search.gpus.push_back(std::move(type));
  }
  const model::Transformer& m = probed->model->transformer;
  search.moe = m.moe_layers() > 0;
  const bool mixed = search.gpus.size() > 1;
  std::uint64_t total_gpus = 0;
  for (const GpuType& g : search.gpus) total_gpus += g.count;

  SearchSpace& space = search.space;
  const std::optional<JsonCursor> given = root.find("space");
  if (given) {
    given->expect_object(detail::kSpaceSection.keys());
  }
  const auto find = [&](std::string_view key) {
    return given ? given->find(key) : std::optional<JsonCursor>();
  };
  if (auto x = find("schedules")) {
    std::vector<std::string> valid = parallel::builtin_schedules().names();
    std::erase(valid, "custom");
    space.schedules = read_choices(*x, valid);
  } else {
    space.schedules = {"1f1b", "interleaved-1f1b", "zb-h1", "zbv"};
  }
  if (auto x = find("pipeline")) {
    space.pipeline = read_integers(*x, 1);
  } else {
    // Every depth up to 32 that leaves each stage a layer: the splits place uneven ones
    // (Llama 3.1 405B's 126 layers were trained on 16 stages).
    for (std::uint32_t p = 1; p <= std::min<std::uint64_t>(32, total_gpus); ++p) {
      if (p <= m.layers) space.pipeline.push_back(p);
    }
  }
  if (auto x = find("tensor_parallel")) {
    space.tensor_parallel = read_integers(*x, 1);
  } else {
    for (std::uint32_t t = 1; t <= search.devices_per_node; t *= 2) {
      if (m.splits_over(t)) space.tensor_parallel.push_back(t);
    }
  }
  if (auto x = find("micro_batch_size")) {
    space.micro_batch_size = read_integers(*x, 1);
  } else if (auto mbs = training.find("micro_batch_size")) {
    space.micro_batch_size = {static_cast<std::uint32_t>(mbs->as_integer(1, kMaxValue))};
  } else {
    space.micro_batch_size = {1, 2};
  }
  space.chunks =
      find("chunks") ? read_integers(*find("chunks"), 1) : std::vector<std::uint32_t>{2, 4};
  const std::vector<std::string> recomputes(std::begin(detail::kRecomputeChoices),
                                            std::end(detail::kRecomputeChoices));
  if (auto x = find("recompute")) {
    // /costs/recompute would override the plans' /training/recompute.
    if (auto costs = base.find("costs"); costs && costs->has("recompute")) {
      costs->at("recompute")
          .fail("space.recompute chooses the recomputation: remove it from the base");
    }
    space.recompute = read_choices(*x, recomputes);
  } else if (search.base["training"].contains("recompute")) {
    space.recompute = {search.base["training"]["recompute"].get<std::string>()};
  } else {
    space.recompute = recomputes;
  }
  if (auto x = find("offload")) {
    if (!x->value().is_array() || x->array_size() == 0) {
      x->fail_expected("a non-empty list of shares in [0, 1]");
    }
    space.offload.clear();
    for (std::size_t i = 0; i < x->array_size(); ++i) {
      const double ratio = x->at(i).as_number_at_least(0.0);
      if (ratio > 1.0) x->at(i).fail_expected("a share in [0, 1]");
      space.offload.push_back(ratio);
    }
    // Offloading needs a link to host memory: the base's, or every GPU type's.
    bool linked = search.base.contains("network") && search.base["network"].is_object() &&
                  search.base["network"].contains("host_link");
    if (!linked) {
      // A GPU type's own link, or its preset's (PCIe, NVLink-C2C).
      linked = std::all_of(search.gpus.begin(), search.gpus.end(), [](const GpuType& g) {
        const model::DevicePreset* preset = preset_of(g);
        return g.entry.contains("host_link") ||
               (preset != nullptr && preset->spec.host_link_bandwidth > 0);
      });
    }
    if (!linked &&
        std::any_of(space.offload.begin(), space.offload.end(), [](double r) { return r > 0; })) {
      x->fail(
          "offloading needs a link to host memory: give /base/network/host_link or host_link "
          "in every /cluster/gpus entry without a preset");
    }
  }
  const std::vector<std::string> splits(std::begin(detail::kLayerSplits),
                                        std::end(detail::kLayerSplits));
  if (auto x = find("layers")) {
    space.layers = read_choices(*x, splits);
  } else {
    // The default split, and on a mixed cluster the one that gives faster GPUs more layers
    // ("balanced", the slowest position at its fastest, is there to ask for).
    space.layers =
        mixed ? std::vector<std::string>{"even", "fastest"} : std::vector<std::string>{"even"};
  }
  if (auto x = find("expert_parallel")) {
    space.expert_parallel = read_integers(*x, 1);
  } else {
    // A MoE model: every power of two dividing its experts (the plans whose data
    // parallelism they do not divide are pruned).
    space.expert_parallel = {1};
    for (std::uint32_t e = 2; m.experts > 0 && m.experts % e == 0 && e <= total_gpus; e *= 2) {
      space.expert_parallel.push_back(e);
    }
  }
  if (auto x = find("context_parallel")) {
    space.context_parallel = read_integers(*x, 1);
  } else {
    space.context_parallel = {1};
  }
  const std::vector<std::string> precisions(std::begin(model::kPrecisionNames),
                                            std::end(model::kPrecisionNames));
  if (auto x = find("precision")) {
    space.precision = read_choices(*x, precisions);
  } else if (search.base["training"].contains("precision")) {
    space.precision = {search.base["training"]["precision"].get<std::string>()};
  } else {
    space.precision = {"bf16"};
  }
  const std::vector<std::string> fsdp_modes(std::begin(model::kFsdpNames),
                                            std::end(model::kFsdpNames));
  space.fsdp = {"none"};
  if (auto x = find("fsdp")) space.fsdp = read_choices(*x, fsdp_modes);
  const bool hsdp = std::find(space.fsdp.begin(), space.fsdp.end(), "hsdp") != space.fsdp.end();
  if (auto x = find("fsdp_shard_size")) {
    if (!hsdp) {
      x->fail("fsdp_shard_size is HSDP's shard group: add \"hsdp\" to /space/fsdp");
    }
    space.fsdp_shard_size = read_integers(*x, 2);
  } else if (hsdp) {
    root.at("space").at("fsdp").fail(
        "\"hsdp\" shards within groups of /space/fsdp_shard_size ranks: give the sizes to try");
  }
  search.sequence = m.sequence;
  if (auto x = root.find("top"))
    search.top = static_cast<std::uint32_t>(x->as_integer(1, kMaxValue));
  return search;
}

Search load_search(const std::filesystem::path& path,
                   std::span<const study::ConfigOverride> base_overrides) {
  const std::string text = read_json_text(path);
  nlohmann::json document = parse_json_text(text, path.string());
  // --set on the base: the same fields of the search file's /base.
  study::check_override_pointers(base_overrides);
  std::vector<study::ConfigOverride> in_base(base_overrides.begin(), base_overrides.end());
  for (study::ConfigOverride& o : in_base) o.pointer = "/base" + o.pointer;
  std::vector<std::string> order;
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(text);
  if (const auto cluster = ordered.find("cluster");
      cluster != ordered.end() && cluster->is_object()) {
    if (const auto gpus = cluster->find("gpus"); gpus != cluster->end() && gpus->is_object()) {
      for (const auto& [key, value] : gpus->items()) order.push_back(key);
    }
  }
  try {
    study::apply_overrides(document, in_base, path.string());
    return parse_search(document, order, path.string());
  } catch (const ConfigError& e) {
    // Also an error about a section a --set reached into (/base/pipeline: the search
    // chooses it).
    for (const study::ConfigOverride& o : in_base) {
      if (o.pointer.starts_with(e.pointer() + "/")) {
        throw ConfigError(e.file(), e.pointer(),
                          fmt::format("{} (set by {} '{}')", e.message(), o.origin, o.text));
      }
    }
    throw study::name_override(e, in_base);
  }
}

namespace {

// What one plan kept for the search costs (its fields, its strings and shares, the vector's
// slack) without its config, and what its config adds when kept.
constexpr double kBytesPerPlan = sizeof(Plan) + 160;
constexpr double kBytesPerConfig = 4096;

// Plans in the order of enumerate_plans, with or without their configs. The plans kept are
// checked against the memory limit as they grow (every 64Ki plans: the probe reads /proc),
// so a search over a huge cluster stops with the reason instead of taking the machine.
std::vector<Plan> enumerate(const Search& search, SearchCounts& counts, bool keep_invalid,
                            const parallel::ScheduleRegistry& schedules, bool with_configs) {
  std::vector<Plan> plans;
  const double per_plan = kBytesPerPlan + (with_configs ? kBytesPerConfig : 0.0);
  const auto check_plans = [&] {
    try {
      check_memory(static_cast<double>(plans.size()) * per_plan,
                   fmt::format("keeping {} plans of the search, and more to come", plans.size()));
    } catch (const ResourceError& e) {
      throw ResourceError(fmt::format(
          "{}: {} (narrow /space, or set /constraints/use_all_gpus: true)", search.file, e.what()));
    }
  };
  const SearchSpace& space = search.space;
  // The FSDP choices: each mode, "hsdp" once per shard size.
  std::vector<std::pair<std::string, std::uint32_t>> fsdp_choices;
  for (const std::string& mode : space.fsdp) {
    if (mode != "hsdp") {
      fsdp_choices.emplace_back(mode, 0);
      continue;
    }
    for (const std::uint32_t size : space.fsdp_shard_size) fsdp_choices.emplace_back(mode, size);
  }
  const std::uint64_t leaves =
      std::uint64_t{space.micro_batch_size.size()} * space.recompute.size() *
      std::max<std::size_t>(space.offload.size(), 1) * space.layers.size() *
      space.expert_parallel.size() * space.precision.size() * fsdp_choices.size();
  std::uint64_t total_gpus = 0;
  for (const GpuType& g : search.gpus) total_gpus += g.count;
  // Without an offload axis, every plan offloads as the base says.
  std::vector<double> offloads = space.offload;
  if (offloads.empty()) {
    double ratio = 0;
    const auto costs = search.base.find("costs");
    if (costs != search.base.end() && costs->is_object()) {
      const auto offload = costs->find("offload");
      if (offload != costs->end() && offload->is_object()) {
        const auto r = offload->find("ratio");
        if (r != offload->end() && r->is_number()) ratio = r->get<double>();
      }
    }
    offloads = {ratio};
  }
  // Per GPU type, whether it has each precision of the space (asked once, not per plan).
  std::vector<std::vector<bool>> has(search.gpus.size());
  for (std::size_t g = 0; g < search.gpus.size(); ++g) {
    for (const std::string& precision : space.precision) {
      has[g].push_back(has_precision(search.gpus[g], precision));
    }
  }
  for (const std::string& schedule : space.schedules) {
    // The schedule's chunk rule gives the chunk counts to try, its check the sizes it takes.
    const parallel::ScheduleInfo& info = schedules.get(schedule);
    std::vector<std::uint32_t> chunk_values;
    if (const auto fixed = info.chunks.fixed()) {
      chunk_values = {*fixed};
    } else {
      chunk_values = space.chunks;
    }
    for (const std::uint32_t chunks : chunk_values) {
      for (const std::uint32_t tp : space.tensor_parallel) {
        for (const std::uint32_t pp : space.pipeline) {
          for (const std::uint32_t cp : space.context_parallel) {
            // Every data-parallel degree with its assignments of stages to GPU types (each
            // stage's GPUs: tp x cp x dp).
            std::vector<
                std::pair<std::uint32_t, std::vector<std::pair<std::size_t, std::uint32_t>>>>
                layouts;
            // Each context-parallel rank takes two of 2 cp sequence chunks.
            const bool splits_sequence = search.sequence % (2ULL * cp) == 0;
            for (std::uint64_t dp = 1; splits_sequence && dp * pp * tp * cp <= total_gpus; ++dp) {
              for (auto& shares :
                   assignments(search, pp, static_cast<std::uint32_t>(dp * tp * cp))) {
                layouts.emplace_back(static_cast<std::uint32_t>(dp), std::move(shares));
              }
            }
            counts.considered += layouts.empty() ? leaves : layouts.size() * leaves;
            if (layouts.empty()) counts.pruned_divisibility += leaves;
            for (const auto& [dp, shares] : layouts) {
              std::string placement;
              for (const auto& [type, stages] : shares) {
                placement += fmt::format("{}{}:{}", placement.empty() ? "" : ",",
                                         search.gpus[type].name, stages);
              }
              for (const std::uint32_t mbs : space.micro_batch_size) {
                const std::uint64_t per_step = std::uint64_t{mbs} * dp;
                const std::uint32_t m =
                    static_cast<std::uint32_t>(search.global_batch_size / per_step);
                const bool divides = search.global_batch_size % per_step == 0 && m >= 1;
                parallel::PipelineSpec spec;  // the plan's pipeline; the rest as the defaults
                spec.schedule = schedule;
                spec.stages = pp;
                spec.microbatches = m;
                spec.chunks = chunks;
                const bool accepted = divides && !info.check(spec).has_value();
                // FSDP is not modelled around DualPipe's overlapped pairs.
                const bool dual = info.shape_of(spec) == parallel::PipelineShape::DualPipe;
                for (const std::string& recompute : space.recompute) {
                  for (const double offload : offloads) {
                    for (const std::string& layers : space.layers) {
                      for (const std::uint32_t ep : space.expert_parallel) {
                        for (std::size_t k = 0; k < space.precision.size(); ++k) {
                          for (const auto& [fsdp, shard] : fsdp_choices) {
                            const std::string& precision = space.precision[k];
                            // Expert-parallel ranks are data-parallel replicas; every GPU type the
                            // plan places must have the precision; FSDP shards over the data x
                            // context ranks (HSDP within groups holding whole CP groups).
                            const std::uint64_t ranks = std::uint64_t{dp} * cp;
                            const bool shards =
                                fsdp == "none" ||
                                (!dual && ranks >= 2 &&
                                 (fsdp == "zero3" || (ranks % shard == 0 && shard % cp == 0)));
                            const bool valid =
                                accepted && dp % ep == 0 && shards &&
                                std::all_of(shares.begin(), shares.end(),
                                            [&](const auto& share) { return has[share.first][k]; });
                            if (!valid) {
                              ++counts.pruned_divisibility;
                              if (!keep_invalid || !divides) continue;
                            }
                            Plan plan;
                            plan.schedule = schedule;
                            plan.pipeline = pp;
                            plan.tensor_parallel = tp;
                            plan.data_parallel = dp;
                            plan.micro_batch_size = mbs;
                            plan.microbatches = m;
                            plan.chunks = chunks;
                            plan.recompute = recompute;
                            plan.offload = offload;
                            plan.layers = layers;
                            plan.expert_parallel = ep;
                            plan.context_parallel = cp;
                            plan.precision = precision;
                            plan.fsdp = fsdp;
                            plan.fsdp_shard_size = shard;
                            plan.placement = placement;
                            plan.stage_shares = shares;
                            if (with_configs) plan.config = plan_config(search, plan, shares);
                            plans.push_back(std::move(plan));
                            if (plans.size() % 65536 == 0) check_plans();
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return plans;
}

}  // namespace

std::vector<Plan> enumerate_plans(const Search& search, SearchCounts& counts, bool keep_invalid,
                                  const parallel::ScheduleRegistry& schedules) {
  return enumerate(search, counts, keep_invalid, schedules, /*with_configs=*/true);
}

std::optional<RunOutcome::Overshoot> memory_shortfall(const study::Config& config) {
  std::optional<RunOutcome::Overshoot> worst;
  for (std::uint32_t s = 0; s < config.pipeline.stages; ++s) {
    const study::DeviceInfo& device = config.devices.at(s);
    if (device.memory_capacity <= 0) continue;
    double activation = 0;
    for (std::uint32_t c = 0; c < config.pipeline.chunks; ++c) {
      // One microbatch's activation at its largest: all of it, or with recomputation what
      // F keeps and R rebuilds.
      const parallel::TaskCosts& costs = config.costs.at(StageId(s), c);
      activation = std::max(activation, costs.recompute
                                            ? costs.kept_activation() + costs.rebuilt_activation()
                                            : costs.activation);
    }
    const RunOutcome::Overshoot over{s, device.static_memory + activation, device.memory_capacity};
    if (over.needed <= over.capacity) continue;
    if (!worst || over.needed * worst->capacity > worst->needed * over.capacity) worst = over;
  }
  return worst;
}

bool cannot_fit(const study::Config& config) { return memory_shortfall(config).has_value(); }

SearchResult run_search(const Search& search, const SearchOptions& options) {
  SearchResult result;
  SearchCounts& counts = result.counts;
  // Configs are made one at a time by the workers, and kept only for the plans returned.
  std::vector<Plan> plans = enumerate(search, counts, !options.prune_divisibility,
                                      parallel::builtin_schedules(), /*with_configs=*/false);
  enum class Status : std::uint8_t { Simulated, Refused, TooLarge };
  // The nearest miss is kept while no plan fits (the smallest needed / capacity).
  std::optional<NearestMiss> miss;
  const auto consider_miss = [&](const Plan& plan, const RunOutcome& outcome, bool bound) {
    const RunOutcome::Overshoot& o = *outcome.overshoot;
    if (counts.fit > 0 ||
        (miss && o.needed * miss->overshoot.capacity >= miss->overshoot.needed * o.capacity)) {
      return;
    }
    miss = NearestMiss{plan, o, bound};
  };
  std::vector<Status> status(plans.size(), Status::Simulated);
  std::vector<PlanResult> fitting;
  run_in_order(
      0, plans.size(), options.jobs,
      [&](std::uint64_t i) {
        RunOutcome outcome;
        try {
          std::optional<study::Config> config;
          try {
            config = study::parse_config(plan_config(search, plans[i], plans[i].stage_shares),
                                         search.file);
          } catch (const ConfigError&) {
            if (!options.prune_divisibility) throw;
            status[i] = Status::Refused;
            return outcome;
          }
          if (options.prune_memory) {
            if ((outcome.overshoot = memory_shortfall(*config))) {
              status[i] = Status::TooLarge;
              return outcome;
            }
          }
          evaluate_config(*config, outcome);
        } catch (const Error& e) {
          outcome.error = e.what();
        } catch (const std::bad_alloc&) {
          outcome.error = kAllocationFailedMessage;
        }
        return outcome;
      },
      [&](const RunOutcome& outcome) {
        const std::size_t i = outcome.run;
        if (status[i] == Status::Refused) {
          ++counts.pruned_divisibility;
          return;
        }
        if (outcome.overshoot) consider_miss(plans[i], outcome, status[i] == Status::TooLarge);
        if (status[i] == Status::TooLarge) {
          ++counts.pruned_memory;
          return;
        }
        ++counts.simulated;
        PlanResult r{plans[i], outcome};
        if (!outcome.error.empty()) ++counts.invalid;
        if (r.fits()) {
          ++counts.fit;
          fitting.push_back(r);
        }
        if (options.keep_simulated) result.simulated.push_back(std::move(r));
      },
      options.progress);
  // Ties keep the enumeration order (stable sort), so the ranking is deterministic.
  std::stable_sort(fitting.begin(), fitting.end(), [](const PlanResult& a, const PlanResult& b) {
    return a.outcome.makespan < b.outcome.makespan;
  });
  result.best.assign(fitting.begin(),
                     fitting.begin() + static_cast<std::ptrdiff_t>(
                                           std::min<std::size_t>(search.top, fitting.size())));
  std::vector<PlanResult> by_time = fitting;
  std::stable_sort(by_time.begin(), by_time.end(), [](const PlanResult& a, const PlanResult& b) {
    return a.outcome.makespan < b.outcome.makespan ||
           (a.outcome.makespan == b.outcome.makespan &&
            a.outcome.peak_total_memory < b.outcome.peak_total_memory);
  });
  double lowest = std::numeric_limits<double>::infinity();
  for (const PlanResult& r : by_time) {  // fastest first: each one that needs less memory
    if (r.outcome.peak_total_memory < lowest) {
      lowest = r.outcome.peak_total_memory;
      result.pareto.push_back(r);
    }
  }
  for (auto* kept : {&result.best, &result.pareto, &result.simulated}) {
    for (PlanResult& r : *kept) r.plan.config = plan_config(search, r.plan, r.plan.stage_shares);
  }
  if (counts.fit == 0 && miss) {
    miss->plan.config = plan_config(search, miss->plan, miss->plan.stage_shares);
    result.nearest_miss = std::move(miss);
  }
  return result;
}

}  // namespace perflow::explore
