#pragma once

#include <vector>

#include "perflow/reader/profile_reader.hpp"

namespace perflow::reader::detail {

/// Every built-in reader in the order they are tried (most specific first). Each format's
/// file defines its `*_reader()` factory; this list is in readers.cpp.
std::vector<ProfileReader> builtin_readers();

}  // namespace perflow::reader::detail
