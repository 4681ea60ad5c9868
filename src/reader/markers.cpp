// Marker presets (FORMATS.md section 1.5) as small hand-written parsers, so that a trace
// with millions of ranges is classified at string-compare speed; only a user pattern goes
// through std::regex, once per distinct name.
#include "perflow/reader/markers.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/did_you_mean.hpp"
#include "perflow/core/error.hpp"

namespace perflow::reader {

std::string_view to_string(MarkerKind kind) {
  static constexpr std::array<std::string_view, kMarkerKindCount> kNames = {"F", "B", "W", "BW"};
  return kNames[static_cast<std::size_t>(kind)];
}

namespace {

using Classify = std::function<std::optional<MarkerMatch>(std::string_view)>;

// A whole decimal number that fits 32 bits; nullopt for anything else (empty, sign, overflow).
std::optional<std::uint32_t> parse_id(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  std::uint32_t value = 0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::size_t digit_run(std::string_view text, std::size_t from) {
  std::size_t i = from;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  return i - from;
}

// The split-backward letters F / B / W (B the input gradient, W the weight gradient).
std::optional<MarkerKind> split_kind(char letter) {
  switch (letter) {
    case 'F':
      return MarkerKind::Forward;
    case 'B':
      return MarkerKind::Backward;
    case 'W':
      return MarkerKind::Weight;
    default:
      return std::nullopt;
  }
}

// `text` is exactly the forward name or the (full) backward name of a convention.
std::optional<MarkerMatch> forward_or_full_backward(std::string_view text, std::string_view forward,
                                                    std::string_view backward) {
  MarkerMatch match;
  if (text == forward) {
    match.kind = MarkerKind::Forward;
  } else if (text == backward) {
    match.kind = MarkerKind::FullBackward;
  } else {
    return std::nullopt;
  }
  return match;
}

// `PP:<stage><F|I|B|W><mb>` (torch.distributed.pipelining's _PipelineScheduleRuntime), and
// ScheduleGPipe's `Forward <mb>` / `Backward <mb>`.
std::optional<MarkerMatch> torch_pipelining(std::string_view name) {
  MarkerMatch match;
  if (name.starts_with("PP:")) {
    name.remove_prefix(3);
    const std::size_t stage_digits = digit_run(name, 0);
    if (stage_digits == 0 || stage_digits >= name.size()) return std::nullopt;
    switch (name[stage_digits]) {
      case 'F':
        match.kind = MarkerKind::Forward;
        break;
      case 'I':
        match.kind = MarkerKind::Backward;
        break;
      case 'W':
        match.kind = MarkerKind::Weight;
        break;
      case 'B':
        match.kind = MarkerKind::FullBackward;
        break;
      default:
        return std::nullopt;
    }
    match.stage = parse_id(name.substr(0, stage_digits));
    match.microbatch = parse_id(name.substr(stage_digits + 1));
    if (!match.stage || !match.microbatch) return std::nullopt;
    return match;
  }
  for (const auto& [prefix, kind] :
       {std::pair{std::string_view("Forward "), MarkerKind::Forward},
        std::pair{std::string_view("Backward "), MarkerKind::FullBackward}}) {
    if (name.starts_with(prefix)) {
      match.kind = kind;
      match.microbatch = parse_id(name.substr(prefix.size()));
      if (!match.microbatch) return std::nullopt;
      return match;
    }
  }
  return std::nullopt;
}

// The ZB runtime's NVTX `<F|B|W><mb>.<chunk>.<seq_split>`. Its B is the input gradient
// (W is separate). Sequence splits of one microbatch share the microbatch and chunk, so
// they are one task.
std::optional<MarkerMatch> zb_nvtx(std::string_view name) {
  if (name.empty()) return std::nullopt;
  const std::optional<MarkerKind> kind = split_kind(name[0]);
  if (!kind) return std::nullopt;
  MarkerMatch match;
  match.kind = *kind;
  std::array<std::optional<std::uint32_t>, 3> ids;
  std::size_t at = 1;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::size_t digits = digit_run(name, at);
    ids[i] = parse_id(name.substr(at, digits));
    if (!ids[i]) return std::nullopt;
    at += digits;
    if (i + 1 < ids.size()) {
      if (at >= name.size() || name[at] != '.') return std::nullopt;
      ++at;
    }
  }
  if (at != name.size()) return std::nullopt;
  match.microbatch = ids[0];
  match.chunk = ids[1];
  return match;
}

// DeepSeek's profile: `<part>(F|B|W)`, e.g. attn(F), mlp(W), dispatch(B); part is \w+.
std::optional<MarkerMatch> deepseek(std::string_view name) {
  if (name.size() < 4 || name.back() != ')' || name[name.size() - 3] != '(') return std::nullopt;
  const std::string_view part = name.substr(0, name.size() - 3);
  const bool word = std::all_of(part.begin(), part.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!word) return std::nullopt;
  const std::optional<MarkerKind> kind = split_kind(name[name.size() - 2]);
  if (!kind) return std::nullopt;
  MarkerMatch match;
  match.kind = *kind;
  match.part = std::string(part);
  return match;
}

// Megatron-LM with --pytorch-profiler-collect-callstack: python_function ranges
// `.../schedules.py(NNN): forward_step` and `...: backward_step`.
std::optional<MarkerMatch> megatron_callstack(std::string_view name) {
  static constexpr std::string_view kFile = "schedules.py(";
  const std::size_t at = name.rfind(kFile);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = name.substr(at + kFile.size());
  const std::size_t digits = digit_run(rest, 0);
  if (digits == 0) return std::nullopt;
  rest.remove_prefix(digits);
  return forward_or_full_backward(rest, "): forward_step", "): backward_step");
}

// The HTA / DDP examples' record_function ranges.
std::optional<MarkerMatch> ddp(std::string_view name) {
  return forward_or_full_backward(name, "## forward ##", "## backward ##");
}

// The PerFlow-AI prototype: names starting with forward_step / backward_step; its traces
// write `forward_step-<k>-<chunk>`, where k counts the steps of that kind and the last
// number is the model chunk (its test trace has chunks 0-4 in blocks of 16).
std::optional<MarkerMatch> perflow_ai(std::string_view name) {
  MarkerMatch match;
  if (name.starts_with("forward_step")) {
    match.kind = MarkerKind::Forward;
    name.remove_prefix(12);
  } else if (name.starts_with("backward_step")) {
    match.kind = MarkerKind::FullBackward;
    name.remove_prefix(13);
  } else {
    return std::nullopt;
  }
  // `-<k>-<chunk>`: the chunk is read only when the suffix has exactly this shape.
  if (name.size() >= 4 && name[0] == '-') {
    const std::size_t k_digits = digit_run(name, 1);
    const std::size_t dash = 1 + k_digits;
    if (k_digits > 0 && dash < name.size() && name[dash] == '-' &&
        digit_run(name, dash + 1) == name.size() - dash - 1) {
      match.chunk = parse_id(name.substr(dash + 1));
    }
  }
  return match;
}

struct PresetEntry {
  MarkerPreset info;
  std::optional<MarkerMatch> (*classify)(std::string_view);
};

const std::array<PresetEntry, 6>& preset_table() {
  static const std::array<PresetEntry, 6> kTable = {{
      {{"torch-pipelining",
        "torch.distributed.pipelining: PP:<stage><F|I|W|B><mb> (I = B, B = full backward), "
        "and GPipe's Forward <mb> / Backward <mb>"},
       &torch_pipelining},
      {{"zb-nvtx", "Zero Bubble runtime NVTX: <F|B|W><mb>.<chunk>.<split>, e.g. F0.1.0"}, &zb_nvtx},
      {{"deepseek", "DeepSeek DualPipe parts: <part>(F|B|W), e.g. attn(F), mlp(W)"}, &deepseek},
      {{"megatron-callstack",
        "Megatron-LM call stacks: schedules.py(NNN): forward_step / backward_step (full "
        "backward)"},
       &megatron_callstack},
      {{"ddp", "PyTorch DDP examples: ## forward ## / ## backward ## (full backward)"}, &ddp},
      {{"perflow-ai",
        "PerFlow-AI prototype: forward_step... / backward_step... (full backward), "
        "forward_step-<k>-<chunk>"},
       &perflow_ai},
  }};
  return kTable;
}

// ---------------------------------------------------------------------------------------
// User patterns

enum class Capture : std::uint8_t { Kind, Stage, Microbatch, Chunk };

struct CompiledPattern {
  std::regex regex;
  std::array<std::size_t, 4> group{};  // submatch index per Capture; 0: absent
};

[[noreturn]] void pattern_error(std::string_view regex, const std::string& message) {
  throw Error(fmt::format("--pattern '{}': {}", regex, message));
}

// std::regex (ECMAScript) has no named groups: rewrite `(?<name>` to `(` and remember which
// submatch each name became by counting the capturing groups before it.
CompiledPattern compile_pattern(std::string_view regex) {
  CompiledPattern out;
  std::string plain;
  plain.reserve(regex.size());
  std::size_t groups = 0;
  bool in_class = false;
  for (std::size_t i = 0; i < regex.size(); ++i) {
    const char c = regex[i];
    if (c == '\\' && i + 1 < regex.size()) {
      plain += regex.substr(i, 2);
      ++i;
      continue;
    }
    if (in_class) {
      in_class = c != ']';
      plain += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      plain += c;
      continue;
    }
    if (c != '(') {
      plain += c;
      continue;
    }
    if (i + 1 < regex.size() && regex[i + 1] == '?') {
      if (i + 2 < regex.size() && regex[i + 2] == '<' && i + 3 < regex.size() &&
          regex[i + 3] != '=' && regex[i + 3] != '!') {
        const std::size_t close = regex.find('>', i + 3);
        if (close == std::string_view::npos) pattern_error(regex, "unterminated (?<name>");
        const std::string_view name = regex.substr(i + 3, close - i - 3);
        ++groups;
        static const std::array<std::pair<std::string_view, Capture>, 4> kNames = {
            {{"kind", Capture::Kind},
             {"stage", Capture::Stage},
             {"mb", Capture::Microbatch},
             {"chunk", Capture::Chunk}}};
        const auto* found = std::find_if(kNames.begin(), kNames.end(),
                                         [&](const auto& entry) { return entry.first == name; });
        if (found == kNames.end()) {
          pattern_error(regex, fmt::format("unknown capture name '{}' (valid: kind, stage, mb, "
                                           "chunk)",
                                           name));
        }
        std::size_t& slot = out.group[static_cast<std::size_t>(found->second)];
        if (slot != 0) pattern_error(regex, fmt::format("capture '{}' given twice", name));
        slot = groups;
        plain += '(';
        i = close;
        continue;
      }
      plain += c;  // (?:, (?=, (?! do not capture
      continue;
    }
    ++groups;
    plain += c;
  }
  if (out.group[static_cast<std::size_t>(Capture::Kind)] == 0) {
    pattern_error(regex, "expected a (?<kind>...) capture (F, B/I, W or BW), found none");
  }
  try {
    out.regex = std::regex(plain, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    pattern_error(regex, fmt::format("invalid regular expression: {}", e.what()));
  }
  return out;
}

std::optional<MarkerKind> kind_from_text(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  if (text == "f" || text == "fwd" || text == "forward") return MarkerKind::Forward;
  if (text == "b" || text == "i" || text == "input") return MarkerKind::Backward;
  if (text == "w" || text == "weight") return MarkerKind::Weight;
  if (text == "bw" || text == "bwd" || text == "backward" || text == "full") {
    return MarkerKind::FullBackward;
  }
  return std::nullopt;
}

}  // namespace

std::span<const MarkerPreset> marker_presets() {
  static const std::vector<MarkerPreset> kPresets = [] {
    std::vector<MarkerPreset> presets;
    for (const PresetEntry& entry : preset_table()) presets.push_back(entry.info);
    return presets;
  }();
  return kPresets;
}

MarkerClassifier MarkerClassifier::preset(std::string_view name) {
  for (const PresetEntry& entry : preset_table()) {
    if (entry.info.name == name) {
      return {std::string(entry.info.name), std::string(entry.info.description), entry.classify};
    }
  }
  std::vector<std::string> valid;
  for (const PresetEntry& entry : preset_table()) valid.emplace_back(entry.info.name);
  throw UnknownNameError(fmt::format("unknown marker preset '{}'{} (valid: {})", name,
                                     did_you_mean_suffix(name, valid), fmt::join(valid, ", ")));
}

MarkerClassifier MarkerClassifier::pattern(std::string_view regex) {
  Classify classify =
      [compiled = compile_pattern(regex)](std::string_view name) -> std::optional<MarkerMatch> {
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(name.begin(), name.end(), m, compiled.regex)) return std::nullopt;
    const auto text = [&](Capture capture) -> std::optional<std::string> {
      const std::size_t group = compiled.group[static_cast<std::size_t>(capture)];
      if (group == 0 || !m[group].matched) return std::nullopt;
      return m[group].str();
    };
    MarkerMatch match;
    const auto kind = kind_from_text(text(Capture::Kind).value_or(""));
    if (!kind) return std::nullopt;
    match.kind = *kind;
    const auto id = [&](Capture capture, std::optional<std::uint32_t>& out) {
      if (auto value = text(capture)) {
        out = parse_id(*value);
        return out.has_value();
      }
      return true;
    };
    if (!id(Capture::Stage, match.stage) || !id(Capture::Microbatch, match.microbatch) ||
        !id(Capture::Chunk, match.chunk)) {
      return std::nullopt;
    }
    return match;
  };
  return {"pattern", std::string(regex), std::move(classify)};
}

}  // namespace perflow::reader
