// `perflow import torchtitan`: a config from a torchtitan job file (TOML). Keys, defaults
// and derived sizes follow torchtitan's torchtitan/config/job_config.py and
// torchtitan/distributed/pipeline_parallel.py (pytorch/torchtitan at 238fa99, 2026-02, the
// last release with TOML job files), read there and restated here, not copied. toml++ is
// compiled into this file alone (header-only), so the installed package needs no new
// dependency.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "detail/imported_run.hpp"
#include "perflow/core/error.hpp"
#include "perflow/study/launch_import.hpp"

namespace perflow::study {
namespace {

/// torchtitan's (model.name, model.flavor) with a PerFlow preset of the same shape.
struct Flavor {
  std::string_view name;
  std::string_view flavor;
  std::string_view preset;
};
constexpr Flavor kFlavors[] = {
    {"llama3", "8B", "llama3-8b"},
    {"llama3", "70B", "llama3-70b"},
    {"llama3", "405B", "llama3-405b"},
    {"deepseek_v3", "671B", "deepseek-v3"},
};

/// torchtitan's pipeline_parallel_schedule names (torch.distributed.pipelining) with a
/// PerFlow schedule; `multi` marks looped schedules (several stages per rank).
struct Schedule {
  std::string_view name;
  std::string_view schedule;
  bool multi;
};
constexpr Schedule kSchedules[] = {
    {"1F1B", "1f1b", false},
    {"GPipe", "gpipe", false},
    {"Interleaved1F1B", "interleaved-1f1b", true},
    {"LoopedBFS", "looped-bfs", true},
    {"InterleavedZeroBubble", "interleaved-1f1b", true},
    {"ZBVZeroBubble", "zbv", true},
    {"DualPipeV", "dualpipev", true},
};

/// The keys read (or known to have no bearing on step time) in the tables this importer
/// checks; every other table's keys have none (logging, checkpoints, optimizer, ...).
struct Table {
  std::string_view name;
  std::vector<std::string_view> keys;
};
const std::vector<Table>& checked_tables() {
  static const std::vector<Table> tables = {
      {"model",
       {"name", "flavor", "converters", "hf_assets_path", "tokenizer_path",
        "print_after_conversion"}},
      {"training",
       {"local_batch_size", "global_batch_size", "seq_len", "mixed_precision_param",
        "enable_cpu_offload", "dataset", "dataset_path", "max_norm", "steps", "dtype",
        "mixed_precision_reduce", "gc_freq", "gc_debug", "dataloader"}},
      {"parallelism",
       {"data_parallel_replicate_degree",
        "data_parallel_shard_degree",
        "tensor_parallel_degree",
        "pipeline_parallel_degree",
        "context_parallel_degree",
        "expert_parallel_degree",
        "expert_tensor_parallel_degree",
        "pipeline_parallel_schedule",
        "pipeline_parallel_layers_per_stage",
        "pipeline_parallel_microbatch_size",
        "pipeline_parallel_first_stage_less_layers",
        "pipeline_parallel_last_stage_less_layers",
        "enable_async_tensor_parallel",
        "disable_loss_parallel",
        "fsdp_reshard_after_forward",
        "module_fqns_per_model_part",
        "pipeline_parallel_schedule_csv",
        "pipeline_parallel_expert_parallel_overlap",
        "context_parallel_load_balancer",
        "context_parallel_rotate_method",
        "expert_parallel_comm_backend"}},
      {"activation_checkpoint",
       {"mode", "selective_ac_option", "per_op_sac_force_recompute_mm_shapes_by_fqns", "early_stop",
        "memory_budget", "visualize_memory_budget_pareto", "preserve_rng_state",
        "determinism_check", "debug"}},
      {"compile", {"enable", "components", "backend"}},
  };
  return tables;
}
constexpr std::string_view kOtherTables[] = {"job",
                                             "profiling",
                                             "metrics",
                                             "optimizer",
                                             "lr_scheduler",
                                             "checkpoint",
                                             "quantize",
                                             "comm",
                                             "memory_estimation",
                                             "fault_tolerance",
                                             "experimental",
                                             "validation",
                                             "debug",
                                             "float8",
                                             "mx"};

class Job {
 public:
  Job(const toml::table& root, std::string source) : root_(root), source_(std::move(source)) {}

