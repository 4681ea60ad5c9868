// `perflow import megatron`: a config from Megatron-LM's command-line flags. Flag names,
// defaults and derived values follow Megatron-LM's megatron/training/arguments.py,
// argument_utils.py, config/training_config.py and vocab_utils.py (NVIDIA/Megatron-LM,
// 2026-08), read there and restated here, not copied.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "detail/imported_run.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/option_error.hpp"
#include "perflow/study/launch_import.hpp"

namespace perflow::study {
namespace {

enum class Arity : std::uint8_t { None, One, Many };
/// Used: read below. Ignored: no bearing on step time (learning rate, data, logging).
/// Lacking: changes step time in a way PerFlow does not model; named in a warning.
enum class Role : std::uint8_t { Used, Ignored, Lacking };

struct Flag {
  std::string_view name;
  Arity arity;
  Role role;
  std::string_view why = {};  // Lacking: what PerFlow does not model
};

constexpr Flag used(std::string_view name, Arity arity = Arity::One) {
  return {name, arity, Role::Used};
}
constexpr Flag ignored(std::string_view name, Arity arity = Arity::One) {
  return {name, arity, Role::Ignored};
}
constexpr Flag lacking(std::string_view name, Arity arity, std::string_view why) {
  return {name, arity, Role::Lacking, why};
}

constexpr Arity kSwitch = Arity::None;
constexpr Arity kList = Arity::Many;

// clang-format off
constexpr Flag kFlags[] = {
    // Model shape.
    used("--num-layers"), used("--hidden-size"), used("--ffn-hidden-size"),
    used("--num-attention-heads"), used("--group-query-attention", kSwitch),
    used("--num-query-groups"), used("--kv-channels"), used("--seq-length"),
    used("--multi-latent-attention", kSwitch), used("--q-lora-rank"), used("--kv-lora-rank"),
    used("--qk-head-dim"), used("--qk-pos-emb-head-dim"), used("--v-head-dim"),
    used("--swiglu", kSwitch), used("--untie-embeddings-and-output-weights", kSwitch),
    used("--padded-vocab-size"), used("--vocab-size"), used("--make-vocab-size-divisible-by"),
    used("--tokenizer-type"), used("--vocab-file"), used("--merge-file"),
    used("--attention-backend"), used("--use-flash-attn", kSwitch),
    used("--window-size"), used("--window-attn-skip-freq"), used("--softmax-type"),
    // Hybrid (Mamba) models.
    used("--mtp-num-layers"),
    used("--hybrid-override-pattern"), used("--hybrid-layer-pattern"),
    used("--mtp-hybrid-override-pattern"),
    used("--mamba-state-dim"), used("--mamba-head-dim"), used("--mamba-num-groups"),
    used("--mamba-num-heads"),
    lacking("--hybrid-attention-ratio", Arity::One,
            "the layers' kinds by ratio: give --hybrid-override-pattern"),
    lacking("--hybrid-mlp-ratio", Arity::One,
            "the layers' kinds by ratio: give --hybrid-override-pattern"),
    // Mixture of experts.
    used("--num-experts"), used("--moe-router-topk"), used("--moe-ffn-hidden-size"),
    used("--moe-shared-expert-intermediate-size"), used("--moe-layer-freq"),
    used("--moe-expert-capacity-factor"), used("--expert-model-parallel-size"),
    used("--expert-tensor-parallel-size"), used("--moe-token-dispatcher-type"),
    used("--moe-flex-dispatcher-backend"), used("--moe-enable-deepep", kSwitch),
    used("--moe-router-num-groups"), used("--moe-router-group-topk"),
    used("--overlap-moe-expert-parallel-comm", kSwitch),
    // Parallelism.
    used("--tensor-model-parallel-size"), used("--pipeline-model-parallel-size"),
    used("--num-layers-per-virtual-pipeline-stage"),
    used("--num-virtual-stages-per-pipeline-rank"),
    used("--microbatch-group-size-per-virtual-pipeline-stage"),
    used("--decoder-first-pipeline-num-layers"), used("--decoder-last-pipeline-num-layers"),
    used("--account-for-embedding-in-pipeline-split", kSwitch),
    used("--account-for-loss-in-pipeline-split", kSwitch),
    used("--sequence-parallel", kSwitch), used("--context-parallel-size"),
    used("--num-distributed-optimizer-instances"),
    // Batch, precision, recomputation, optimizer, overlap.
    used("--micro-batch-size"), used("--global-batch-size"),
    used("--bf16", kSwitch), used("--fp16", kSwitch), used("--fp8-format"), used("--fp8-recipe"),
    used("--fp4-format"), used("--fp4-recipe"),
    used("--first-last-layers-bf16", kSwitch), used("--num-layers-at-start-in-bf16"),
    used("--num-layers-at-end-in-bf16"),
    used("--recompute-granularity"), used("--recompute-method"), used("--recompute-num-layers"),
    used("--recompute-activations", kSwitch), used("--recompute-modules", kList),
    used("--checkpoint-activations", kSwitch), used("--activations-checkpoint-method"),
    used("--use-distributed-optimizer", kSwitch), used("--overlap-grad-reduce", kSwitch),
    used("--overlap-param-gather", kSwitch), used("--ddp-bucket-size"),
    used("--accumulate-allreduce-grads-in-fp32", kSwitch), used("--grad-reduce-in-bf16", kSwitch),
    // torchrun's, when the whole launch line is pasted.
    used("--nproc_per_node"), used("--nproc-per-node"), used("--nnodes"),
    ignored("--node_rank"), ignored("--node-rank"), ignored("--master_addr"),
    ignored("--master-addr"), ignored("--master_port"), ignored("--master-port"),
    ignored("--rdzv_backend"), ignored("--rdzv-backend"), ignored("--rdzv_endpoint"),
    ignored("--rdzv-endpoint"), ignored("--rdzv_id"), ignored("--rdzv-id"),
    ignored("--standalone", kSwitch),

    lacking("--rampup-batch-size", kList,
            "a batch-size ramp: the config simulates the full --global-batch-size"),
    lacking("--step-batch-size-schedule", Arity::One,
            "a batch-size schedule: the config simulates the full --global-batch-size"),
    lacking("--tp-comm-overlap", kSwitch,
            "PerFlow does not overlap tensor-parallel communication with the GEMMs"),
    lacking("--align-param-gather", kSwitch,
            "the schedule issues the first parameter all-gather; PerFlow issues them back to back "
            "at the iteration's start"),
    used("--use-torch-fsdp2", kSwitch),
    used("--use-megatron-fsdp", kSwitch),
    used("--data-parallel-sharding-strategy", Arity::One),
    used("--cp-comm-type", kList),
    lacking("--hierarchical-context-parallel-sizes", kList,
            "PerFlow's context parallelism is one group (a2a+p2p is simulated as p2p)"),
    lacking("--distribute-saved-activations", kSwitch,
            "recomputation inputs are modelled whole on each tensor-parallel rank"),
    lacking("--pipeline-model-parallel-layout", Arity::One,
            "a custom layout: set /pipeline/layers by hand"),
    lacking("--no-overlap-p2p-communication", kSwitch,
            "pipeline transfers are modelled as overlapping compute (/network/p2p_mode async)"),
    lacking("--overlap-p2p-communication-warmup-flush", kSwitch,
            "pipeline transfers are modelled as overlapping compute"),
    lacking("--defer-embedding-wgrad-compute", kSwitch,
            "the embedding's weight gradient is not deferred"),
    lacking("--delay-wgrad-compute", kSwitch, "weight gradients are not delayed"),
    lacking("--cpu-offloading", kSwitch,
            "activation offloading: set /costs/offload by hand"),
    lacking("--cpu-offloading-num-layers", Arity::One,
            "activation offloading: set /costs/offload by hand"),
    lacking("--optimizer-cpu-offload", kSwitch,
            "optimizer offloading: set /costs/offload/optimizer by hand"),
    lacking("--moe-shared-expert-overlap", kSwitch,
            "the shared experts are not overlapped with the all-to-alls"),
    used("--cuda-graph-impl"), used("--enable-cuda-graph", kSwitch),
    used("--external-cuda-graph", kSwitch),
    lacking("--tensor-parallel-num-weight-shards", Arity::One,
            "PerFlow has no weight-sharded tensor parallelism"),

    // Learning rate, optimizer hyperparameters, initialization, regularization.
    ignored("--lr"), ignored("--min-lr"), ignored("--lr-decay-style"),
    ignored("--lr-decay-iters"), ignored("--lr-decay-samples"), ignored("--lr-warmup-fraction"),
    ignored("--lr-warmup-iters"), ignored("--lr-warmup-samples"), ignored("--lr-warmup-init"),
    ignored("--lr-wsd-decay-style"), ignored("--lr-wsd-decay-iters"),
    ignored("--lr-wsd-decay-samples"), ignored("--decoupled-lr"), ignored("--decoupled-min-lr"),
    ignored("--weight-decay"), ignored("--start-weight-decay"), ignored("--end-weight-decay"),
    ignored("--weight-decay-incr-style"), ignored("--clip-grad"), ignored("--adam-beta1"),
    ignored("--adam-beta2"), ignored("--adam-eps"), ignored("--sgd-momentum"),
    ignored("--optimizer"), ignored("--loss-scale"), ignored("--initial-loss-scale"),
    ignored("--min-loss-scale"), ignored("--loss-scale-window"), ignored("--hysteresis"),
    ignored("--init-method-std"), ignored("--init-method-xavier-uniform", kSwitch),
    ignored("--attention-dropout"), used("--hidden-dropout"), ignored("--seed"),
    ignored("--train-iters"), ignored("--train-samples"), ignored("--exit-interval"),
    ignored("--exit-duration-in-mins"), ignored("--exit-signal-handler", kSwitch),
    // Shape details PerFlow's cost model does not distinguish.
    ignored("--max-position-embeddings"), ignored("--position-embedding-type"),
    ignored("--rotary-base"), ignored("--rotary-percent"),
    ignored("--rotary-seq-len-interpolation-factor"), ignored("--use-rope-scaling", kSwitch),
    ignored("--use-rotary-position-embeddings", kSwitch), ignored("--normalization"),
    ignored("--norm-epsilon"), ignored("--apply-layernorm-1p", kSwitch),
    ignored("--disable-bias-linear", kSwitch), ignored("--add-bias-linear", kSwitch),
    ignored("--add-qkv-bias", kSwitch), ignored("--qk-layernorm", kSwitch),
    ignored("--attention-softmax-in-fp32", kSwitch), ignored("--use-mcore-models", kSwitch),
    ignored("--use-legacy-models", kSwitch), ignored("--transformer-impl"),
    ignored("--spec", kList), ignored("--no-masked-softmax-fusion", kSwitch),
    ignored("--no-bias-gelu-fusion", kSwitch), ignored("--no-bias-swiglu-fusion", kSwitch),
    ignored("--no-bias-dropout-fusion", kSwitch), ignored("--no-rope-fusion", kSwitch),
    ignored("--no-gradient-accumulation-fusion", kSwitch),
    ignored("--no-persist-layer-norm", kSwitch), ignored("--cross-entropy-loss-fusion", kSwitch),
    ignored("--cross-entropy-fusion-impl"), ignored("--calculate-per-token-loss", kSwitch),
    ignored("--fp8-amax-history-len"),
    ignored("--fp8-amax-compute-algo"), ignored("--fp8-param-gather", kSwitch),
    ignored("--fp8-margin"), ignored("--DDP-impl"),
    ignored("--moe-grouped-gemm", kSwitch), ignored("--moe-router-load-balancing-type"),
    ignored("--moe-aux-loss-coeff"), ignored("--moe-z-loss-coeff"),
    ignored("--moe-router-pre-softmax", kSwitch), ignored("--moe-router-score-function"),
    ignored("--moe-router-dtype"), ignored("--moe-permute-fusion", kSwitch),
    ignored("--moe-input-jitter-eps"), ignored("--moe-token-drop-policy"),
    ignored("--moe-pad-expert-input-to-capacity", kSwitch),
    ignored("--moe-router-enable-expert-bias", kSwitch), ignored("--moe-router-bias-update-rate"),
    ignored("--moe-router-topk-scaling-factor"), ignored("--moe-router-fusion", kSwitch),
    // Data, tokenizer files, checkpoints, logging, evaluation.
    ignored("--data-path", kList), ignored("--train-data-path", kList),
    ignored("--valid-data-path", kList), ignored("--test-data-path", kList),
    ignored("--data-cache-path"), ignored("--mock-data", kSwitch), ignored("--split"),
    ignored("--tokenizer-model"), ignored("--tiktoken-pattern"), ignored("--num-workers"),
    ignored("--no-mmap-bin-files", kSwitch),
    ignored("--no-create-attention-mask-in-dataloader", kSwitch), ignored("--dataloader-type"),
    ignored("--eod-mask-loss", kSwitch), ignored("--reset-position-ids", kSwitch),
    ignored("--reset-attention-mask", kSwitch), ignored("--save"), ignored("--load"),
    ignored("--save-interval"), ignored("--ckpt-format"), ignored("--auto-detect-ckpt-format", kSwitch),
    ignored("--use-dist-ckpt", kSwitch), ignored("--no-load-optim", kSwitch),
    ignored("--no-load-rng", kSwitch), ignored("--no-save-optim", kSwitch),
    ignored("--no-save-rng", kSwitch), ignored("--finetune", kSwitch),
    ignored("--use-checkpoint-args", kSwitch), ignored("--async-save", kSwitch),
    ignored("--ckpt-fully-parallel-load", kSwitch), ignored("--dist-ckpt-strictness"),
    ignored("--eval-interval"), ignored("--eval-iters"), ignored("--log-interval"),
    ignored("--tensorboard-dir"), ignored("--tensorboard-log-interval"),
    ignored("--wandb-project"), ignored("--wandb-exp-name"), ignored("--wandb-save-dir"),
    ignored("--log-throughput", kSwitch), ignored("--log-timers-to-tensorboard", kSwitch),
    ignored("--log-validation-ppl-to-tensorboard", kSwitch),
    ignored("--log-memory-to-tensorboard", kSwitch), ignored("--log-params-norm", kSwitch),
    ignored("--log-num-zeros-in-grad", kSwitch), ignored("--log-progress", kSwitch),
    ignored("--timing-log-level"), ignored("--distributed-backend"),
    ignored("--distributed-timeout-minutes"), ignored("--local-rank"),
    ignored("--manual-gc", kSwitch), ignored("--manual-gc-interval"),
    ignored("--empty-unused-memory-level"), ignored("--check-for-nan-in-loss-and-grad", kSwitch),
    ignored("--no-check-for-nan-in-loss-and-grad", kSwitch),
    ignored("--deterministic-mode", kSwitch), ignored("--rerun-mode"),
    ignored("--profile", kSwitch), ignored("--profile-step-start"),
    ignored("--profile-step-end"), ignored("--profile-ranks", kList),
    ignored("--use-pytorch-profiler", kSwitch), ignored("--record-memory-history", kSwitch),
};
// clang-format on

const Flag* find_flag(std::string_view name) {
  for (const Flag& flag : kFlags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

/// The flags as argparse would hold them: the last value of each (flags repeat to override).
class Flags {
 public:
  explicit Flags(std::string_view source) : source_(source) {}

  void set(std::string_view name, std::string value) { values_[std::string(name)] = value; }
  [[nodiscard]] bool has(std::string_view name) const {
    return values_.find(std::string(name)) != values_.end();
  }
  [[nodiscard]] std::optional<std::string> get(std::string_view name) const {
    const auto it = values_.find(std::string(name));
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }

  /// An integer flag, at least `min`; nullopt when absent.
  [[nodiscard]] std::optional<std::uint32_t> integer(std::string_view name,
                                                     std::uint32_t min = 1) const {
    const std::optional<std::string> text = get(name);
    if (!text) return std::nullopt;
    std::uint64_t value = 0;
    const char* end = text->data() + text->size();
    const auto [ptr, ec] = std::from_chars(text->data(), end, value);
    if (ec != std::errc() || ptr != end || text->empty() || value < min || value > 0x7fffffffu) {
      fail(name, fmt::format("expected an integer >= {}, got '{}'", min, *text));
    }
    return static_cast<std::uint32_t>(value);
  }
  [[nodiscard]] std::uint32_t required(std::string_view name) const {
    if (!has(name)) {
      throw Error(
          fmt::format("{}the Megatron-LM flags do not give {}, which Megatron-LM "
                      "requires",
                      prefix(), name));
    }
    return *integer(name);
  }
  [[nodiscard]] double number(std::string_view name) const {
    const std::string text = *get(name);
    double value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || text.empty() || !(value > 0)) {
      fail(name, fmt::format("expected a positive number, got '{}'", text));
    }
    return value;
  }
  /// A flag whose value is a probability in [0, 1] (a dropout rate).
  [[nodiscard]] double probability(std::string_view name) const {
    const std::string text = *get(name);
    double value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || text.empty() || !(value >= 0 && value <= 1)) {
      fail(name, fmt::format("expected a number in [0, 1], got '{}'", text));
    }
    return value;
  }
  /// A flag whose value is one of `choices`.
  [[nodiscard]] std::optional<std::string> choice(
      std::string_view name, std::initializer_list<std::string_view> choices) const {
    const std::optional<std::string> text = get(name);
    if (!text) return std::nullopt;
    if (std::find(choices.begin(), choices.end(), *text) == choices.end()) {
      fail(name, fmt::format("expected one of {}, got '{}'", fmt::join(choices, ", "), *text));
    }
    return text;
  }

  [[noreturn]] void fail(std::string_view name, const std::string& message) const {
    throw Error(fmt::format("{}Megatron-LM flag {}: {}", prefix(), name, message));
  }
  [[nodiscard]] std::string prefix() const {
    return source_.empty() ? std::string() : std::string(source_) + ": ";
  }

 private:
  std::string_view source_;
  std::map<std::string, std::string> values_;
};

/// Whether a word is a flag's value rather than the next flag (values may be negative).
bool is_value(std::string_view word) { return !word.starts_with("--"); }

/// Reads the flags into `flags`; what is not a known flag goes to `unknown`, flags PerFlow
/// does not model to `warnings`.
void scan(std::span<const std::string> args, Flags& flags, ImportResult& result) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (!word.starts_with("--")) {
      // The launcher and the training script of a pasted launch line.
      if (word == "torchrun" || word == "python" || word == "python3" || word == "-m" ||
          word == "torch.distributed.run" || word.ends_with(".py")) {
        continue;
      }
      result.unknown.push_back(word);
      continue;
    }
    const std::size_t eq = word.find('=');
    const std::string_view name = std::string_view(word).substr(0, eq);
    std::optional<std::string> inline_value;
    if (eq != std::string::npos) inline_value = word.substr(eq + 1);
    const Flag* flag = find_flag(name);
    std::vector<std::string> values;
    if (inline_value) values.push_back(*inline_value);
    const Arity arity = flag != nullptr ? flag->arity : Arity::Many;
    if (arity == Arity::None) {
      if (inline_value) flags.fail(name, fmt::format("takes no value, got '{}'", word));
    } else if (!inline_value) {
      while (i + 1 < args.size() && is_value(args[i + 1])) {
        values.push_back(args[++i]);
        if (arity == Arity::One) break;
      }
      if (values.empty() && flag != nullptr) flags.fail(name, "expected a value, got none");
    }
    const std::string value = fmt::format("{}", fmt::join(values, " "));
    // As a shell would take it back: a value with a space quoted.
    const bool quote = values.size() == 1 && value.find(' ') != std::string::npos;
    const std::string as_written = inline_value || values.empty() ? word
                                   : quote ? fmt::format("{} '{}'", name, value)
                                           : fmt::format("{} {}", name, value);
    if (flag == nullptr) {
      result.unknown.push_back(as_written);
      continue;
    }
    if (flag->role == Role::Lacking) {
      result.warnings.push_back(fmt::format("{}: {}", as_written, flag->why));
    }
    flags.set(name, value);
  }
}

