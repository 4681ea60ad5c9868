#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perflow::reader::detail {

/// Splits RFC 4180 text into records: fields separated by commas, records by LF or CRLF;
/// quoted fields may hold commas, line breaks and doubled quotes. Blank lines are skipped.
/// Throws ProfileError(file, "line N", ...) for an unterminated quote or text after one.
class CsvParser {
 public:
  CsvParser(std::string_view text, std::string file, std::size_t offset = 0,
            std::size_t first_line = 1);

  /// Reads the next record into `fields`; false at the end of the text.
  bool next(std::vector<std::string>& fields);
  /// The line on which the record last read starts (1-based).
  [[nodiscard]] std::size_t line() const { return record_line_; }

 private:
  std::string_view text_;
  std::string file_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::size_t record_line_ = 0;
};

/// Where a header line was found: its byte offset, its line number and its column names.
struct CsvHeaderLine {
  std::size_t offset = 0;
  std::size_t line = 0;
  std::vector<std::string> names;
};

/// Looks for the header among the first `max_lines` lines of `text` (tools print preamble
/// lines before it): the first line that parses as CSV and satisfies `is_header`.
std::optional<CsvHeaderLine> find_csv_header(
    std::string_view text, const std::function<bool(const std::vector<std::string>&)>& is_header,
    std::size_t max_lines = 32);

/// True if `names` holds every one of `required`, compared case-insensitively.
bool has_columns(const std::vector<std::string>& names,
                 std::initializer_list<std::string_view> required);

/// A CSV table read by column name: the header, then one row at a time with typed access
/// whose errors name the file, the line, the column, what was expected and what was found.
class CsvTable {
 public:
  /// Finds the header (see find_csv_header) or throws
  /// "file:line N: expected a header line (<expected>), found '<line>'".
  CsvTable(std::string_view text, std::string file,
           const std::function<bool(const std::vector<std::string>&)>& is_header,
           std::string_view expected);

  /// The column's index (case-insensitive), if the header has it.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const;
  /// The column's index, or throws "file:line N: expected column X, found none (...)".
  [[nodiscard]] std::size_t require(std::string_view name) const;
  /// Like require, for a column that has several names across tool versions.
  [[nodiscard]] std::size_t require_any(std::initializer_list<std::string_view> names) const;

  /// Reads the next row; throws if its width differs from the header's. False at the end.
  bool next();
  [[nodiscard]] std::size_t line() const { return parser_.line(); }
  [[nodiscard]] std::size_t header_line() const { return header_line_; }
  [[nodiscard]] const std::string& file() const { return file_; }

  [[nodiscard]] const std::string& text(std::size_t column) const { return row_[column]; }
  /// A whole decimal number, or throws "file:line N: column C: expected an integer, found 'x'".
  [[nodiscard]] std::int64_t integer(std::size_t column) const;
  /// As integer(), but an empty field is std::nullopt.
  [[nodiscard]] std::optional<std::int64_t> optional_integer(std::size_t column) const;
  /// Throws "file:line N: column C: <message>, found '<field>'".
  [[noreturn]] void fail(std::size_t column, std::string_view expected) const;

 private:
  std::string file_;
  CsvParser parser_;
  std::vector<std::string> names_;
  std::size_t header_line_ = 0;
  std::vector<std::string> row_;
};

/// Parses a whole decimal integer (optional leading '-', surrounding blanks ignored).
std::optional<std::int64_t> parse_int64(std::string_view text);

}  // namespace perflow::reader::detail
