#include "perflow/core/json_writer.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

namespace perflow {
namespace {

/// The length of the well-formed UTF-8 sequence at `s[i]` (a byte >= 0x80), or 0 with `bad`
/// set to the length of its maximal ill-formed prefix (at least 1): the bytes one U+FFFD
/// replaces. Unicode's table 3-7: no overlong forms, no surrogates, nothing past U+10FFFF.
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::size_t& bad) {
  const auto lead = static_cast<unsigned char>(s[i]);
  std::size_t length = 0;
  unsigned char low = 0x80;  // the second byte's range; the later ones are 80..BF
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    bad = 1;
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    if (i + k >= s.size()) {
      bad = k;
      return 0;
    }
    const auto c = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (c < low || c > high) : (c < 0x80 || c > 0xBF)) {
      bad = k;
      return 0;
    }
  }
  return length;
}

/// Writes the string literal of `text` at `p` (room for its bound: 2 + 6 bytes per byte);
/// returns the end.
char* put_string(char* p, std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  *p++ = '"';
  const char* const data = text.data();
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(data[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      *p++ = data[i++];
      continue;
    }
    if (c >= 0x80) {
      std::size_t bad = 0;
      if (const std::size_t n = utf8_sequence(text, i, bad)) {
        std::memcpy(p, data + i, n);
        p += n;
        i += n;
      } else {
        std::memcpy(p, "\xEF\xBF\xBD", 3);  // U+FFFD for the ill-formed bytes
        p += 3;
        i += bad;
      }
      continue;
    }
    *p++ = '\\';
    switch (c) {
      case '"':
        *p++ = '"';
        break;
      case '\\':
        *p++ = '\\';
        break;
      case '\b':
        *p++ = 'b';
        break;
      case '\f':
        *p++ = 'f';
        break;
      case '\n':
        *p++ = 'n';
        break;
      case '\r':
        *p++ = 'r';
        break;
      case '\t':
        *p++ = 't';
        break;
      default:
        std::memcpy(p, "u00", 3);
        p[3] = hex[c >> 4];
        p[4] = hex[c & 0xF];
        p += 5;
    }
    ++i;
  }
  *p++ = '"';
  return p;
}

constexpr std::size_t string_bound(std::string_view text) { return 2 + 6 * text.size(); }

/// The longest number: "-9223372036854775808", "18446744073709551615" or
/// "-1.7976931348623157e+308".
constexpr std::size_t kNumberBound = 32;

char* put_number(char* p, std::int64_t value) {
  return std::to_chars(p, p + kNumberBound, value).ptr;
}

char* put_number(char* p, std::uint64_t value) {
  return std::to_chars(p, p + kNumberBound, value).ptr;
}

char* put_number(char* p, double value) {
  if (!std::isfinite(value)) {
    std::memcpy(p, "null", 4);
    return p + 4;
  }
  // nlohmann's own routine, not std::to_chars: its Grisu2 digits are not always the
  // shortest (about 0.5% of random doubles get a longer, still round-trip, form), and the
  // bytes must be the ones nlohmann::json::dump writes.
  return nlohmann::detail::to_chars(p, p + kNumberBound, value);
}

/// Appends what `fill(char* p) -> char* end` writes, at most `bound` bytes: through a
/// buffer on the stack when small (one append), else in place in `out`.
template <class Fill>
void append_bounded(std::string& out, std::size_t bound, Fill fill) {
  constexpr std::size_t kLocal = 256;
  if (bound <= kLocal) {
    char local[kLocal];
    const char* const end = fill(local);
    out.append(local, static_cast<std::size_t>(end - local));
    return;
  }
  const std::size_t used = out.size();
  out.resize(used + bound);
  const char* const end = fill(out.data() + used);
  out.resize(static_cast<std::size_t>(end - out.data()));
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  append_bounded(out, string_bound(text), [text](char* p) { return put_string(p, text); });
}

void append_json_number(std::string& out, std::int64_t value) {
  append_bounded(out, kNumberBound, [value](char* p) { return put_number(p, value); });
}

void append_json_number(std::string& out, std::uint64_t value) {
  append_bounded(out, kNumberBound, [value](char* p) { return put_number(p, value); });
}