  [[nodiscard]] toml::node_view<const toml::node> at(std::string_view table,
                                                     std::string_view key) const {
    return root_[table][key];
  }

  [[nodiscard]] std::optional<std::int64_t> integer(std::string_view table, std::string_view key,
                                                    std::int64_t min) const {
    const auto node = at(table, key);
    if (!node) return std::nullopt;
    const std::optional<std::int64_t> value = node.value_exact<std::int64_t>();
    if (!value || *value < min || *value > 0x7fffffff) {
      fail(table, key, fmt::format("expected an integer >= {}", min), node);
    }
    return value;
  }
  [[nodiscard]] std::optional<std::string> text(std::string_view table,
                                                std::string_view key) const {
    const auto node = at(table, key);
    if (!node) return std::nullopt;
    if (!node.is_string()) fail(table, key, "expected a string", node);
    return std::string(*node.value<std::string_view>());
  }
  [[nodiscard]] bool flag(std::string_view table, std::string_view key) const {
    const auto node = at(table, key);
    if (!node) return false;
    if (!node.is_boolean()) fail(table, key, "expected true or false", node);
    return *node.value<bool>();
  }

  [[noreturn]] void fail(std::string_view table, std::string_view key, const std::string& expected,
                         toml::node_view<const toml::node> node) const {
    const toml::source_region& where = node.node()->source();
    throw FormatError(source_, where.begin.line,
                      fmt::format("[{}] {}: {}, got {}", table, key, expected, shown(node)));
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw Error(fmt::format("{}: {}", source_, message));
  }

 private:
  static std::string shown(toml::node_view<const toml::node> node) {
    if (node.is_string()) return fmt::format("'{}'", *node.value<std::string_view>());
    if (auto i = node.value_exact<std::int64_t>()) return std::to_string(*i);
    if (auto b = node.value_exact<bool>()) return *b ? "true" : "false";
    if (auto d = node.value_exact<double>()) return fmt::format("{}", *d);
    if (node.is_table()) return "a table";
    if (node.is_array()) return "an array";
    return "a date or time";
  }

