#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace perflow::reader {

/// What a marked range computes: a forward (F), an input-gradient backward (B, torch
/// pipelining's `I`), a weight-gradient backward (W), or a full backward that does both
/// (B + W in one range: torch pipelining's `B`, DDP's `## backward ##`, Megatron's
/// `backward_step`), which cannot be split into B and W.
enum class MarkerKind : std::uint8_t { Forward, Backward, Weight, FullBackward };

inline constexpr int kMarkerKindCount = 4;

/// "F", "B", "W", "BW".
std::string_view to_string(MarkerKind kind);

/// A range name classified by a marker: its kind and whatever ids the name carries.
struct MarkerMatch {
  MarkerKind kind = MarkerKind::Forward;
  std::optional<std::uint32_t> stage;       ///< the pipeline stage (torch pipelining)
  std::optional<std::uint32_t> microbatch;  ///< the microbatch
  std::optional<std::uint32_t> chunk;       ///< the model chunk (ZB, PerFlow-AI)
  /// A part of the task when the markers name pieces of one F/B/W (DeepSeek's `attn`,
  /// `mlp`, ...): the task's cost is the sum over its parts. Empty otherwise.
  std::string part;

  friend bool operator==(const MarkerMatch&, const MarkerMatch&) = default;
};

/// A built-in marker convention (FORMATS.md section 1.5).
struct MarkerPreset {
  std::string_view name;         ///< e.g. "torch-pipelining"
  std::string_view description;  ///< one line, with examples of the names it matches
};

/// Every built-in preset, in the order `perflow costs --help` lists them:
/// torch-pipelining, zb-nvtx, deepseek, megatron-callstack, ddp, perflow-ai.
std::span<const MarkerPreset> marker_presets();

/// Classifies range names into F / B / W / full backward with their ids. Built from a
/// preset or from a user regular expression; `classify` is pure, so callers classify each
/// distinct (interned) name once.
///
/// A user pattern is an RE2 regular expression (matched in time linear in the name, byte by
/// byte; no backreferences or lookarounds) searched in the name (anchor it with ^ and $ for a
/// whole-name match) with named captures, `(?<name>...)` or `(?P<name>...)`:
///   (?<kind>...)   required; F, fwd, forward: F; B, I, input: B; W, weight: W;
///                  BW, bwd, backward, full: full backward (case-insensitive). A name whose
///                  kind is none of these is not matched.
///   (?<stage>\d+), (?<mb>\d+), (?<chunk>\d+)   optional decimal ids.
/// e.g. `^step(?<stage>\d+)_(?<kind>fwd|bwd)_(?<mb>\d+)$`.
class MarkerClassifier {
 public:
  /// A built-in preset; throws UnknownNameError listing the presets (with a did-you-mean).
  static MarkerClassifier preset(std::string_view name);
  /// A user pattern; throws Error naming `--pattern` for an expression RE2 refuses (with its
  /// reason), an unknown capture name or a missing `kind` capture.
  static MarkerClassifier pattern(std::string_view regex);

  [[nodiscard]] std::optional<MarkerMatch> classify(std::string_view name) const {
    return classify_(name);
  }
  /// The preset's name, or "pattern".
  [[nodiscard]] const std::string& name() const { return name_; }
  /// What it matches, for messages: the preset's description or the pattern itself.
  [[nodiscard]] const std::string& description() const { return description_; }

 private:
  MarkerClassifier(std::string name, std::string description,
                   std::function<std::optional<MarkerMatch>(std::string_view)> classify)
      : name_(std::move(name)),
        description_(std::move(description)),
        classify_(std::move(classify)) {}

  std::string name_;
  std::string description_;
  std::function<std::optional<MarkerMatch>(std::string_view)> classify_;
};

}  // namespace perflow::reader
