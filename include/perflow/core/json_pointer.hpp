#pragma once

#include <string>
#include <string_view>

namespace perflow {

/// A key as one reference token of a JSON pointer (RFC 6901): '~' as "~0", '/' as "~1".
std::string escape_pointer_token(std::string_view key);

/// One reference token of a JSON pointer, unescaped: "~1" is '/', "~0" is '~'.
std::string unescape_pointer_token(std::string_view token);

}  // namespace perflow
