#pragma once

#include <algorithm>
#include <cassert>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace perflow {

/// Appends `text` as a JSON string literal, escaped as nlohmann::json::dump escapes it: `\"`,
/// `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as `\u00xx`, everything else
/// (UTF-8 included) verbatim. Invalid UTF-8 is replaced by U+FFFD, one per maximal invalid
/// subsequence, as nlohmann's `error_handler_t::replace` does (never thrown).
void append_json_string(std::string& out, std::string_view text);

/// Appends an integer in decimal.
void append_json_number(std::string& out, std::int64_t value);
void append_json_number(std::string& out, std::uint64_t value);
/// Appends a double exactly as nlohmann::json::dump writes one: its round-trip digits
/// (Grisu2), fixed notation for exponents -5..15 with at least one decimal ("100.0", "0.0001"),
/// scientific otherwise ("1e-05", "1.5e+20"); NaN and infinities as `null`.
void append_json_number(std::string& out, double value);

/// Writes a JSON document value by value into a string, without building a tree. The bytes
/// are those of nlohmann::json::dump(indent) of the same values in the same order: compact
/// with `indent < 0`, otherwise one element per line, `indent` spaces per level, `": "`
/// after keys and `{}` / `[]` for empty containers. (An nlohmann object sorts its keys: to
/// match one, write the keys sorted.)
///
///     JsonWriter w(out, 1);
///     w.begin_object().field("name", "F0.0").field("start_ns", 0).end_object();
///
/// Misuse (a value where a key is due, an unbalanced end) is a bug, caught by assertions.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out, int indent = -1);

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  /// The next member's key (in an object); its value follows.
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(bool b);
  JsonWriter& value(std::nullptr_t);
  JsonWriter& value(double x);
  template <std::integral T>
  requires(!std::same_as<T, bool>) JsonWriter& value(T x) {
    if constexpr (std::is_signed_v<T>) {
      return integer(static_cast<std::int64_t>(x));
    } else {
      return integer(static_cast<std::uint64_t>(x));
    }
  }
  /// A value already written as JSON (trusted, not checked).
  JsonWriter& raw_value(std::string_view json);

  /// `count` string values that need no escaping (printable ASCII other than '"' and '\\',
  /// such as task labels), each at most `max_length` bytes: `put(i, p)` writes the i-th
  /// one's characters at p and returns their end. The bytes are those of value() for each,
  /// gathered into a few appends: value() one label at a time was a third of rendering a
  /// 1M-task report.
  template <class Put>
  JsonWriter& plain_strings(std::size_t count, std::size_t max_length, Put put);

  /// key(name).value(x)
  template <class T>
  JsonWriter& field(std::string_view name, const T& x) {
    key(name);
    return value(x);
  }

  /// Whether the document's value is written in full (every container closed).
  [[nodiscard]] bool complete() const { return root_written_ && frames_.empty(); }

 private:
  struct Frame {
    bool object = false;
    bool empty = true;
  };
  JsonWriter& integer(std::int64_t x);
  JsonWriter& integer(std::uint64_t x);
  JsonWriter& begin(bool object, char open);
  JsonWriter& end(bool object, char close);
  /// Appends the separator before a value, then what `fill(char*) -> char*` writes (at
  /// most `bound` bytes), in one append.
  template <class Fill>
  JsonWriter& put_value(std::size_t bound, Fill fill);
  /// The most bytes put_separator writes.
  [[nodiscard]] std::size_t separator_bound() const;
  /// Writes what comes before a value: nothing after a key, else a comma after an earlier
  /// element and, pretty-printed, a new line and its indentation.
  char* put_separator(char* p);
  char* put_newline(char* p, std::size_t level) const;

  /// Checks (in debug builds) that plain_strings was given what it promises.
  static bool plain(const char* begin, const char* end);

  std::string& out_;
  int indent_;
  std::vector<Frame> frames_;
  bool after_key_ = false;
  bool root_written_ = false;
};

template <class Put>
JsonWriter& JsonWriter::plain_strings(std::size_t count, std::size_t max_length, Put put) {
  constexpr std::size_t kBuffer = 4096;
  constexpr std::size_t kShortSeparator = 16;  // copied as a fixed block when it fits
  assert((after_key_ || frames_.empty() || !frames_.back().object) &&
         "a member needs its key first");
  if (count == 0) return *this;
  if (separator_bound() + max_length + 2 + kShortSeparator > kBuffer) {  // deep or long: one by one
    std::string text(max_length, '\0');
    for (std::size_t i = 0; i < count; ++i) {
      text.resize(max_length);
      text.resize(static_cast<std::size_t>(put(i, text.data()) - text.data()));
      value(text);
    }
    return *this;
  }
  char buffer[kBuffer];
  char* p = buffer;
  const auto one = [&](std::size_t i, char* q) {
    *q++ = '"';
    char* const end = put(i, q);
    assert(plain(q, end) && end - q <= static_cast<std::ptrdiff_t>(max_length));
    *end = '"';
    return end + 1;
  };
  p = one(0, put_separator(p));
  if (count == 1) {  // a document's only value, say: no separator to compute
    out_.append(buffer, static_cast<std::size_t>(p - buffer));
    return *this;
  }
  // After an element every separator is the same: a comma, then the line's indentation.
  char separator[kBuffer];
  std::memset(separator, 0, kShortSeparator);  // the fixed-size copy may read past the end
  const auto separator_size = static_cast<std::size_t>(put_separator(separator) - separator);
  const std::size_t room = std::max(separator_size, kShortSeparator) + max_length + 2;
  for (std::size_t i = 1; i < count; ++i) {
    if (static_cast<std::size_t>(buffer + kBuffer - p) < room) {
      out_.append(buffer, static_cast<std::size_t>(p - buffer));
      p = buffer;
    }
    if (separator_size <= kShortSeparator) {
      std::memcpy(p, separator, kShortSeparator);
    } else {
      std::memcpy(p, separator, separator_size);
    }
    p = one(i, p + separator_size);
  }
  out_.append(buffer, static_cast<std::size_t>(p - buffer));
  return *this;
}

}  // namespace perflow
