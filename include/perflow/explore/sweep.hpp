#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "perflow/study/config_overrides.hpp"

namespace perflow::explore {

/// One dimension of a sweep: one pointer, or several that move together ("zip").
struct SweepAxis {
  std::vector<std::string> pointers;
  /// values[k][p]: the value of pointers[p] at step k of the axis.
  std::vector<std::vector<nlohmann::json>> values;
};

/// A sweep file (docs/search-and-sweeps.md "Sweeps"): a base config and the axes varied over it.
/// Runs are numbered 0..run_count()-1 with the first axis outermost, in the file's order.
struct Sweep {
  std::string file;          ///< the sweep file, for messages
  std::string base_file;     ///< the base config's file (the sweep file when inline)
  std::string base_pointer;  ///< "/base" when the base is inline, else empty
  nlohmann::json base;       ///< the base config document
  std::vector<SweepAxis> axes;
  /// `--set` on the base: set in every run before its axis values (an axis setting the
  /// same field wins). Errors at their fields name them.
  std::vector<study::ConfigOverride> base_overrides;
  /// What the sweep computes, as read: "sha256:" and the SHA-256 (FIPS 180-4) of the base
  /// config, the base overrides (when any) and the axes (pointers and values, in run
  /// order) as canonical JSON. Its results
  /// files carry it (sweep_table.hpp "TableIdentity"); a whitespace or key-order edit of
  /// the files does not change it, a changed value does.
  std::string digest;

  [[nodiscard]] std::uint64_t run_count() const;
  /// Every pointer an axis sets, in column order.
  [[nodiscard]] std::vector<std::string> pointers() const;
  /// What run `run`'s axes set, in column order.
  [[nodiscard]] std::vector<study::ConfigOverride> overrides(std::uint64_t run) const;
  /// What run `run` sets: the base overrides, then its axes'.
  [[nodiscard]] std::vector<study::ConfigOverride> run_overrides(std::uint64_t run) const;
};

/// Most runs one sweep may have.
inline constexpr std::uint64_t kMaxSweepRuns = std::uint64_t{1} << 32;

/// Reads a sweep file: {"base": CONFIG or "path", "axes": {POINTER: [values] or
/// {"from": a, "to": b, "step": s}}, "zip": [[POINTER, ...]]}. A base path is relative to
/// the sweep file. Throws ConfigError naming the file and the JSON pointer at fault.
/// `base_overrides` (`--set`) are checked to name a place in a config (else Error naming
/// the --set) and kept in Sweep::base_overrides.
Sweep load_sweep(const std::filesystem::path& path,
                 std::vector<study::ConfigOverride> base_overrides = {});

/// Same, for a document already read; `axis_order` lists /axes' keys in the order they
/// were written (JSON objects forget it); `directory` is where a base path is relative to.
Sweep parse_sweep(const nlohmann::json& document, const std::vector<std::string>& axis_order,
                  const std::string& file, const std::filesystem::path& directory);

/// The SHA-256 of `text` as 64 lowercase hex digits (a sweep's digest).
std::string sha256_hex(std::string_view text);

}  // namespace perflow::explore
