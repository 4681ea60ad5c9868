#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace perflow::reader::detail {

/// A short, printable copy of text found in a file, for error messages: control and
/// non-ASCII bytes become \xNN and long text is cut to `max` characters plus "...".
inline std::string excerpt(std::string_view text, std::size_t max = 60) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += static_cast<char>(byte);
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  if (text.size() > max) out += "...";
  return out;
}

}  // namespace perflow::reader::detail
