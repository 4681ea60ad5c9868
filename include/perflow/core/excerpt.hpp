#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace perflow {

/// The length of the UTF-8 sequence starting at text[i] (1 to 4), or 0 when the bytes there
/// are not well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

/// Text found in an input, made fit for an error message: control characters and bytes that
/// are not UTF-8 become \xNN, and at most `most` bytes are shown, then "...". A raw byte
/// printed into a message garbles the terminal; a whole file echoed drowns it.
std::string excerpt(std::string_view text, std::size_t most = 60);

/// As excerpt, keeping the end of the text (what was read last): "..." then the last `most`
/// bytes.
std::string excerpt_tail(std::string_view text, std::size_t most = 60);

}  // namespace perflow