/// Megatron-LM's per-layer frequency flags (moe_freq_type): an integer N, which `every`
/// turns into layer l's flag, or a Python list expression of 0 and 1 per layer, such as
/// "([0]*3+[1]*58)" (--moe-layer-freq: 1 a MoE layer; --window-attn-skip-freq: 1 a windowed
/// one).
std::vector<bool> layer_flags(const Flags& flags, std::string_view name, std::uint32_t layers,
                              bool (*every)(std::uint32_t l, std::uint32_t n)) {
  const std::string text = *flags.get(name);
  std::string compact;
  for (char c : text) {
    if (c != ' ' && c != '(' && c != ')') compact += c;
  }
  std::vector<bool> values;
  const auto bad = [&] {
    flags.fail(name,
               fmt::format("expected an integer or a list such as ([0]*3+[1]*58), got '{}'", text));
  };
  if (compact.empty()) bad();
  if (compact.front() != '[') {
    std::uint32_t n = 0;
    const auto [ptr, ec] = std::from_chars(compact.data(), compact.data() + compact.size(), n);
    if (ec != std::errc() || ptr != compact.data() + compact.size() || n == 0) bad();
    for (std::uint32_t l = 0; l < layers; ++l) values.push_back(every(l, n));
    return values;
  }
  std::size_t at = 0;
  while (at < compact.size()) {
    if (compact[at] != '[') bad();
    const std::size_t close = compact.find(']', at);
    if (close == std::string::npos) bad();
    std::vector<bool> items;
    for (std::size_t k = at + 1; k < close; ++k) {
      if (compact[k] == ',') continue;
      if (compact[k] != '0' && compact[k] != '1') bad();
      items.push_back(compact[k] == '1');
    }
    std::uint32_t repeat = 1;
    at = close + 1;
    if (at < compact.size() && compact[at] == '*') {
      const char* begin = compact.data() + at + 1;
      const auto [ptr, ec] = std::from_chars(begin, compact.data() + compact.size(), repeat);
      if (ec != std::errc() || ptr == begin) bad();
      at = static_cast<std::size_t>(ptr - compact.data());
    }
    if (values.size() + std::uint64_t{repeat} * items.size() > layers) {
      flags.fail(name, fmt::format("the list has more entries than --num-layers {}", layers));
    }
    for (std::uint32_t r = 0; r < repeat; ++r)
      values.insert(values.end(), items.begin(), items.end());
    if (at < compact.size()) {
      if (compact[at] != '+') bad();
      ++at;
    }
  }
  if (values.size() != layers) {
    flags.fail(name,
               fmt::format("the list has {} entries for --num-layers {}", values.size(), layers));
  }
  return values;
}

