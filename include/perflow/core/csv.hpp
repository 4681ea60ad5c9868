#pragma once

#include <span>
#include <string>
#include <string_view>

namespace perflow {

/// A CSV field (RFC 4180): as it is, or quoted with its quotes doubled when it holds a comma,
/// a quote or a line break.
std::string csv_field(std::string_view text);

/// One CSV record: the fields, each as csv_field writes it, joined by commas, then "\n".
std::string csv_record(std::span<const std::string> fields);

}  // namespace perflow