void append_json_number(std::string& out, double value) {
  append_bounded(out, kNumberBound, [value](char* p) { return put_number(p, value); });
}

JsonWriter::JsonWriter(std::string& out, int indent) : out_(out), indent_(indent) {}

std::size_t JsonWriter::separator_bound() const {
  return 2 + (indent_ > 0 ? frames_.size() * static_cast<std::size_t>(indent_) : 0);
}

char* JsonWriter::put_separator(char* p) {
  if (after_key_) {
    after_key_ = false;
    return p;
  }
  if (frames_.empty()) {
    assert(!root_written_ && "a JSON document has one value");
    root_written_ = true;
    return p;
  }
  Frame& frame = frames_.back();
  if (!frame.empty) *p++ = ',';
  frame.empty = false;
  return put_newline(p, frames_.size());
}

char* JsonWriter::put_newline(char* p, std::size_t level) const {
  if (indent_ < 0) return p;
  *p++ = '\n';
  const std::size_t spaces = level * static_cast<std::size_t>(indent_);
  std::memset(p, ' ', spaces);
  return p + spaces;
}

template <class Fill>
JsonWriter& JsonWriter::put_value(std::size_t bound, Fill fill) {
  assert((after_key_ || frames_.empty() || !frames_.back().object) &&
         "a member needs its key first");
  append_bounded(out_, separator_bound() + bound,
                 [this, &fill](char* p) { return fill(put_separator(p)); });
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  assert(!frames_.empty() && frames_.back().object && !after_key_ && "a key outside an object");
  append_bounded(out_, separator_bound() + string_bound(name) + 2, [this, name](char* p) {
    p = put_string(put_separator(p), name);
    *p++ = ':';
    if (indent_ >= 0) *p++ = ' ';
    return p;
  });
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin(bool object, char open) {
  put_value(1, [open](char* p) {
    *p = open;
    return p + 1;
  });
  frames_.push_back({.object = object});
  return *this;
}

JsonWriter& JsonWriter::begin_object() { return begin(true, '{'); }

JsonWriter& JsonWriter::begin_array() { return begin(false, '['); }

JsonWriter& JsonWriter::end(bool object, char close) {
  assert(!frames_.empty() && frames_.back().object == object && !after_key_ &&
         "an end that does not match its begin");
  (void)object;
  const bool empty = frames_.back().empty;
  frames_.pop_back();
  append_bounded(out_, separator_bound() + 1, [this, empty, close](char* p) {
    if (!empty) p = put_newline(p, frames_.size());
    *p = close;
    return p + 1;
  });
  return *this;
}

JsonWriter& JsonWriter::end_object() { return end(true, '}'); }

JsonWriter& JsonWriter::end_array() { return end(false, ']'); }

bool JsonWriter::plain(const char* begin, const char* end) {
  return std::all_of(begin, end,
                     [](char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; });
}

JsonWriter& JsonWriter::value(std::string_view text) {
  return put_value(string_bound(text), [text](char* p) { return put_string(p, text); });
}

JsonWriter& JsonWriter::value(bool b) {
  return put_value(5, [b](char* p) {
    const std::string_view text = b ? "true" : "false";
    std::memcpy(p, text.data(), text.size());
    return p + text.size();
  });
}

JsonWriter& JsonWriter::value(std::nullptr_t) {
  return put_value(4, [](char* p) {
    std::memcpy(p, "null", 4);
    return p + 4;
  });
}

JsonWriter& JsonWriter::value(double x) {
  return put_value(kNumberBound, [x](char* p) { return put_number(p, x); });
}

JsonWriter& JsonWriter::integer(std::int64_t x) {
  return put_value(kNumberBound, [x](char* p) { return put_number(p, x); });
}

JsonWriter& JsonWriter::integer(std::uint64_t x) {
  return put_value(kNumberBound, [x](char* p) { return put_number(p, x); });
}

JsonWriter& JsonWriter::raw_value(std::string_view json) {
  return put_value(json.size(), [json](char* p) {
    if (!json.empty()) std::memcpy(p, json.data(), json.size());
    return p + json.size();
  });
}

}  // namespace perflow