  const toml::table& root_;
  std::string source_;
};

/// Keys this importer does not know, as "[table] key", sorted (toml++ keeps keys sorted).
void list_unknown(const toml::table& root, ImportResult& result) {
  for (const auto& [name, node] : root) {
    const std::string_view table = name.str();
    const Table* checked = nullptr;
    for (const Table& t : checked_tables()) {
      if (t.name == table) checked = &t;
    }
    if (checked == nullptr) {
      if (std::find(std::begin(kOtherTables), std::end(kOtherTables), table) ==
          std::end(kOtherTables)) {
        result.unknown.push_back(fmt::format("[{}]", table));
      }
      continue;
    }
    const toml::table* keys = node.as_table();
    if (keys == nullptr) continue;
    for (const auto& [key, value] : *keys) {
      if (std::find(checked->keys.begin(), checked->keys.end(), key.str()) == checked->keys.end()) {
        result.unknown.push_back(fmt::format("[{}] {}", table, key.str()));
      }
    }
  }
}

void read_model(const Job& job, const toml::table& root, detail::ImportedRun& run,
                ImportResult& result) {
  const std::string name = job.text("model", "name").value_or("llama3");
  const std::string flavor = job.text("model", "flavor").value_or("debugmodel");
  for (const Flavor& f : kFlavors) {
    if (f.name == name && f.flavor == flavor) run.preset = f.preset;
  }
  if (run.preset.empty()) {
    std::vector<std::string> known;
    for (const Flavor& f : kFlavors) known.push_back(fmt::format("{} {}", f.name, f.flavor));
    job.fail(
        fmt::format("[model] name '{}' flavor '{}' has no PerFlow model preset (those "
                    "with one: {}); write /model by hand",
                    name, flavor, fmt::join(known, ", ")));
  }
  run.shape = model::find_model_preset(run.preset)->model;
  if (auto seq = job.integer("training", "seq_len", 1)) {
    run.shape.sequence = static_cast<std::uint32_t>(*seq);
  } else {
    run.shape.sequence = 2048;  // job_config.py's default
  }
  // model.converters: "float8" (or its later name "quantize.linear.float8") swaps the
  // linears for float8 ones.
  if (const toml::array* converters = root["model"]["converters"].as_array()) {
    for (const toml::node& c : *converters) {
      const std::string_view converter = c.value_or(std::string_view());
      if (converter == "float8" || converter == "quantize.linear.float8") {
        run.precision = "fp8";
      } else if (converter == "mx" || converter == "quantize.linear.mx") {
        run.precision = "fp8";
        result.warnings.push_back(
            fmt::format("[model] converters '{}': MX formats are modelled as fp8", converter));
      } else {
        result.warnings.push_back(fmt::format("[model] converters '{}': not modelled", converter));
      }
    }
  }
}

void read_parallelism(const Job& job, detail::ImportedRun& run, ImportResult& result) {
  const auto degree = [&](std::string_view key) {
    return static_cast<std::uint32_t>(job.integer("parallelism", key, 1).value_or(1));
  };
  run.tensor_parallel = degree("tensor_parallel_degree");
  run.pipeline_parallel = degree("pipeline_parallel_degree");
  run.context_parallel = degree("context_parallel_degree");
  run.expert_parallel = degree("expert_parallel_degree");
  const std::uint32_t replicate = degree("data_parallel_replicate_degree");
  // -1 (the default): the ranks left after the other degrees.
  const std::int64_t shard =
      job.integer("parallelism", "data_parallel_shard_degree", -1).value_or(-1);
  if (shard == 0) {
    job.fail("parallelism", "data_parallel_shard_degree", "expected -1 or an integer >= 1",
             job.at("parallelism", "data_parallel_shard_degree"));
  }
  detail::derive_data_parallel(run,
                               "[parallelism] tensor_parallel_degree, pipeline_parallel_degree, "
                               "context_parallel_degree");
  if (run.data_parallel % replicate != 0) {
    job.fail(
        fmt::format("[parallelism] data_parallel_replicate_degree {} does not divide the {} "
                    "data-parallel ranks",
                    replicate, run.data_parallel));
  }
  const std::uint32_t shards =
      shard < 0 ? run.data_parallel / replicate : static_cast<std::uint32_t>(shard);
  if (std::uint64_t{shards} * replicate != run.data_parallel) {
    job.fail(
        fmt::format("[parallelism] data_parallel_replicate_degree {} x "
                    "data_parallel_shard_degree {} is not the {} ranks left for data "
                    "parallelism",
                    replicate, shards, run.data_parallel));
  }
  // FSDP2 over the dp_shard x cp mesh (torchtitan's parallel_dims), replicated over
  // dp_replicate with HSDP.
  if (std::uint64_t{shards} * run.context_parallel > 1) {
    run.fsdp = replicate > 1 ? "hsdp" : "zero3";
    run.fsdp_shard_size = shards * run.context_parallel;
  }
  // PyTorch's context parallelism rotates K and V around the ring ("alltoall") or gathers
  // them first ("allgather", torchtitan's default; torch.distributed.tensor.experimental
  // context_parallel's set_rotate_method).
  const std::string rotate =
      job.text("parallelism", "context_parallel_rotate_method").value_or("allgather");
  if (rotate != "allgather" && rotate != "alltoall") {
    job.fail("parallelism", "context_parallel_rotate_method",
             "expected \"allgather\" or \"alltoall\"",
             job.at("parallelism", "context_parallel_rotate_method"));
  }
  if (run.context_parallel > 1 && rotate == "allgather") run.cp_comm = "all_gather";
  if (auto etp = job.integer("parallelism", "expert_tensor_parallel_degree", 1);
      etp && *etp != run.tensor_parallel) {
    result.warnings.push_back(fmt::format(
        "[parallelism] expert_tensor_parallel_degree {}: PerFlow's experts use the model's "
        "tensor parallelism ({})",
        *etp, run.tensor_parallel));
  }
  // torchtitan's tensor parallelism shards the norms' activations (SequenceParallel).
  run.sequence_parallel = run.tensor_parallel > 1;
  if (job.flag("parallelism", "enable_async_tensor_parallel")) {
    result.warnings.push_back(
        "[parallelism] enable_async_tensor_parallel: PerFlow does not overlap tensor-parallel "
        "communication with the GEMMs");
  }
  if (job.at("parallelism", "module_fqns_per_model_part")) {
    result.warnings.push_back(
        "[parallelism] module_fqns_per_model_part: a custom split; set /pipeline/layers by "
        "hand");
  }
  if (auto csv = job.text("parallelism", "pipeline_parallel_schedule_csv"); csv && !csv->empty()) {
    result.warnings.push_back(fmt::format(
        "[parallelism] pipeline_parallel_schedule_csv '{}': a custom schedule; write it as "
        "/pipeline/order",
        *csv));
  }
}

/// The schedule and model chunks per rank (pipeline_parallel.py): looped schedules take
/// ceil((layers + first_less + last_less) / layers_per_stage) stages, else 2 per rank.
void read_pipeline(const Job& job, detail::ImportedRun& run, ImportResult& result) {
  if (run.pipeline_parallel == 1) return;  // no pipeline: gradient accumulation
  const std::string name = job.text("parallelism", "pipeline_parallel_schedule").value_or("1F1B");
  const Schedule* schedule = nullptr;
  for (const Schedule& s : kSchedules) {
    if (s.name == name) schedule = &s;
  }
  if (schedule == nullptr) {
    std::vector<std::string_view> names;
    for (const Schedule& s : kSchedules) names.push_back(s.name);
    job.fail("parallelism", "pipeline_parallel_schedule",
             fmt::format("expected one of {}", fmt::join(names, ", ")),
             job.at("parallelism", "pipeline_parallel_schedule"));
  }
  run.schedule = schedule->schedule;
  if (name == "InterleavedZeroBubble") {
    result.warnings.push_back(
        "[parallelism] pipeline_parallel_schedule 'InterleavedZeroBubble': modelled as "
        "interleaved-1f1b");
  }
  std::uint32_t chunks = schedule->multi ? 2 : 1;
  const std::int64_t input_weight =
      job.integer("parallelism", "pipeline_parallel_first_stage_less_layers", 0).value_or(1);
  const std::int64_t output_weight =
      job.integer("parallelism", "pipeline_parallel_last_stage_less_layers", 0).value_or(1);
  const std::int64_t units = std::int64_t{run.shape.layers} + input_weight + output_weight;
  if (auto per_stage = job.integer("parallelism", "pipeline_parallel_layers_per_stage", 1)) {
    const std::int64_t stages = (units + *per_stage - 1) / *per_stage;
    if (stages % run.pipeline_parallel != 0) {
      job.fail(
          fmt::format("[parallelism] pipeline_parallel_layers_per_stage {} makes {} stages, "
                      "not a multiple of pipeline_parallel_degree {}",
                      *per_stage, stages, run.pipeline_parallel));
    }
    chunks = static_cast<std::uint32_t>(stages / run.pipeline_parallel);
  }
  run.chunks = chunks;
  // A custom split (module_fqns_per_model_part) is the user's to write (a warning says so).
  if (job.at("parallelism", "module_fqns_per_model_part")) return;
  // torchtitan's split (_generate_llm_fqn_per_model_part): the embedding and the head weigh
  // input_weight and output_weight layers, the units are shared evenly with the earlier
  // stages taking the spare ones, and the last takes what layers remain.
  const std::int64_t positions = std::int64_t{run.pipeline_parallel} * chunks;
  const std::int64_t per = units / positions;
  if (per == 0 || input_weight > per || output_weight > per) {
    job.fail(fmt::format(
        "[parallelism] {} layers with pipeline_parallel_first_stage_less_layers {} and "
        "pipeline_parallel_last_stage_less_layers {} do not split over {} stages: torchtitan "
        "needs each stage to hold at least as many units as each weight",
        run.shape.layers, input_weight, output_weight, positions));
  }
  std::vector<std::uint32_t> split(static_cast<std::size_t>(positions));
  std::int64_t left = run.shape.layers;
  for (std::int64_t k = 0; k < positions; ++k) {
    std::int64_t take = per + (k < units % positions ? 1 : 0);
    if (k == 0) take -= input_weight;
    if (k + 1 == positions) take -= output_weight;
    take = std::min(take, left);
    split[static_cast<std::size_t>(k)] = static_cast<std::uint32_t>(take);
    left -= take;
  }
  run.layers = detail::unless_even(std::move(split));
}

void read_recompute(const Job& job, detail::ImportedRun& run, ImportResult& result) {
  const std::string mode = job.text("activation_checkpoint", "mode").value_or("selective");
  if (mode == "none" || mode == "full") {
    run.recompute = mode;
    return;
  }
  if (mode == "memory_budget") {
    run.recompute = "selective";
    result.warnings.push_back(
        "[activation_checkpoint] mode 'memory_budget': a compiler-chosen recomputation; "
        "modelled as selective");
    return;
  }
  if (mode != "selective") {
    job.fail("activation_checkpoint", "mode", "expected none, selective, full or memory_budget",
             job.at("activation_checkpoint", "mode"));
  }
  const std::string option = job.text("activation_checkpoint", "selective_ac_option").value_or("2");
  if (option == "op") {
    run.recompute = "selective";
    result.warnings.push_back(
        "[activation_checkpoint] selective_ac_option 'op': torchtitan's per-op policy is "
        "modelled as PerFlow's selective recomputation (the attention core)");
    return;
  }
  // An integer N: every Nth layer is checkpointed whole (job_config.py).
  int every = 0;
  const auto [ptr, ec] = std::from_chars(option.data(), option.data() + option.size(), every);
  if (ec != std::errc() || ptr != option.data() + option.size() || every < 1) {
    job.fail("activation_checkpoint", "selective_ac_option", "expected 'op' or an integer >= 1",
             job.at("activation_checkpoint", "selective_ac_option"));
  }
  run.recompute = "full";
  if (every > 1) {
    result.warnings.push_back(fmt::format(
        "[activation_checkpoint] selective_ac_option '{}': every {}th layer is recomputed; "
        "PerFlow recomputes every layer or none, modelled as full",
        option, every));
  }
}

/// What toml++ 3.3.0 (Debian's) mishandles, refused first as TOML 1.0 refuses it:
/// - a table header whose key does not start with a key character or a quote (`[ = 1`,
///   `[[[1]]]`): the parser asserts it does (and, built with NDEBUG, assumes it;
///   marzer/tomlplusplus pull request 301, fixed after 3.3.0);
/// - a character outside ASCII outside strings and comments (after a number, `x = 1\u00e9`)
///   or in a table header: its whitespace test reaches TOML_UNREACHABLE for some of them
///   (unicode_autogenerated.h).
/// A light scan that knows strings, comments and arrays spanning lines, so that only the lines
/// where a header can start are taken for headers.
void check_toml_text(std::string_view text, const std::string& source) {
  const auto key_start = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '"' || c == '\'';
  };
  const auto to_line_end = [&](std::size_t i) {
    const std::size_t end = text.find('\n', i);
    return end == std::string_view::npos ? text.size() - 1 : end - 1;
  };
  std::size_t line = 1;
  int depth = 0;  // open [ and { of values
  bool line_start = true;
  char previous = '\n';  // the last character before this one that is not a space
  const std::size_t bom = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;  // a UTF-8 byte order mark
  for (std::size_t i = bom; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = true;
      previous = '\n';
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (static_cast<unsigned char>(c) >= 0x80) {
      throw FormatError(source, line,
                        "a character outside ASCII outside a string or comment (TOML 1.0 "
                        "keys and values are ASCII)");
    }
    const bool first = line_start;
    line_start = false;
    // A quote opens a string only where a key or a value starts; elsewhere (`40"`) it is a
    // malformed token, and what follows is looked at as the parser will.
    const bool string_start = first || previous == '=' || previous == '[' || previous == '{' ||
                              previous == ',' || previous == '.';
    previous = c;
    if (c == '#') {
      i = to_line_end(i);
    } else if ((c == '"' || c == '\'') && string_start) {
      const std::string_view triple = c == '"' ? "\"\"\"" : "\'\'\'";
      const bool multi = text.substr(i, 3) == triple;
      std::size_t k = i + (multi ? 3 : 1);
      for (; k < text.size(); ++k) {
        if (c == '"' && text[k] == '\\') {
          ++k;
          if (k < text.size() && text[k] == '\n') ++line;
        } else if (text[k] == '\n') {
          if (!multi) break;  // an unclosed string: the parser reports it
          ++line;
        } else if (multi ? text.substr(k, 3) == triple : text[k] == c) {
          break;
        }
      }
      i = multi && k < text.size() ? k + 2 : (k < text.size() && text[k] == '\n' ? k - 1 : k);
    } else if (first && depth == 0 && c == '[') {
      std::size_t k = i + 1;
      if (k < text.size() && text[k] == '[') ++k;
      while (k < text.size() && (text[k] == ' ' || text[k] == '\t')) ++k;
      if (k >= text.size() || !key_start(text[k])) {
        throw FormatError(source, line, "a table header needs a key after '['");
      }
      const std::size_t end = to_line_end(i);  // a header is one line
      for (; i <= end && text[i] != '#'; ++i) {
        if (static_cast<unsigned char>(text[i]) >= 0x80) {
          throw FormatError(source, line,
                            "a character outside ASCII in a table header (torchtitan's "
                            "tables and keys are ASCII)");
        }
      }
      i = end;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

}  // namespace

ImportResult import_torchtitan_text(std::string_view text, const std::string& source,
                                    const ImportOptions& options) {
  check_toml_text(text, source);
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw FormatError(source, e.source().begin.line, std::string(e.description()));
  }
  ImportResult result;
  list_unknown(root, result);
  const Job job(root, source);

  detail::ImportedRun run;
  const std::string file = std::filesystem::path(source).filename().string();
  run.tool = fmt::format("torchtitan job {}", file);
  detail::require_gpus(options, std::nullopt, std::nullopt, run);
  read_model(job, root, run, result);
  read_parallelism(job, run, result);
  read_pipeline(job, run, result);
  read_recompute(job, run, result);

  const std::string param = job.text("training", "mixed_precision_param").value_or("bfloat16");
  if (param == "float32" && run.precision != "fp8") {
    result.warnings.push_back(
        "[training] mixed_precision_param 'float32': PerFlow does not model fp32 training; "
        "simulated in bf16");
  }
  if (job.flag("training", "enable_cpu_offload")) {
    result.warnings.push_back(
        "[training] enable_cpu_offload: FSDP's CPU offload is not modelled; set /costs/offload "
        "by hand");
  }
  if (job.flag("compile", "enable")) {
    result.warnings.push_back("[compile] enable: torch.compile's fused kernels are not modelled");
  }

  // Batches (job_config.py): local_batch_size per data-parallel rank, global_batch_size
  // (-1: local x data parallel) with gradient accumulation, and with a pipeline
  // microbatches of pipeline_parallel_microbatch_size.
  const std::uint32_t local =
      static_cast<std::uint32_t>(job.integer("training", "local_batch_size", 1).value_or(8));
  const std::int64_t global = job.integer("training", "global_batch_size", -1).value_or(-1);
  run.micro_batch =
      run.pipeline_parallel > 1
          ? static_cast<std::uint32_t>(
                job.integer("parallelism", "pipeline_parallel_microbatch_size", 1).value_or(1))
          : local;
  if (global == 0) {
    job.fail("training", "global_batch_size", "expected -1 or an integer >= 1",
             job.at("training", "global_batch_size"));
  }
  run.global_batch = global > 0 ? static_cast<std::uint32_t>(global) : local * run.data_parallel;
  if (local % run.micro_batch != 0) {
    job.fail(
        fmt::format("[training] local_batch_size {} is not a multiple of [parallelism] "
                    "pipeline_parallel_microbatch_size {}",
                    local, run.micro_batch));
  }
  detail::check_global_batch(run, "[training] global_batch_size, local_batch_size");

  result.config = detail::write_config(run, options.gpu);
  return result;
}

ImportResult import_torchtitan(const std::filesystem::path& job_file,
                               const ImportOptions& options) {
  std::ifstream in(job_file, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read the torchtitan job file '{}'", job_file.string()));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return import_torchtitan_text(text, job_file.string(), options);
}

}  // namespace perflow::study
