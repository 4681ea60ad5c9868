#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perflow::explore {

/// A CSV file (RFC 4180: quoted fields may hold commas, quotes and line breaks) as text
/// cells: the header's column names and the rows.
struct CsvTable {
  std::string file;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  ///< each as long as `columns`

  /// The index of `name`; nullopt if it is no column.
  [[nodiscard]] std::optional<std::size_t> column(std::string_view name) const;
};

/// Reads a CSV file with a header line. Throws FormatError naming the file and line of a
/// row whose field count differs from the header's, or of an unterminated quote.
CsvTable read_csv_table(const std::filesystem::path& path);

}  // namespace perflow::explore
