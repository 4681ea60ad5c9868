#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "perflow/core/error.hpp"

namespace perflow::study {

/// One `--set POINTER=VALUE`: a config field by JSON pointer, and its new value.
struct ConfigOverride {
  std::string pointer;           ///< e.g. "/pipeline/stages"
  nlohmann::json value;          ///< VALUE read as JSON; a bare word is a string ("zbv", "1.5ms")
  std::string text;              ///< as given, for messages
  std::string origin = "--set";  ///< what set it, for messages: "--set", "the sweep axis"
  /// The first member on the way to `pointer` that the document did not have, when setting
  /// created one above the pointer itself ("/pipline" for "/pipline/stages"): an error about
  /// it (an unknown key) is this override's doing. Filled by parse_config.
  std::string created;
};

/// Reads "POINTER=VALUE". Throws Error naming the text when the pointer is malformed.
ConfigOverride parse_override(std::string_view text);

/// Sets every override in `document` in order (later ones win), creating missing objects
/// on the way, as if the file had said so. Throws ConfigError naming `file` and the
/// pointer when a step of the pointer cannot be followed (an index into an object, a key
/// into a number...).
/// Returns, per override, the first member it created above its pointer (empty: none).
std::vector<std::string> apply_overrides(nlohmann::json& document,
                                         std::span<const ConfigOverride> overrides,
                                         const std::string& file);

/// The override that set `pointer` or one of its parents, or nullptr: an error at a field
/// a user set on the command line says so.
const ConfigOverride* override_of(std::span<const ConfigOverride> overrides,
                                  std::string_view pointer);

/// Throws Error naming the override ("--set '/pipline/stages=8': '/pipline/stages' is not a
/// place in a config: ...; did you mean 'pipeline'?") when one's pointer names no config
/// field: for overrides checked before the config they apply to is read (a sweep's or a
/// search's base).
void check_override_pointers(std::span<const ConfigOverride> overrides);

/// `error` with " (set by --set '...')" appended when an override set its field; else
/// `error` unchanged.
ConfigError name_override(const ConfigError& error, std::span<const ConfigOverride> overrides);

}  // namespace perflow::study
