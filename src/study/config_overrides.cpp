#include "perflow/study/config_overrides.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/error.hpp"
#include "perflow/core/excerpt.hpp"
#include "perflow/core/json_pointer.hpp"
#include "perflow/study/config_schema.hpp"

namespace perflow::study {

ConfigOverride parse_override(std::string_view text) {
  const std::size_t equals = text.find('=');
  if (equals == std::string_view::npos) {
    throw Error(fmt::format("--set '{}': expected POINTER=VALUE such as /pipeline/stages=8", text));
  }
  // Config files are UTF-8 (the JSON parser refuses anything else); so is what --set puts
  // into one: a raw byte in a string value would reach the messages and the report.
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      throw Error(
          fmt::format("--set '{}': expected UTF-8 text, found the byte 0x{:02x} at offset {}",
                      excerpt(text, 200), static_cast<unsigned char>(text[i]), i));
    }
    i += length;
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

namespace {

// An array index as RFC 6901 writes it: digits, no leading zero.
std::optional<std::size_t> array_index(std::string_view token) {
  if (token.empty() || token.size() > 18 || (token.size() > 1 && token.front() == '0')) {
    return std::nullopt;
  }
  std::size_t index = 0;
  for (const char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<std::size_t>(c - '0');
  }
  return index;
}

}  // namespace

std::vector<std::string> apply_overrides(nlohmann::json& document,
                                         std::span<const ConfigOverride> overrides,
                                         const std::string& file) {
  std::vector<std::string> created;
  for (const ConfigOverride& o : overrides) {
    std::string first_created;
    // Walked token by token rather than through json_pointer's operator[], which pads an
    // array with nulls up to any index (a huge index would take the machine): an index may
    // name an element or the end (append, as '-' does), nothing beyond. A missing container
    // is created: an array when the token is an index, an object otherwise.
    nlohmann::json* at = &document;
    std::string walked;
    std::string_view rest = std::string_view(o.pointer).substr(1);
    while (true) {
      const std::size_t slash = rest.find('/');
      const std::string_view raw = rest.substr(0, slash);
      const std::string token = unescape_pointer_token(raw);
      const std::optional<std::size_t> index = array_index(token);
      if (at->is_null()) {
        if (index || token == "-") {
          *at = nlohmann::json::array();
        } else {
          *at = nlohmann::json::object();
        }
      }
      if (at->is_object()) {
        if (first_created.empty() && slash != std::string_view::npos && !at->contains(token)) {
          first_created = walked + '/' + std::string(raw);
        }
        at = &(*at)[token];
      } else if (at->is_array()) {
        if (token == "-" || (index && *index == at->size())) {
          at->push_back(nullptr);
          at = &at->back();
        } else if (index && *index < at->size()) {
          at = &(*at)[*index];
        } else {
          throw ConfigError(
              file, walked,
              index ? fmt::format("{} '{}': index {} is beyond the end of this array of {} "
                                  "(an index from 0 to {}, or '-' to append)",
                                  o.origin, o.text, token, at->size(), at->size())
                    : fmt::format("{} '{}': '{}' is not an index of this array (an index from "
                                  "0 to {}, or '-' to append)",
                                  o.origin, o.text, token, at->size()));
        }
      } else {
        throw ConfigError(file, walked,
                          fmt::format("{} '{}': cannot set a field inside a {}", o.origin, o.text,
                                      at->type_name()));
      }
      walked += '/';
      walked += raw;
      if (slash == std::string_view::npos) break;
      rest.remove_prefix(slash + 1);
    }
    *at = o.value;
    created.push_back(std::move(first_created));
  }
  return created;
}

const ConfigOverride* override_of(std::span<const ConfigOverride> overrides,
                                  std::string_view pointer) {
  const ConfigOverride* found = nullptr;
  for (const ConfigOverride& o : overrides) {
    const auto at_or_under = [&](std::string_view root) {
      return !root.empty() && pointer.starts_with(root) &&
             (pointer.size() == root.size() || pointer[root.size()] == '/');
    };
    if (at_or_under(o.pointer) || at_or_under(o.created)) found = &o;  // the last one set wins
  }
  return found;
}

ConfigError name_override(const ConfigError& error, std::span<const ConfigOverride> overrides) {
  const ConfigOverride* set = override_of(overrides, error.pointer());
  if (set == nullptr) return error;
  return ConfigError(error.file(), error.pointer(),
                     fmt::format("{} (set by {} '{}')", error.message(), set->origin, set->text));
}

void check_override_pointers(std::span<const ConfigOverride> overrides) {
  for (const ConfigOverride& o : overrides) {
    if (const std::string problem = config_pointer_problem(o.pointer); !problem.empty()) {
      throw Error(fmt::format("{} '{}': '{}' is not a place in a config: {}", o.origin, o.text,
                              o.pointer, problem));
    }
  }
}

}  // namespace perflow::study
