#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
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

/// The longest line (or CSV record) a results file may have: 16 MiB.
inline constexpr std::size_t kMaxLineBytes = std::size_t{16} << 20;

/// Throws Error unless `path` is a regular file: "p: is a FIFO, not <what>" (or "p: cannot
/// open the file for reading" when there is none).
void require_regular_file(const std::filesystem::path& path, std::string_view what);

/// Reads a text file a line at a time, never holding more than one line: refuses a path
/// that is not a regular file (Error: "p: is a FIFO, not <what>": a device such as
/// /dev/zero never ends, a FIFO blocks) and a line longer than `max_line` bytes
/// (FormatError naming the file and line).
class LineReader {
 public:
  LineReader(const std::filesystem::path& path, std::string_view what,
             std::size_t max_line = kMaxLineBytes);

  /// The next line without its line break into `line`; false at the end of the file.
  /// `ended` is false for a last line the file ends in without a line break.
  bool next(std::string& line, bool& ended);
  /// The number of the line last returned (from 1).
  [[nodiscard]] std::size_t line_number() const { return line_; }
  /// The bytes read through the line last returned, its line break included.
  [[nodiscard]] std::uintmax_t offset() const { return offset_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] std::size_t max_line() const { return max_line_; }

 private:
  bool fill();

  std::string file_;
  std::string what_;
  std::size_t max_line_;
  std::ifstream in_;
  std::string buffer_;
  std::size_t pos_ = 0;
  std::size_t line_ = 0;
  std::uintmax_t offset_ = 0;
};

/// One CSV record as read: its fields, and whether it is well formed.
struct CsvRecord {
  std::vector<std::string> fields;
  std::string text;               ///< the record as written, line breaks inside quotes included
  std::string problem;            ///< empty when well formed, else what is wrong
  std::size_t problem_field = 0;  ///< the field (from 0) `problem` is about
  std::size_t line = 0;           ///< the line it starts on
  bool ended = true;              ///< false when the file ends inside it (no final line break)
};

/// Reads the next record (RFC 4180; a quoted field may span lines, the whole record at most
/// the reader's max_line bytes); false at the end of the file. A quote inside an unquoted
/// field or text after a closing quote is kept as text and named in `problem`; a quoted
/// field the file ends in is `ended == false` with a problem.
bool next_csv_record(LineReader& reader, CsvRecord& record);

/// Reads a CSV file with a header line. Throws FormatError naming the file and line of a
/// row whose field count differs from the header's, or of an unterminated quote, and
/// Error for a path that is not a regular file.
CsvTable read_csv_table(const std::filesystem::path& path);

}  // namespace perflow::explore
