#include "perflow/explore/csv_table.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::explore {

std::optional<std::size_t> CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return i;
  }
  return std::nullopt;
}

CsvTable read_csv_table(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open the file for reading", path.string()));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw Error(fmt::format("{}: cannot read the file", path.string()));
  const std::string text = std::move(buffer).str();

  CsvTable table;
  table.file = path.string();
  std::vector<std::string> record;
  std::string field;
  std::size_t line = 1;
  std::size_t record_line = 1;
  const auto end_record = [&] {
    record.push_back(std::move(field));
    field.clear();
    if (table.columns.empty()) {
      table.columns = std::move(record);
    } else if (record.size() != table.columns.size()) {
      throw FormatError(table.file, record_line,
                        fmt::format("expected {} fields as in the header, got {}",
                                    table.columns.size(), record.size()));
    } else {
      table.rows.push_back(std::move(record));
    }
    record.clear();
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' && field.empty()) {  // a quoted field, to its closing quote
      const std::size_t opened = line;
      ++i;
      while (true) {
        if (i >= text.size()) throw FormatError(table.file, opened, "a quoted field is not closed");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (text[i] == '\n') ++line;
        field += text[i++];
      }
      continue;
    }
    if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_record();
      record_line = ++line;
    } else {
      field += c;
    }
    ++i;
  }
  if (!field.empty() || !record.empty()) end_record();  // no final line break
  if (table.columns.empty())
    throw FormatError(table.file, 1, "expected a header line, got an empty file");
  return table;
}

}  // namespace perflow::explore
