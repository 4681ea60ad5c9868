#include "perflow/core/json_cursor.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/did_you_mean.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/excerpt.hpp"
#include "perflow/core/json_pointer.hpp"

namespace perflow {
namespace {

constexpr std::string_view kCommentKey = "comment";

std::string line_column(std::string_view text, std::size_t byte) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {}", line, column);
}

// nlohmann's messages start "[json.exception.parse_error.101] parse error at line 1,
// column 2: "; we print our own position, so keep only the reason.
std::string without_nlohmann_prefix(std::string what) {
  if (what.starts_with("[json.exception.")) {
    if (auto bracket = what.find("] "); bracket != std::string::npos) what.erase(0, bracket + 2);
  }
  if (what.starts_with("parse error")) {
    if (auto colon = what.find(": "); colon != std::string::npos) what.erase(0, colon + 2);
  }
  // "last read: '<the token so far>'" may hold a whole unterminated string (a 50 MB config
  // gave a 50 MB message) and raw bytes that are not UTF-8: keep its printable end.
  constexpr std::string_view kLastRead = "; last read: '";
  if (const std::size_t at = what.find(kLastRead);
      at != std::string::npos && what.size() > at + kLastRead.size() && what.back() == '\'') {
    const std::size_t from = at + kLastRead.size();
    const std::string read = what.substr(from, what.size() - 1 - from);
    what = what.substr(0, from) + excerpt_tail(read, 40) + "'";
  }
  return excerpt(what, 400);
}

// The byte offset of the second `key` in one object of valid JSON `text`, for the error's
// line and column: nlohmann's parse callback sees keys but not where they are.
std::size_t duplicate_key_offset(std::string_view text, const std::string& key) {
  struct Frame {
    bool object = false;
    bool expect_key = false;
    std::set<std::string> keys;
  };
  std::vector<Frame> open;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      open.push_back(Frame{c == '{', c == '{', {}});
    } else if (c == '}' || c == ']') {
      if (!open.empty()) open.pop_back();
    } else if (c == ',' && !open.empty() && open.back().object) {
      open.back().expect_key = true;
    } else if (c == '"') {
      const std::size_t start = i;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (open.empty() || !open.back().expect_key) continue;
      open.back().expect_key = false;
      // Decoded as nlohmann decodes it, so escapes compare equal to what the callback saw.
      const std::string token(text.substr(start, i + 1 - start));
      const auto decoded = nlohmann::json::parse(token, nullptr, /*allow_exceptions=*/false);
      if (!decoded.is_string()) continue;
      const auto& name = decoded.get_ref<const std::string&>();
      if (!open.back().keys.insert(name).second && name == key) return start;
    }
  }
  return 0;
}

}  // namespace

JsonCursor::JsonCursor(const nlohmann::json& value, std::string file, std::string pointer)
    : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)) {}

void JsonCursor::fail(const std::string& message) const {
  throw ConfigError(file_, pointer_, message);
}

void JsonCursor::fail_expected(std::string_view expectation) const {
  fail(fmt::format("expected {}, got {}", expectation, describe(*value_)));
}

std::string JsonCursor::describe(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::null:
      return "null";
    default: {
      // A string built by hand (not parsed) may hold bytes that are not UTF-8: shown, not thrown.
      std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      if (text.size() > 60) text = text.substr(0, 57) + "...";
      return text;
    }
  }
}

void JsonCursor::expect_object(std::span<const std::string_view> allowed) const {
  if (!value_->is_object()) fail_expected("an object");
  for (const auto& [key, member] : value_->items()) {
    if (key == kCommentKey) {
      if (!member.is_string()) {
        JsonCursor(member, file_, pointer_ + "/" + key).fail_expected("a string (a comment)");
      }
      continue;
    }
    bool known = false;
    for (std::string_view name : allowed) known = known || name == key;
    if (known) continue;
    std::vector<std::string> names(allowed.begin(), allowed.end());
    std::string valid;
    for (std::string_view name : allowed) valid += (valid.empty() ? "" : ", ") + std::string(name);
    names.emplace_back(kCommentKey);
    throw ConfigError(file_, pointer_ + "/" + escape_pointer_token(key),
                      fmt::format("unknown key '{}'{} (valid keys here: {})", key,
                                  did_you_mean_suffix(key, names), valid));
  }
}

bool JsonCursor::has(std::string_view key) const {
  return value_->is_object() && value_->contains(key);
}

JsonCursor JsonCursor::at(std::string_view key) const {
  if (auto member = find(key)) return *member;
  fail(fmt::format("missing required key '{}'", key));
}

std::optional<JsonCursor> JsonCursor::find(std::string_view key) const {
  if (!value_->is_object()) fail_expected("an object");
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return JsonCursor(*it, file_, pointer_ + "/" + escape_pointer_token(key));
}