/// A hybrid model's pattern (--hybrid-override-pattern, newer Megatron-LM's
/// --hybrid-layer-pattern), which gives the layers, and its Mamba mixers' shape.
void read_hybrid(const Flags& flags, model::Transformer& m, ImportResult& result) {
  const char* const pattern_flag =
      flags.has("--hybrid-layer-pattern") ? "--hybrid-layer-pattern" : "--hybrid-override-pattern";
  const std::optional<std::string> pattern = flags.get(pattern_flag);
  if (!pattern) return;
  // Megatron-Core's unified pattern (hybrid_layer_allocation.py): the decoder's layers,
  // '|' between pipeline stages, then one multi-token prediction module's layers after each
  // '/'.
  const auto layer_symbol = [&](char c) {
    if (c == 'M' || c == '*' || c == '-' || c == 'E') return true;
    flags.fail(pattern_flag,
               fmt::format("expected M, *, - or E per layer, got '{}' in '{}'", c, *pattern));
  };
  const std::size_t slash = pattern->find('/');
  std::string layers;
  for (const char c : pattern->substr(0, slash)) {
    if (c != '|' && layer_symbol(c)) layers += c;  // '|': a pipeline stage's end
  }
  if (pattern->find('|') != std::string::npos) {
    result.warnings.push_back(
        fmt::format("{}: the stage boundaries (|) are left out; set /pipeline/layers to place them",
                    pattern_flag));
  }
  if (slash != std::string::npos) {
    std::uint32_t modules = 0;
    for (std::size_t from = slash + 1;; ++modules) {
      const std::size_t next = pattern->find('/', from);
      const std::string module =
          pattern->substr(from, next == std::string::npos ? next : next - from);
      for (const char c : module) layer_symbol(c);
      if (module.empty() || (modules > 0 && module != m.mtp_pattern)) {
        flags.fail(pattern_flag,
                   fmt::format("every multi-token prediction module after '/' has the same, "
                               "non-empty layers, got '{}'",
                               *pattern));
      }
      m.mtp_pattern = module;
      if (next == std::string::npos) break;
      from = next + 1;
    }
    m.mtp_layers = modules + 1;
  }
  if (layers.empty()) flags.fail(pattern_flag, "no layer in the pattern");
  if (flags.has("--num-layers") && m.layers != layers.size()) {
    flags.fail("--num-layers",
               fmt::format("{} layers, but {} gives {}", m.layers, pattern_flag, layers.size()));
  }
  m.layers = static_cast<std::uint32_t>(layers.size());
  m.layer_pattern = layers;
  if (!m.has_mamba()) return;
  // HybridConfig's defaults where a flag is not given; the heads from expand 2
  // (mamba_mixer.py).
  m.mamba = model::Mamba{.state_dim = flags.integer("--mamba-state-dim").value_or(0),
                         .head_dim = flags.integer("--mamba-head-dim").value_or(0),
                         .heads = flags.integer("--mamba-num-heads").value_or(0),
                         .groups = flags.integer("--mamba-num-groups").value_or(0)}
                .with_defaults(m.hidden);
  if (m.mamba.heads == 0 || m.mamba.heads % m.mamba.groups != 0) {
    flags.fail("--mamba-num-groups",
               fmt::format("{} groups do not split {} Mamba heads", m.mamba.groups, m.mamba.heads));
  }
}

