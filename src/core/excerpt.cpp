#include "perflow/core/excerpt.hpp"

#include <fmt/format.h>

namespace perflow {

std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
  };
  const auto continuation = [&](std::size_t k) { return (byte(k) & 0xc0u) == 0x80u; };
  const unsigned b0 = byte(0);
  if (i >= text.size()) return 0;
  if (b0 < 0x80) return 1;
  if (b0 >= 0xc2 && b0 <= 0xdf) return continuation(1) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const unsigned b1 = byte(1);
    if ((b0 == 0xe0 && b1 < 0xa0) || (b0 == 0xed && b1 > 0x9f)) return 0;
    return continuation(1) && continuation(2) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const unsigned b1 = byte(1);
    if ((b0 == 0xf0 && b1 < 0x90) || (b0 == 0xf4 && b1 > 0x8f)) return 0;
    return continuation(1) && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

namespace {

// Appends text[i..] to out as excerpt() shows it, until `most` bytes of input are used.
void append_printable(std::string& out, std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = c < 0x20 || c == 0x7f ? 0 : utf8_sequence_length(text, i);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
}

// Moves `cut` back to the start of the UTF-8 sequence it falls in, so a character is not
// split into \x escapes by the cut itself.
std::size_t sequence_start(std::string_view text, std::size_t cut) {
  std::size_t back = 0;
  while (cut > 0 && back < 3 && cut < text.size() &&
         (static_cast<unsigned char>(text[cut]) & 0xc0u) == 0x80u) {
    --cut;
    ++back;
  }
  return cut;
}

}  // namespace

std::string excerpt(std::string_view text, std::size_t most) {
  std::string out;
  if (text.size() <= most) {
    append_printable(out, text);
    return out;
  }
  append_printable(out, text.substr(0, sequence_start(text, most)));
  out += "...";
  return out;
}

std::string excerpt_tail(std::string_view text, std::size_t most) {
  std::string out;
  if (text.size() <= most) {
    append_printable(out, text);
    return out;
  }
  out = "...";
  append_printable(out, text.substr(sequence_start(text, text.size() - most)));
  return out;
}

}  // namespace perflow
