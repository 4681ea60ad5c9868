#include "detail/csv.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "detail/excerpt.hpp"
#include "perflow/reader/profile_error.hpp"

namespace perflow::reader::detail {

namespace {

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    return lower(x) == lower(y);
  });
}

std::string line_location(std::size_t line) { return fmt::format("line {}", line); }

}  // namespace

CsvParser::CsvParser(std::string_view text, std::string file, std::size_t offset,
                     std::size_t first_line)
    : text_(text), file_(std::move(file)), pos_(offset), line_(first_line) {
  // A UTF-8 byte order mark is not part of the first field.
  if (pos_ == 0 && text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
}

bool CsvParser::next(std::vector<std::string>& fields) {
  fields.clear();
  const std::size_t size = text_.size();
  while (pos_ < size) {
    if (text_[pos_] == '\n') {
      ++pos_;
      ++line_;
    } else if (text_[pos_] == '\r' && pos_ + 1 < size && text_[pos_ + 1] == '\n') {
      pos_ += 2;
      ++line_;
    } else {
      break;
    }
  }
  if (pos_ >= size) return false;
  record_line_ = line_;
  std::string field;
  while (true) {
    if (pos_ < size && text_[pos_] == '"') {
      const std::size_t quote_line = line_;
      ++pos_;
      while (true) {
        if (pos_ >= size) {
          throw ProfileError(file_, line_location(quote_line),
                             "expected a closing quote, found the end of the file");
        }
        const char c = text_[pos_];
        if (c == '"') {
          if (pos_ + 1 < size && text_[pos_ + 1] == '"') {
            field += '"';
            pos_ += 2;
            continue;
          }
          ++pos_;
          break;
        }
        if (c == '\n') ++line_;
        field += c;
        ++pos_;
      }
      // After a closing quote only a separator or the end of the record may follow.
      if (pos_ < size && text_[pos_] != ',' && text_[pos_] != '\n' &&
          !(text_[pos_] == '\r' && pos_ + 1 < size && text_[pos_ + 1] == '\n')) {
        throw ProfileError(file_, line_location(line_),
                           fmt::format("expected ',' or a line end after a closing quote, "
                                       "found '{}'",
                                       excerpt(text_.substr(pos_, 1))));
      }
    } else {
      // Unquoted: up to the next separator; a stray quote inside is kept as text.
      const std::size_t end = text_.find_first_of(",\n", pos_);
      std::size_t stop = end == std::string_view::npos ? size : end;
      // The CR of a CRLF (or of a last line without LF) ends the record, not the field.
      if (stop > pos_ && text_[stop - 1] == '\r' && (stop == size || text_[stop] == '\n')) --stop;
      field.append(text_.substr(pos_, stop - pos_));
      pos_ = stop;
    }
    fields.push_back(std::move(field));
    field.clear();
    if (pos_ >= size) return true;
    if (text_[pos_] == ',') {
      ++pos_;
      continue;
    }
    pos_ += text_[pos_] == '\r' ? std::size_t{2} : std::size_t{1};  // "\r\n" or "\n"
    ++line_;
    return true;
  }
}

std::optional<CsvHeaderLine> find_csv_header(
    std::string_view text, const std::function<bool(const std::vector<std::string>&)>& is_header,
    std::size_t max_lines) {
  std::size_t pos = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  std::vector<std::string> fields;
  for (std::size_t line = 1; line <= max_lines && pos < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    try {
      CsvParser parser(text.substr(pos, end - pos), {}, 0);
      if (parser.next(fields) && is_header(fields)) return CsvHeaderLine{pos, line, fields};
    } catch (const ProfileError&) {
      // Not CSV: a preamble line.
    }
    pos = end + 1;
  }
  return std::nullopt;
}

bool has_columns(const std::vector<std::string>& names,
                 std::initializer_list<std::string_view> required) {
  return std::all_of(required.begin(), required.end(), [&](std::string_view want) {
    return std::any_of(names.begin(), names.end(),
                       [&](const std::string& name) { return equal_ignoring_case(name, want); });
  });
}

CsvTable::CsvTable(std::string_view text, std::string file,
                   const std::function<bool(const std::vector<std::string>&)>& is_header,
                   std::string_view expected)
    : file_(std::move(file)), parser_(text, file_) {
  const auto header = find_csv_header(text, is_header);
  if (!header) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
      throw ProfileError(file_, "",
                         fmt::format("expected a header line ({}), found an empty file", expected));
    }
    const std::size_t line =
        1 + static_cast<std::size_t>(
                std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(first), '\n'));
    const std::size_t end = std::min(text.find('\n', first), text.size());
    throw ProfileError(file_, line_location(line),
                       fmt::format("expected a header line ({}), found '{}'", expected,
                                   excerpt(text.substr(first, end - first))));
  }
  parser_ = CsvParser(text, file_, header->offset, header->line);
  parser_.next(names_);
  header_line_ = header->line;
}

std::optional<std::size_t> CsvTable::find(std::string_view name) const {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (equal_ignoring_case(names_[i], name)) return i;
  }
  return std::nullopt;
}

std::size_t CsvTable::require(std::string_view name) const { return require_any({name}); }

std::size_t CsvTable::require_any(std::initializer_list<std::string_view> names) const {
  for (std::string_view name : names) {
    if (const auto column = find(name)) return *column;
  }
  throw ProfileError(file_, line_location(header_line_),
                     fmt::format("expected column {}, found none (columns: {})",
                                 fmt::join(names, " or "), fmt::join(names_, ",")));
}

bool CsvTable::next() {
  if (!parser_.next(row_)) return false;
  if (row_.size() != names_.size()) {
    throw ProfileError(file_, line_location(parser_.line()),
                       fmt::format("expected {} columns ({}), found {}", names_.size(),
                                   fmt::join(names_, ","), row_.size()));
  }
  return true;
}

std::int64_t CsvTable::integer(std::size_t column) const {
  const auto value = parse_int64(row_[column]);
  if (!value) fail(column, "expected an integer");
  return *value;
}

std::optional<std::int64_t> CsvTable::optional_integer(std::size_t column) const {
  if (row_[column].find_first_not_of(" \t") == std::string::npos) return std::nullopt;
  return integer(column);
}

void CsvTable::fail(std::size_t column, std::string_view expected) const {
  const std::string& field = row_[column];
  throw ProfileError(
      file_, line_location(parser_.line()),
      fmt::format("column {}: {}, found {}", names_[column], expected,
                  field.empty() ? std::string("an empty field") : "'" + excerpt(field) + "'"));
}

std::optional<std::int64_t> parse_int64(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return std::nullopt;
  text = text.substr(first, text.find_last_not_of(" \t") + 1 - first);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace perflow::reader::detail