/// Megatron-LM's sliding window (--window-size "(left,right)" in Transformer Engine's
/// convention: a query sees `left` keys before it and its own), the layers it applies to
/// (--window-attn-skip-freq: N, every Nth layer full, counting from 1, or a list of 1
/// windowed and 0 full) and the learnable softmax offset (--softmax-type learnable,
/// gpt-oss's sinks).
void read_windows(const Flags& flags, model::Transformer& m) {
  if (auto window = flags.get("--window-size")) {
    std::string compact;
    for (char c : *window) {
      if (c != ' ' && c != '(' && c != ')') compact += c;
    }
    std::uint32_t left = 0, right = 0;
    const char* end = compact.data() + compact.size();
    std::from_chars_result read = std::from_chars(compact.data(), end, left);
    if (read.ec == std::errc() && read.ptr != end && *read.ptr == ',') {
      read = std::from_chars(read.ptr + 1, end, right);
    }
    if (read.ec != std::errc() || read.ptr != end || compact.empty()) {
      flags.fail("--window-size",
                 fmt::format("expected (left, right) such as (128, 0), got '{}'", *window));
    }
    if (right != 0) {
      flags.fail("--window-size",
                 fmt::format("a decoder's window looks at no later token; right is {}", right));
    }
    m.sliding_window = left + 1;
  }
  if (flags.has("--window-attn-skip-freq")) {
    if (m.sliding_window == 0) {
      flags.fail("--window-attn-skip-freq",
                 "says which layers are windowed, but there is no --window-size");
    }
    // transformer_config.py: layer number l + 1 is full when it is a multiple of N.
    const std::vector<bool> windowed =
        layer_flags(flags, "--window-attn-skip-freq", m.layers,
                    [](std::uint32_t l, std::uint32_t n) { return (l + 1) % n != 0; });
    std::string pattern;
    for (const bool w : windowed) pattern += w ? 'W' : 'F';
    // The shortest period that repeats to the whole pattern.
    for (std::size_t period = 1; period <= pattern.size(); ++period) {
      if (pattern.size() % period != 0) continue;
      bool repeats = true;
      for (std::size_t k = period; k < pattern.size() && repeats; ++k) {
        repeats = pattern[k] == pattern[k % period];
      }
      if (repeats) {
        pattern.resize(period);
        break;
      }
    }
    if (pattern != "W") m.window_pattern = pattern;
  }
  if (auto softmax = flags.get("--softmax-type")) {
    if (*softmax != "vanilla" && *softmax != "learnable" && *softmax != "off-by-one") {
      flags.fail("--softmax-type",
                 fmt::format("expected vanilla, learnable or off-by-one, got '{}'", *softmax));
    }
    m.attention_sinks = *softmax == "learnable";
  }
}