std::size_t JsonCursor::array_size() const {
  if (!value_->is_array()) fail_expected("an array");
  return value_->size();
}

JsonCursor JsonCursor::at(std::size_t index) const {
  if (!value_->is_array()) fail_expected("an array");
  if (index >= value_->size()) {
    fail(fmt::format("index {} is out of range (the array has {} element{})", index, value_->size(),
                     value_->size() == 1 ? "" : "s"));
  }
  return JsonCursor((*value_)[index], file_, fmt::format("{}/{}", pointer_, index));
}

std::string JsonCursor::as_string() const {
  if (!value_->is_string()) fail_expected("a string");
  return value_->get<std::string>();
}

bool JsonCursor::as_bool() const {
  if (!value_->is_boolean()) fail_expected("true or false");
  return value_->get<bool>();
}

double JsonCursor::as_number() const {
  if (!value_->is_number()) fail_expected("a number");
  return value_->get<double>();
}

double JsonCursor::as_number_at_least(double min) const {
  const double x = as_number();
  if (!(x >= min)) fail_expected(fmt::format("a number >= {}", min));
  return x;
}

std::int64_t JsonCursor::as_integer(std::int64_t min, std::int64_t max) const {
  const std::string expectation = max == std::numeric_limits<std::int64_t>::max()
                                      ? fmt::format("an integer >= {}", min)
                                      : fmt::format("an integer in [{}, {}]", min, max);
  std::int64_t x = 0;
  if (value_->is_number_integer()) {
    if (value_->is_number_unsigned() &&
        value_->get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail_expected(expectation);
    }
    x = value_->get<std::int64_t>();
  } else if (value_->is_number_float()) {
    const double d = value_->get<double>();
    if (!(std::floor(d) == d) || std::abs(d) > 9e15) fail_expected(expectation);
    x = static_cast<std::int64_t>(d);
  } else {
    fail_expected(expectation);
  }
  if (x < min || x > max) fail_expected(expectation);
  return x;
}

TimeNs JsonCursor::as_duration() const {
  try {
    if (value_->is_number()) return microseconds_to_ns(value_->get<double>());
    if (value_->is_string()) return parse_duration(value_->get<std::string>());
  } catch (const std::invalid_argument& e) {
    fail_expected(e.what());
  }
  fail_expected(
      "a duration (a number of microseconds, or a string such as \"250ns\" or \"1.5us\")");
}

nlohmann::json parse_json_text(std::string_view text, const std::string& name) {
  // Track the keys of every open object to reject duplicates, which nlohmann would
  // otherwise resolve silently by keeping the last one.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  auto callback = [&](int /*depth*/, nlohmann::json::parse_event_t event,
                      nlohmann::json& parsed) -> bool {
    switch (event) {
      case nlohmann::json::parse_event_t::object_start:
        open_objects.emplace_back();
        break;
      case nlohmann::json::parse_event_t::object_end:
        open_objects.pop_back();
        break;
      case nlohmann::json::parse_event_t::key: {
        const auto& key = parsed.get_ref<const std::string&>();
        if (!open_objects.back().insert(key).second && duplicate.empty()) duplicate = key;
        break;
      }
      default:
        break;
    }
    return true;
  };
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text.begin(), text.end(), callback);
  } catch (const nlohmann::json::parse_error& e) {
    const std::size_t byte = e.byte == 0 ? 0 : e.byte - 1;
    throw ConfigError(name, "",
                      fmt::format("invalid JSON at {}: {}", line_column(text, byte),
                                  without_nlohmann_prefix(e.what())));
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range 406, "number overflow parsing '2e308'": no position is kept.
    throw ConfigError(name, "", fmt::format("invalid JSON: {}", without_nlohmann_prefix(e.what())));
  }
  if (!duplicate.empty()) {
    throw ConfigError(
        name, "",
        fmt::format("invalid JSON at {}: key '{}' appears twice in one object",
                    line_column(text, duplicate_key_offset(text, duplicate)), excerpt(duplicate)));
  }
  return document;
}

std::string read_json_text(const std::filesystem::path& path) {
  // Only regular files, and not endless ones (/dev/zero): configs are small.
  constexpr std::uintmax_t kMaxConfigBytes = std::uintmax_t{256} << 20;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_directory(status)) {
    throw ConfigError(path.string(), "", "is a directory, not a JSON file");
  }
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    throw ConfigError(path.string(), "", "is not a regular file");
  }
  if (const auto size = std::filesystem::file_size(path, ec); !ec && size > kMaxConfigBytes) {
    throw ConfigError(
        path.string(), "",
        fmt::format("is {} bytes; a config may have at most {}", size, kMaxConfigBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path.string(), "", "cannot open the file for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw ConfigError(path.string(), "", "cannot read the file");
  return std::move(buffer).str();
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_json_text(path), path.string());
}

}  // namespace perflow
