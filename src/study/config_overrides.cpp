#include "perflow/study/config_overrides.hpp"

#include <string>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::study {

ConfigOverride parse_override(std::string_view text) {
  const std::size_t equals = text.find('=');
  if (equals == std::string_view::npos) {
    throw Error(fmt::format("--set '{}': expected POINTER=VALUE such as /pipeline/stages=8", text));
  }
  ConfigOverride result;
  result.text = std::string(text);
  result.pointer = std::string(text.substr(0, equals));
  const std::string_view value = text.substr(equals + 1);
  if (result.pointer.empty() || result.pointer.front() != '/') {
    throw Error(
        fmt::format("--set '{}': expected a JSON pointer starting with '/' before '=', such as "
                    "/pipeline/stages, found '{}'",
                    text, result.pointer));
  }
  try {
    (void)nlohmann::json::json_pointer(result.pointer);
  } catch (const nlohmann::json::exception&) {
    throw Error(
        fmt::format("--set '{}': '{}' is not a JSON pointer ('~' must be followed by 0 or 1)", text,
                    result.pointer));
  }
  // JSON when it parses as JSON, else the bare word as a string: /pipeline/schedule=zbv.
  result.value = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (result.value.is_discarded()) result.value = std::string(value);
  return result;
}

void apply_overrides(nlohmann::json& document, std::span<const ConfigOverride> overrides,
                     const std::string& file) {
  for (const ConfigOverride& o : overrides) {
    const nlohmann::json::json_pointer pointer(o.pointer);
    // Each parent must be an object (or an array indexed within or just past its end).
    nlohmann::json::json_pointer parent = pointer;
    std::vector<nlohmann::json::json_pointer> parents;
    while (!parent.empty()) {
      parent = parent.parent_pointer();
      parents.push_back(parent);
    }
    for (auto it = parents.rbegin(); it != parents.rend(); ++it) {
      if (!document.contains(*it)) break;  // created as an object below
      const nlohmann::json& at = document.at(*it);
      if (!at.is_object() && !at.is_array()) {
        throw ConfigError(file, it->to_string(),
                          fmt::format("{} '{}': cannot set a field inside a {}", o.origin, o.text,
                                      at.type_name()));
      }
    }
    try {
      document[pointer] = o.value;
    } catch (const nlohmann::json::exception&) {
      throw ConfigError(file, pointer.parent_pointer().to_string(),
                        fmt::format("{} '{}': '{}' is not an index of this array", o.origin, o.text,
                                    pointer.back()));
    }
  }
}

const ConfigOverride* override_of(std::span<const ConfigOverride> overrides,
                                  std::string_view pointer) {
  const ConfigOverride* found = nullptr;
  for (const ConfigOverride& o : overrides) {
    const bool same_or_parent =
        pointer.starts_with(o.pointer) &&
        (pointer.size() == o.pointer.size() || pointer[o.pointer.size()] == '/');
    if (same_or_parent) found = &o;  // the last one set wins
  }
  return found;
}

ConfigError name_override(const ConfigError& error, std::span<const ConfigOverride> overrides) {
  const ConfigOverride* set = override_of(overrides, error.pointer());
  if (set == nullptr) return error;
  return ConfigError(error.file(), error.pointer(),
                     fmt::format("{} (set by {} '{}')", error.message(), set->origin, set->text));
}

}  // namespace perflow::study