void read_moe(const Flags& flags, model::Transformer& m, detail::ImportedRun& run,
              ImportResult& result) {
  const std::uint32_t experts = flags.integer("--num-experts", 0).value_or(0);
  if (experts == 0) return;
  m.experts = experts;
  m.top_k = flags.integer("--moe-router-topk").value_or(2);
  if (m.top_k > experts) {
    flags.fail(
        "--moe-router-topk",
        fmt::format("{} routed experts per token, more than --num-experts {}", m.top_k, experts));
  }
  // argparse default: the dense MLP's size (arguments.py, "moe_ffn_hidden_size is not set").
  m.expert_ffn_hidden = flags.integer("--moe-ffn-hidden-size").value_or(m.ffn_hidden);
  if (auto shared = flags.integer("--moe-shared-expert-intermediate-size")) {
    // Megatron-LM gives the shared experts' total inner size; PerFlow counts experts.
    m.shared_experts =
        std::max<std::uint32_t>(1, (*shared + m.expert_ffn_hidden / 2) / m.expert_ffn_hidden);
    if (*shared % m.expert_ffn_hidden != 0) {
      result.warnings.push_back(fmt::format(
          "--moe-shared-expert-intermediate-size {}: not a multiple of the expert size {}; "
          "modelled as {} shared expert(s)",
          *shared, m.expert_ffn_hidden, m.shared_experts));
    }
  }
  if (m.is_hybrid()) {
    if (flags.has("--moe-layer-freq")) {
      result.warnings.push_back("--moe-layer-freq: the hybrid pattern's E layers are the MoE ones");
    }
  } else if (flags.has("--moe-layer-freq")) {
    // arguments.py: an integer N makes every Nth layer, from the first, a MoE one.
    const std::vector<bool> moe =
        layer_flags(flags, "--moe-layer-freq", m.layers,
                    [](std::uint32_t l, std::uint32_t n) { return l % n == 0; });
    const auto first = std::find(moe.begin(), moe.end(), true);
    const auto dense_after = std::find(first, moe.end(), false);
    const std::uint32_t moe_count =
        static_cast<std::uint32_t>(std::count(moe.begin(), moe.end(), true));
    m.first_dense_layers = m.layers - moe_count;
    if (dense_after != moe.end()) {
      result.warnings.push_back(fmt::format(
          "--moe-layer-freq {}: PerFlow's MoE layers are the last ones; modelled as {} dense "
          "layers then {} MoE layers",
          *flags.get("--moe-layer-freq"), m.first_dense_layers, moe_count));
    }
  }
  if (flags.has("--moe-expert-capacity-factor")) {
    const double factor = flags.number("--moe-expert-capacity-factor");
    if (factor >= 1) {
      m.capacity_factor = factor;
    } else {
      result.warnings.push_back(fmt::format(
          "--moe-expert-capacity-factor {}: below 1 tokens are dropped, which PerFlow does not "
          "model; routing is modelled as balanced",
          *flags.get("--moe-expert-capacity-factor")));
    }
  }
  if (auto groups = flags.integer("--moe-router-num-groups")) {
    m.expert_groups = *groups;
    const std::optional<std::uint32_t> top = flags.integer("--moe-router-group-topk");
    if (!top || *top == 0 || *top > *groups || experts % *groups != 0 ||
        std::uint64_t{*top} * (experts / *groups) < m.top_k) {
      flags.fail("--moe-router-num-groups",
                 fmt::format("{} groups of --num-experts {} need a --moe-router-group-topk that "
                             "picks 1 to {} groups holding at least --moe-router-topk {} experts",
                             *groups, experts, *groups, m.top_k));
    }
    m.group_top_k = *top;
  }
  // transformer_config.py: --moe-enable-deepep is the flex dispatcher with DeepEP.
  const std::optional<std::string> dispatcher = flags.get("--moe-token-dispatcher-type");
  if (flags.has("--moe-enable-deepep") ||
      (dispatcher == "flex" &&
       flags.get("--moe-flex-dispatcher-backend").value_or("deepep") != "ncclep")) {
    run.moe_dispatcher = "deepep";
    if (flags.get("--moe-flex-dispatcher-backend") == "hybridep") {
      result.warnings.push_back(
          "--moe-flex-dispatcher-backend hybridep: priced as DeepEP's kernels (the same "
          "traffic, once per rank and node)");
    }
  } else if (dispatcher == "flex") {
    result.warnings.push_back(
        "--moe-flex-dispatcher-backend ncclep: priced as the all-to-all dispatcher");
  } else if (dispatcher == "allgather") {
    result.warnings.push_back(
        "--moe-token-dispatcher-type allgather: expert-parallel traffic is modelled as "
        "all-to-alls");
  }
  run.moe_a2a_overlap = flags.has("--overlap-moe-expert-parallel-comm");
}

/// The vocabulary Megatron-LM builds: --padded-vocab-size as given, else the tokenizer's
/// size padded to a multiple of --make-vocab-size-divisible-by x tensor parallel
/// (vocab_utils.py, calculate_padded_vocab_size).
std::uint32_t vocabulary(const Flags& flags, const ImportOptions& options, std::uint32_t tp) {
  if (auto padded = flags.integer("--padded-vocab-size")) return *padded;
  std::optional<std::uint32_t> vocab = flags.integer("--vocab-size");
  if (!vocab) vocab = options.vocab;
  const std::optional<std::string> tokenizer = flags.get("--tokenizer-type");
  // The GPT-2 BPE tokenizer has 50257 tokens; scripts that name only its vocab and merge
  // files (examples/gpt3, the SC'21 scripts) use it.
  if (!vocab && (tokenizer == "GPT2BPETokenizer" ||
                 (!tokenizer && flags.has("--vocab-file") && flags.has("--merge-file")))) {
    vocab = 50257;
  }
  if (!vocab) {
    using P = OptionError;
    throw OptionError(
        "vocab",
        {P::text(fmt::format(
             "{}the Megatron-LM flags give no --padded-vocab-size or --vocab-size, and the "
             "tokenizer's size ({}) is in its files: give the tokenizer's vocabulary with ",
             flags.prefix(), tokenizer ? "--tokenizer-type " + *tokenizer : "no --tokenizer-type")),
         P::field("vocab")});
  }
  const std::uint64_t multiple =
      std::uint64_t{flags.integer("--make-vocab-size-divisible-by").value_or(128)} * tp;
  return static_cast<std::uint32_t>((*vocab + multiple - 1) / multiple * multiple);
}

