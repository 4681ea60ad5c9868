// Marker presets (FORMATS.md section 1.5) as small hand-written parsers, so that a trace
// with millions of ranges is classified at string-compare speed; only a user pattern goes
// through RE2 (linear time in the name), once per distinct name.
#include "perflow/reader/markers.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <re2/re2.h>

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

constexpr std::array<std::pair<std::string_view, Capture>, 4> kCaptureNames = {
    {{"kind", Capture::Kind},
     {"stage", Capture::Stage},
     {"mb", Capture::Microbatch},
     {"chunk", Capture::Chunk}}};

struct CompiledPattern {
  // Shared because std::function copies the classifier; a const RE2 may match from many
  // threads at once.
  std::shared_ptr<const re2::RE2> regex;
  std::array<int, 4> group{};  // RE2 submatch index per Capture; 0: absent
  std::size_t submatches = 1;  // 1 + the highest index in `group`
};

[[noreturn]] void pattern_error(std::string_view regex, const std::string& message) {
  throw Error(fmt::format("--pattern '{}': {}", regex, message));
}

// The user's pattern as RE2 reads it: every `(?<name>` spelled `(?P<name>`, the only
// spelling RE2 accepts before its 2023 releases (Debian 12 ships 2022-06-01), and for each
// byte of it the user's byte it came from, to quote RE2's complaints in the user's spelling.
struct RewrittenPattern {
  std::string text;
  std::vector<std::size_t> origin;  // text.size() + 1 entries, the last one regex.size()
  std::array<bool, 4> named{};      // per Capture: the pattern names it
};

// Reads the named groups, `(?<name>` or `(?P<name>`, checks their names and respells them;
// RE2 checks everything else. Escapes and bracket classes are skipped as RE2 reads them (a
// `]` first in a class, after `[` or `[^`, is a literal).
RewrittenPattern rewrite_named_groups(std::string_view regex) {
  RewrittenPattern out;
  out.text.reserve(regex.size() + 4);
  out.origin.reserve(regex.size() + 5);
  const auto copy = [&](std::size_t from, std::size_t count) {
    for (std::size_t k = from; k < from + count; ++k) {
      out.text += regex[k];
      out.origin.push_back(k);
    }
  };
  bool in_class = false;
  for (std::size_t i = 0; i < regex.size(); ++i) {
    const char c = regex[i];
    if (c == '\\' && i + 1 < regex.size()) {
      copy(i, 2);
      ++i;
      continue;
    }
    if (in_class) {
      in_class = c != ']';
      copy(i, 1);
      continue;
    }
    if (c == '[') {
      in_class = true;
      copy(i, 1);
      if (i + 1 < regex.size() && regex[i + 1] == '^') copy(++i, 1);
      if (i + 1 < regex.size() && regex[i + 1] == ']') copy(++i, 1);
      continue;
    }
    const std::string_view rest = regex.substr(i);
    std::size_t name_at = 0;  // where the group's name starts; 0: not a named group
    if (rest.starts_with("(?<") && rest.size() > 3 && rest[3] != '=' && rest[3] != '!') {
      name_at = i + 3;  // (?<= and (?<! are lookbehinds, which RE2 refuses
    } else if (rest.starts_with("(?P<")) {
      name_at = i + 4;
    }
    if (name_at == 0) {
      copy(i, 1);
      continue;
    }
    const std::size_t close = regex.find('>', name_at);
    if (close == std::string_view::npos) pattern_error(regex, "unterminated (?<name>");
    const std::string_view name = regex.substr(name_at, close - name_at);
    const auto* found = std::find_if(kCaptureNames.begin(), kCaptureNames.end(),
                                     [&](const auto& entry) { return entry.first == name; });
    if (found == kCaptureNames.end()) {
      pattern_error(regex,
                    fmt::format("unknown capture name '{}' (valid: kind, stage, mb, chunk)", name));
    }
    bool& named = out.named[static_cast<std::size_t>(found->second)];
    if (named) pattern_error(regex, fmt::format("capture '{}' given twice", name));
    named = true;
    if (regex[i + 2] == '<') {
      copy(i, 2);  // (?
      out.text += 'P';
      out.origin.push_back(i + 2);
      copy(i + 2, close - i - 1);  // <name>
    } else {
      copy(i, close - i + 1);  // (?P<name>
    }
    i = close;
  }
  out.origin.push_back(regex.size());
  return out;
}

