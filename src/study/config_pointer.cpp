#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "detail/config_fields.hpp"
#include "perflow/core/did_you_mean.hpp"
#include "perflow/core/json_pointer.hpp"
#include "perflow/study/config_schema.hpp"

namespace perflow::study {
namespace {

using detail::Field;
using detail::FieldKind;
using detail::Section;

// The reference tokens of an RFC 6901 pointer, unescaped.
std::vector<std::string> pointer_tokens(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  for (std::string_view rest = pointer.substr(1);;) {
    const std::size_t slash = rest.find('/');
    tokens.push_back(unescape_pointer_token(rest.substr(0, slash)));
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  return tokens;
}

bool is_index(std::string_view token) {
  if (token == "-") return true;
  if (token.empty() || (token.size() > 1 && token.front() == '0')) return false;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Fields whose value may be an array (a stage range, an order, layers per position): an
// index below them names an element.
bool may_be_array(FieldKind kind) {
  return kind == FieldKind::StageRange || kind == FieldKind::Order || kind == FieldKind::LayerSplit;
}

}  // namespace

std::string config_pointer_problem(std::string_view pointer) {
  const std::vector<std::string> tokens = pointer_tokens(pointer);
  const Section* section = &detail::kConfigSection;
  const Field* leaf = nullptr;  // the field reached when it holds no object
  std::string walked;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    if (leaf != nullptr) {
      if (may_be_array(leaf->kind) && is_index(token)) continue;
      return fmt::format("{} holds a value, not an object: it has no member '{}'", walked, token);
    }
    const Field* field = nullptr;
    std::vector<std::string> keys;
    for (std::string_view key : section->keys()) {
      keys.emplace_back(key);
      if (key == token) field = &section->field(key);
    }
    if (field == nullptr) {
      return fmt::format("'{}' is not a key of {}{}", token,
                         walked.empty() ? std::string("the config") : walked,
                         did_you_mean_suffix(token, keys));
    }
    walked += '/' + escape_pointer_token(token);
    switch (field->kind) {
      case FieldKind::Object:
        section = field->section;
        break;
      case FieldKind::ObjectArray:
      case FieldKind::ObjectMap:
        // The next token picks an element (an index) or an entry (any name).
        if (i + 1 < tokens.size()) {
          ++i;
          if (field->kind == FieldKind::ObjectArray && !is_index(tokens[i])) {
            return fmt::format("{} is an array: expected an index, got '{}'", walked, tokens[i]);
          }
          walked += '/' + escape_pointer_token(tokens[i]);
        }
        section = field->section;
        break;
      default:
        leaf = field;
        break;
    }
  }
  return {};
}

}  // namespace perflow::study