// --cp-comm-type: one type for every layer, or a list of one per layer (the first stands
// for all); a2a+p2p (hierarchical) is simulated as p2p over the whole group.
void read_cp_comm(const Flags& flags, detail::ImportedRun& run, ImportResult& result) {
  const std::optional<std::string> types = flags.get("--cp-comm-type");
  if (!types) return;
  const std::string first = types->substr(0, types->find(' '));
  if (first != "p2p" && first != "all_gather" && first != "a2a" && first != "a2a+p2p") {
    flags.fail("--cp-comm-type",
               fmt::format("expected p2p, all_gather, a2a or a2a+p2p, got '{}'", first));
  }
  if (first.size() < types->size()) {
    result.warnings.push_back(fmt::format(
        "--cp-comm-type {}: one type a layer; PerFlow runs every layer's as the first's ({})",
        *types, first));
  }
  if (first == "a2a+p2p") {
    result.warnings.push_back("--cp-comm-type a2a+p2p: simulated as p2p over the whole group");
  }
  if (first != "p2p" && first != "a2a+p2p") run.cp_comm = first;
}

// Torch FSDP2 (--use-torch-fsdp2: ZeRO-3) and Megatron-FSDP (--use-megatron-fsdp with
// --data-parallel-sharding-strategy, default no_shard; arguments.py): optim_grads_params is
// ZeRO-3, optim the distributed optimizer's sharding; optim_grads (ZeRO-2, gradients
// sharded, parameters whole) is modelled as the distributed optimizer.
void read_fsdp(const Flags& flags, detail::ImportedRun& run, ImportResult& result) {
  const std::string strategy =
      flags
          .choice("--data-parallel-sharding-strategy",
                  {"no_shard", "optim", "optim_grads", "optim_grads_params"})
          .value_or("no_shard");
  if (flags.has("--use-torch-fsdp2")) {
    run.fsdp = "zero3";
    return;
  }
  if (!flags.has("--use-megatron-fsdp")) {
    if (flags.has("--data-parallel-sharding-strategy")) {
      result.warnings.push_back(fmt::format(
          "--data-parallel-sharding-strategy {}: Megatron-LM reads it with --use-megatron-fsdp "
          "only; ignored",
          strategy));
    }
    return;
  }
  if (strategy == "optim_grads_params") {
    run.fsdp = "zero3";
  } else if (strategy == "optim" || strategy == "optim_grads") {
    run.distributed_optimizer = true;
    if (strategy == "optim_grads") {
      result.warnings.push_back(
          "--data-parallel-sharding-strategy optim_grads: ZeRO-2's sharded gradients are "
          "modelled as the distributed optimizer's (gradients whole on each rank)");
    }
  }
}

void read_recompute(const Flags& flags, detail::ImportedRun& run, ImportResult& result) {
  if (flags.has("--checkpoint-activations") || flags.has("--activations-checkpoint-method")) {
    // Older Megatron-LM (the SC'21 scripts): full recomputation, checkpointing each layer.
    result.warnings.push_back(fmt::format(
        "{}: an older Megatron-LM flag, read as --recompute-granularity full "
        "--recompute-method uniform",
        flags.has("--activations-checkpoint-method")
            ? "--activations-checkpoint-method " + *flags.get("--activations-checkpoint-method")
            : std::string("--checkpoint-activations")));
    run.recompute = "full";
  }
  if (flags.has("--recompute-activations")) run.recompute = "selective";
  if (auto granularity = flags.choice("--recompute-granularity", {"full", "selective"})) {
    run.recompute = *granularity;
  }
  const std::optional<std::string> method =
      flags.choice("--recompute-method", {"uniform", "block"});
  const std::uint32_t count = flags.integer("--recompute-num-layers").value_or(1);
  if (run.recompute == "full" && method == "uniform" && count > 1) {
    result.warnings.push_back(fmt::format(
        "--recompute-method uniform --recompute-num-layers {}: checkpoints every {} layers; "
        "PerFlow's full recomputation keeps every layer's input",
        count, count));
  }
  if (run.recompute == "full" && method == "block") {
    result.warnings.push_back(fmt::format(
        "--recompute-method block --recompute-num-layers {}: only that many layers per stage "
        "are recomputed; PerFlow's full recomputation recomputes every layer",
        count));
  }
  // --recompute-modules (a list): mla_up_proj is modelled on its own; of the rest, PerFlow's
  // selective recomputation is the attention core (core_attn).
  if (run.recompute == "selective" && flags.has("--recompute-modules")) {
    std::string others;
    bool core_attention = false;
    const std::string modules = *flags.get("--recompute-modules");
    for (std::size_t at = 0; at < modules.size();) {
      const std::size_t end = std::min(modules.find(' ', at), modules.size());
      const std::string_view module = std::string_view(modules).substr(at, end - at);
      at = end + 1;
      if (module == "mla_up_proj") {
        run.recompute_mla_up_proj = flags.has("--multi-latent-attention");
      } else if (module == "core_attn") {
        core_attention = true;
      } else if (!module.empty()) {
        others += others.empty() ? std::string(module) : " " + std::string(module);
      }
    }
    // Without core_attn the attention core is not recomputed: PerFlow's selective is off.
    if (!core_attention) run.recompute = "none";
    if (!others.empty()) {
      result.warnings.push_back(fmt::format(
          "--recompute-modules {}: PerFlow recomputes the attention core (core_attn) and MLA's "
          "up projections (mla_up_proj) only",
          others));
    }
  }
}

/// Megatron-LM's layers per pipeline position (arguments.py; transformer_layer.py's
/// get_transformer_layer_offset): the same number in each, less one on the first and last
/// positions for the embedding and the loss when they are accounted for, or the first and
/// last stages' counts given. Empty when PerFlow's default ("even") split is the same.
std::vector<std::uint32_t> layer_split(const Flags& flags, const detail::ImportedRun& run) {
  const std::uint32_t layers = run.shape.layers;
  const std::uint32_t positions = run.pipeline_parallel * run.chunks;
  if (positions == 1) return {};
  const std::optional<std::uint32_t> first =
      flags.integer("--decoder-first-pipeline-num-layers", 0);
  const std::optional<std::uint32_t> last = flags.integer("--decoder-last-pipeline-num-layers", 0);
  if (first || last) {
    if (run.chunks > 1) {
      flags.fail(
          first ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers",
          "with virtual pipeline stages PerFlow cannot place uneven stages; set "
          "/pipeline/layers by hand");
    }
    const std::uint32_t p = run.pipeline_parallel;
    const std::uint32_t given = first.value_or(0) + last.value_or(0);
    const std::uint32_t middle = p - (first ? 1u : 0u) - (last ? 1u : 0u);
    if (given > layers || (middle == 0 ? given != layers : (layers - given) % middle != 0)) {
      flags.fail(
          first ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers",
          fmt::format("the other {} stages cannot share the remaining {} of {} layers "
                      "evenly",
                      middle, layers - std::min(given, layers), layers));
    }
    std::vector<std::uint32_t> split(p, middle == 0 ? 0 : (layers - given) / middle);
    if (first) split.front() = *first;
    if (last) split.back() = *last;
    return detail::unless_even(split);
  }
  const bool embedding = flags.has("--account-for-embedding-in-pipeline-split");
  const bool loss = flags.has("--account-for-loss-in-pipeline-split");
  const std::uint32_t units = layers + (embedding ? 1u : 0u) + (loss ? 1u : 0u);
  if (units % positions != 0) {
    flags.fail("--num-layers",
               fmt::format("{} layers{} do not split evenly over {} pipeline stage(s) x {} "
                           "chunk(s), as Megatron-LM requires",
                           layers, units != layers ? " with the embedding and loss" : "",
                           run.pipeline_parallel, run.chunks));
  }
  std::vector<std::uint32_t> split(positions, units / positions);
  if (embedding) split.front() -= 1;
  if (loss) split.back() -= 1;
  return detail::unless_even(split);
}

}  // namespace

