#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "perflow/core/time.hpp"

namespace perflow {

/// Reads a JSON document while tracking where it is, so every error names the file and
/// the JSON pointer: `cfg.json:/pipeline/chunks: expected an integer >= 1, got 0`.
class JsonCursor {
 public:
  JsonCursor(const nlohmann::json& value, std::string file, std::string pointer = "");

  [[nodiscard]] const nlohmann::json& value() const { return *value_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  /// The JSON pointer of this value ("" is the document root, shown as "/").
  [[nodiscard]] const std::string& pointer() const { return pointer_; }

  /// Throws ConfigError: "<file>:<pointer>: <message>".
  [[noreturn]] void fail(const std::string& message) const;
  /// Throws ConfigError: "<file>:<pointer>: expected <expectation>, got <value>".
  [[noreturn]] void fail_expected(std::string_view expectation) const;

  /// Requires an object whose keys are all in `allowed`; an unknown key is reported with
  /// its own pointer, a did-you-mean and the list of valid keys. A "comment" key (a string)
  /// is valid in every object: an annotation that nothing reads.
  void expect_object(std::span<const std::string_view> allowed) const;
  void expect_object(std::initializer_list<std::string_view> allowed) const {
    expect_object(std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  [[nodiscard]] bool has(std::string_view key) const;
  /// A required member; a missing one is an error naming the pointer.
  [[nodiscard]] JsonCursor at(std::string_view key) const;
  [[nodiscard]] std::optional<JsonCursor> find(std::string_view key) const;

  [[nodiscard]] std::size_t array_size() const;  // requires an array
  [[nodiscard]] JsonCursor at(std::size_t index) const;

  [[nodiscard]] std::string as_string() const;
  [[nodiscard]] bool as_bool() const;
  [[nodiscard]] double as_number() const;
  /// A number >= `min` (finite).
  [[nodiscard]] double as_number_at_least(double min) const;
  /// An integer in [min, max]; 4.0 is accepted, 4.5 is not.
  [[nodiscard]] std::int64_t as_integer(std::int64_t min, std::int64_t max) const;
  /// A duration: a number of microseconds or a string with a unit ("250ns", "1.5us").
  [[nodiscard]] TimeNs as_duration() const;

  /// A short rendering of a JSON value for error messages, e.g. `"abc"`, `3.5`, `an object`.
  static std::string describe(const nlohmann::json& value);

 private:
  const nlohmann::json* value_;
  std::string file_;
  std::string pointer_;
};

/// The text of a JSON file, with read_json_file's checks (a regular file, at most 256 MiB).
std::string read_json_text(const std::filesystem::path& path);
/// Parses a JSON file. Throws ConfigError naming the file and the line and column of a
/// syntax error, a duplicate key, or the reason the file cannot be read.
nlohmann::json read_json_file(const std::filesystem::path& path);
/// Same, for text already in memory; `name` is used in messages.
nlohmann::json parse_json_text(std::string_view text, const std::string& name);

}  // namespace perflow