// RE2's reason for refusing the pattern, quoting the pattern as the user wrote it.
std::string re2_reason(const re2::RE2& re, std::string_view regex,
                       const RewrittenPattern& rewritten) {
  std::string reason = re.error();
  const std::string& arg = re.error_arg();
  // RE2 gives the text, not its offset: the first place it occurs in the user's own bytes
  // (no `P` of ours inside), else the first place at all.
  std::size_t at = std::string::npos;
  for (std::size_t from = rewritten.text.find(arg); !arg.empty() && from != std::string::npos;
       from = rewritten.text.find(arg, from + 1)) {
    if (at == std::string::npos) at = from;
    if (rewritten.origin[from + arg.size()] - rewritten.origin[from] == arg.size()) {
      at = from;
      break;
    }
  }
  if (at != std::string::npos && reason.ends_with(arg)) {
    const std::size_t begin = rewritten.origin[at];
    const std::size_t end = rewritten.origin[at + arg.size()];
    reason.resize(reason.size() - arg.size());
    reason += regex.substr(begin, end - begin);
  }
  if (re.error_code() == re2::RE2::ErrorBadPerlOp || re.error_code() == re2::RE2::ErrorBadEscape) {
    reason += " (RE2 syntax: no lookarounds, no backreferences)";
  }
  return reason;
}

// A user pattern compiled by RE2, whose matching takes time linear in the name (no
// backtracking, no recursion): Russ Cox, "Regular Expression Matching Can Be Simple And
// Fast" (2007), and github.com/google/re2. Latin-1 mode matches byte by byte, as
// std::regex over char did before.
CompiledPattern compile_pattern(std::string_view regex) {
  const RewrittenPattern rewritten = rewrite_named_groups(regex);
  if (!rewritten.named[static_cast<std::size_t>(Capture::Kind)]) {
    pattern_error(regex, "expected a (?<kind>...) capture (F, B/I, W or BW), found none");
  }
  re2::RE2::Options options;
  options.set_encoding(re2::RE2::Options::EncodingLatin1);
  options.set_log_errors(false);  // the library never prints; the error says it all
  auto re = std::make_shared<const re2::RE2>(
      re2::StringPiece(rewritten.text.data(), rewritten.text.size()), options);
  if (!re->ok()) {
    pattern_error(regex,
                  fmt::format("invalid regular expression: {}", re2_reason(*re, regex, rewritten)));
  }
  CompiledPattern out;
  const std::map<std::string, int>& groups = re->NamedCapturingGroups();
  for (const auto& [name, capture] : kCaptureNames) {
    if (!rewritten.named[static_cast<std::size_t>(capture)]) continue;
    const auto it = groups.find(std::string(name));
    // A (?<name> that RE2 reads as text: inside \Q...\E or a [[:class:]].
    if (it == groups.end()) pattern_error(regex, fmt::format("capture '{}' is not a group", name));
    out.group[static_cast<std::size_t>(capture)] = it->second;
    out.submatches = std::max(out.submatches, static_cast<std::size_t>(it->second) + 1);
  }
  for (const auto& entry : groups) {
    const std::string& name = entry.first;
    if (std::none_of(kCaptureNames.begin(), kCaptureNames.end(),
                     [&](const auto& known) { return known.first == name; })) {
      pattern_error(regex,
                    fmt::format("unknown capture name '{}' (valid: kind, stage, mb, chunk)", name));
    }
  }
  out.regex = std::move(re);
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
    // An unmatched group comes back with a null data(), so the text must not be null.
    const re2::StringPiece text(name.empty() ? "" : name.data(), name.size());
    std::vector<re2::StringPiece> groups(compiled.submatches);
    if (!compiled.regex->Match(text, 0, text.size(), re2::RE2::UNANCHORED, groups.data(),
                               static_cast<int>(groups.size()))) {
      return std::nullopt;
    }
    const auto group_text = [&](Capture capture) -> std::optional<std::string> {
      const int group = compiled.group[static_cast<std::size_t>(capture)];
      if (group == 0) return std::nullopt;
      const re2::StringPiece& piece = groups[static_cast<std::size_t>(group)];
      if (piece.data() == nullptr) return std::nullopt;
      return std::string(piece.data(), piece.size());
    };
    MarkerMatch match;
    const auto kind = kind_from_text(group_text(Capture::Kind).value_or(""));
    if (!kind) return std::nullopt;
    match.kind = *kind;
    const auto id = [&](Capture capture, std::optional<std::uint32_t>& out) {
      if (auto value = group_text(capture)) {
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