ImportResult import_megatron(std::span<const std::string> args, const ImportOptions& options,
                             std::string_view source) {
  ImportResult result;
  Flags flags(source);
  scan(args, flags, result);

  detail::ImportedRun run;
  run.tool = "Megatron-LM flags";
  detail::require_gpus(options,
                       flags.integer("--nproc_per_node").has_value()
                           ? flags.integer("--nproc_per_node")
                           : flags.integer("--nproc-per-node"),
                       flags.integer("--nnodes"), run);

  // Parallelism first: the vocabulary's padding depends on tensor parallelism.
  run.tensor_parallel = flags.integer("--tensor-model-parallel-size").value_or(1);
  run.pipeline_parallel = flags.integer("--pipeline-model-parallel-size").value_or(1);
  run.context_parallel = flags.integer("--context-parallel-size").value_or(1);
  run.expert_parallel = flags.integer("--expert-model-parallel-size").value_or(1);
  read_cp_comm(flags, run, result);
  if (auto etp = flags.integer("--expert-tensor-parallel-size");
      etp && *etp != run.tensor_parallel) {
    result.warnings.push_back(
        fmt::format("--expert-tensor-parallel-size {}: PerFlow's experts use the model's tensor "
                    "parallelism ({})",
                    *etp, run.tensor_parallel));
  }
  if (auto instances = flags.integer("--num-distributed-optimizer-instances");
      instances && *instances > 1) {
    result.warnings.push_back(fmt::format(
        "--num-distributed-optimizer-instances {}: the optimizer state is modelled as sharded "
        "over all data-parallel ranks",
        *instances));
  }

  model::Transformer& m = run.shape;
  // A hybrid model's layers are its pattern's (read_hybrid).
  const bool hybrid = flags.has("--hybrid-override-pattern") || flags.has("--hybrid-layer-pattern");
  m.layers = hybrid ? flags.integer("--num-layers").value_or(0) : flags.required("--num-layers");
  m.hidden = flags.required("--hidden-size");
  m.heads = flags.required("--num-attention-heads");
  m.sequence = flags.required("--seq-length");
  m.mlp = flags.has("--swiglu") ? model::Mlp::SwiGlu : model::Mlp::Gelu;
  // arguments.py's default: 4h, or with SwiGLU 2/3 of it rounded down to a multiple of 64.
  m.ffn_hidden =
      flags.integer("--ffn-hidden-size")
          .value_or(m.mlp == model::Mlp::SwiGlu ? (8 * m.hidden / 3) / 64 * 64 : 4 * m.hidden);
  m.kv_heads = m.heads;
  if (flags.has("--group-query-attention")) {
    m.kv_heads = flags.integer("--num-query-groups").value_or(m.heads);
  } else if (flags.has("--num-query-groups")) {
    // argument_utils.py passes num_query_groups only with --group-query-attention.
    result.warnings.push_back(fmt::format(
        "--num-query-groups {}: Megatron-LM ignores it without --group-query-attention; "
        "modelled as multi-head attention",
        *flags.get("--num-query-groups")));
  }
  if (m.heads % m.kv_heads != 0) {
    flags.fail("--num-query-groups",
               fmt::format("{} groups do not divide {} attention heads", m.kv_heads, m.heads));
  }
  // arguments.py: --kv-channels defaults to hidden / heads; Qwen3 sets 128 where that
  // differs. Kept only where it differs, so a run that says what is implied reads as one that
  // does not.
  if (auto kv_channels = flags.integer("--kv-channels");
      kv_channels && std::uint64_t{*kv_channels} * m.heads != m.hidden) {
    m.kv_channels = *kv_channels;
  }
  // Multi-latent attention with arguments.py's defaults (--q-lora-rank None: Q straight from
  // h; --kv-lora-rank 32, --qk-head-dim 128, --qk-pos-emb-head-dim 64, --v-head-dim 128).
  if (flags.has("--multi-latent-attention")) {
    m.mla.q_lora_rank = flags.integer("--q-lora-rank").value_or(0);
    m.mla.kv_lora_rank = flags.integer("--kv-lora-rank").value_or(32);
    m.mla.qk_nope_head_dim = flags.integer("--qk-head-dim").value_or(128);
    m.mla.qk_rope_head_dim = flags.integer("--qk-pos-emb-head-dim", 0).value_or(64);
    m.mla.v_head_dim = flags.integer("--v-head-dim").value_or(128);
    m.kv_channels = 0;
  }
  m.tied_embeddings = !flags.has("--untie-embeddings-and-output-weights");
  // arguments.py's default is 0.1, as Transformer's.
  if (flags.has("--hidden-dropout")) m.hidden_dropout = flags.probability("--hidden-dropout");
  m.vocab = vocabulary(flags, options, run.tensor_parallel);
  read_hybrid(flags, m, result);
  read_windows(flags, m);
  // Multi-token prediction: Megatron-Core's MTP modules on the last pipeline stage. A
  // hybrid model's module layers come after '/' in its pattern, or from the deprecated
  // --mtp-hybrid-override-pattern (arguments.py joins the two).
  if (auto mtp = flags.integer("--mtp-num-layers", 0); mtp && *mtp > 0) {
    if (!m.is_hybrid()) {
      m.mtp_layers = *mtp;
    } else if (!m.mtp_pattern.empty()) {
      if (*mtp != m.mtp_layers) {
        result.warnings.push_back(fmt::format(
            "--mtp-num-layers {} conflicts with the {} module(s) in the hybrid pattern: {} "
            "used, as Megatron-LM does",
            *mtp, m.mtp_layers, m.mtp_layers));
      }
    } else if (auto legacy = flags.get("--mtp-hybrid-override-pattern")) {
      for (const char c : *legacy) {
        if (c != 'M' && c != '*' && c != '-' && c != 'E') {
          flags.fail("--mtp-hybrid-override-pattern",
                     fmt::format("expected M, *, - or E per layer, got '{}' in '{}'", c, *legacy));
        }
      }
      if (legacy->empty()) flags.fail("--mtp-hybrid-override-pattern", "no layer in the pattern");
      m.mtp_pattern = *legacy;
      m.mtp_layers = *mtp;
    } else {
      result.warnings.push_back(fmt::format(
          "--mtp-num-layers {}: the hybrid pattern gives no module layers (after '/'), so "
          "multi-token prediction is left out",
          *mtp));
    }
  }
  read_moe(flags, m, run, result);
  if (run.expert_parallel > 1 && m.experts % run.expert_parallel != 0) {
    flags.fail("--expert-model-parallel-size",
               fmt::format("{} does not divide --num-experts {}", run.expert_parallel, m.experts));
  }

  // Virtual pipeline stages (arguments.py): layers per stage over layers per virtual stage.
  if (auto per_virtual = flags.integer("--num-layers-per-virtual-pipeline-stage")) {
    const std::uint32_t units = m.layers +
                                (flags.has("--account-for-embedding-in-pipeline-split") ? 1u : 0u) +
                                (flags.has("--account-for-loss-in-pipeline-split") ? 1u : 0u);
    if (units % run.pipeline_parallel != 0 || (units / run.pipeline_parallel) % *per_virtual != 0) {
      flags.fail("--num-layers-per-virtual-pipeline-stage",
                 fmt::format("{} layers over {} pipeline stages are not whole virtual stages of "
                             "{} layers",
                             units, run.pipeline_parallel, *per_virtual));
    }
    run.chunks = units / run.pipeline_parallel / *per_virtual;
  } else if (auto virtual_stages = flags.integer("--num-virtual-stages-per-pipeline-rank")) {
    run.chunks = *virtual_stages;
  }
  if (run.chunks > 1) {
    run.microbatch_group_size = flags.integer("--microbatch-group-size-per-virtual-pipeline-stage");
    if (run.microbatch_group_size == run.pipeline_parallel) run.microbatch_group_size.reset();
  }
  run.layers = layer_split(flags, run);
  // arguments.py turns sequence parallelism off without tensor parallelism.
  run.sequence_parallel = flags.has("--sequence-parallel") && run.tensor_parallel > 1;
  // Each layer's passes as CUDA graphs: --enable-cuda-graph (Megatron-Core's local graphs),
  // --external-cuda-graph, or --cuda-graph-impl local|transformer_engine (not "none").
  run.cuda_graphs = flags.has("--enable-cuda-graph") || flags.has("--external-cuda-graph") ||
                    (flags.has("--cuda-graph-impl") && flags.get("--cuda-graph-impl") != "none");

  run.micro_batch = flags.required("--micro-batch-size");
  // --fp4-format (NVFP4, Megatron-Core's fp4_utils.py) or --fp8-format with its recipe:
  // delayed (the default), tensorwise (current scaling), blockwise, or mxfp8 (a precision of
  // its own here).
  if (flags.has("--fp4-format")) {
    (void)flags.choice("--fp4-format", {"e2m1"});
    if (flags.choice("--fp4-recipe", {"nvfp4", "custom"}).value_or("nvfp4") == "custom") {
      result.warnings.push_back("--fp4-recipe custom: simulated as NVFP4's recipe");
    }
    run.precision = "nvfp4";
  } else if (flags.has("--fp8-format")) {
    (void)flags.choice("--fp8-format", {"e4m3", "hybrid"});
    run.precision = "fp8";
    const std::string recipe =
        flags.choice("--fp8-recipe", {"delayed", "tensorwise", "blockwise", "mxfp8", "custom"})
            .value_or("delayed");
    if (recipe == "mxfp8") {
      run.precision = "mxfp8";
    } else if (recipe == "tensorwise") {
      run.fp8_recipe = "current";
    } else if (recipe == "blockwise") {
      run.fp8_recipe = "blockwise";
    } else if (recipe == "custom") {
      result.warnings.push_back("--fp8-recipe custom: simulated with delayed scaling");
    }
  } else if (flags.has("--bf16")) {
    run.precision = "bf16";
  } else if (flags.has("--fp16")) {
    run.precision = "fp16";
  } else {
    result.warnings.push_back(
        "no --bf16, --fp16 or --fp8-format: Megatron-LM trains in fp32, which PerFlow does "
        "not model; simulated in bf16");
  }
  // --first-last-layers-bf16 keeps the first and last layers (one each unless given) in bf16
  // in an fp8 or fp4 run; Megatron-LM refuses it with delayed scaling.
  if (flags.has("--first-last-layers-bf16") && run.precision != "bf16" && run.precision != "fp16") {
    if (run.precision == "fp8" && run.fp8_recipe.empty()) {
      flags.fail("--first-last-layers-bf16",
                 "Megatron-LM keeps no layer in bf16 with the delayed fp8 recipe");
    }
    run.bf16_layers_at_start = flags.integer("--num-layers-at-start-in-bf16", 0).value_or(1);
    run.bf16_layers_at_end = flags.integer("--num-layers-at-end-in-bf16", 0).value_or(1);
  }
  read_recompute(flags, run, result);
  run.distributed_optimizer = flags.has("--use-distributed-optimizer");
  read_fsdp(flags, run, result);
  // Megatron-LM's default is no overlap; PerFlow's is the overlap.
  run.overlap_grad_reduce = flags.has("--overlap-grad-reduce");
  run.overlap_param_gather = flags.has("--overlap-param-gather");
  if (run.overlap_param_gather && !(run.distributed_optimizer && run.overlap_grad_reduce)) {
    flags.fail("--overlap-param-gather",
               "Megatron-LM needs --use-distributed-optimizer and --overlap-grad-reduce with it");
  }
  if (!run.fsdp.empty() && run.overlap_param_gather) {
    // Megatron-FSDP reads the flag as its own prefetch; PerFlow's FSDP gathers each unit
    // one ahead anyway.
    run.overlap_param_gather = false;
    result.warnings.push_back(
        "--overlap-param-gather with FSDP: each unit's gather is prefetched one unit ahead; "
        "the distributed optimizer's gather is not written");
  }
  run.grad_bucket_size = flags.integer("--ddp-bucket-size");
  // arguments.py: --bf16 reduces in fp32 unless --grad-reduce-in-bf16; fp16 in fp16 unless
  // --accumulate-allreduce-grads-in-fp32.
  if (flags.has("--grad-reduce-in-bf16")) {
    run.grad_reduce_dtype = "bf16";
  } else if (flags.has("--accumulate-allreduce-grads-in-fp32") && run.precision == "fp16") {
    run.grad_reduce_dtype = "fp32";
  }
  // AttnBackend (megatron/core/transformer/enums.py): auto picks flash or cuDNN fused
  // attention, both of which keep no s x s scores; unfused and local do.
  const std::optional<std::string> backend =
      flags.choice("--attention-backend", {"flash", "fused", "unfused", "local", "auto"});
  run.flash_attention = !(backend == "unfused" || backend == "local");

  detail::derive_data_parallel(run,
                               "--tensor-model-parallel-size, --pipeline-model-parallel-size, "
                               "--context-parallel-size");
  if (run.expert_parallel > 1 && run.data_parallel % run.expert_parallel != 0) {
    flags.fail("--expert-model-parallel-size",
               fmt::format("{} does not divide the data-parallel size {}", run.expert_parallel,
                           run.data_parallel));
  }
  // arguments.py's default global batch: one microbatch per data-parallel rank.
  run.global_batch =
      flags.integer("--global-batch-size").value_or(run.micro_batch * run.data_parallel);
  detail::check_global_batch(run, "--global-batch-size, --micro-batch-size");

  result.config = detail::write_config(run, options.gpu);
  return result;
}

}  // namespace perflow::study
