#include "perflow/explore/csv_table.hpp"

#include <utility>

#include <fmt/format.h>

#include "perflow/core/atomic_file.hpp"
#include "perflow/core/error.hpp"

namespace perflow::explore {

std::optional<std::size_t> CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return i;
  }
  return std::nullopt;
}

void require_regular_file(const std::filesystem::path& path, std::string_view what) {
  // Checked before opening: opening a FIFO blocks until something writes to it.
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw Error(fmt::format("{}: cannot open the file for reading", path.string()));
  }
  if (const std::string kind = file_kind(path); !kind.empty()) {
    throw Error(fmt::format("{}: is {}, not {}", path.string(), kind, what));
  }
}

LineReader::LineReader(const std::filesystem::path& path, std::string_view what,
                       std::size_t max_line)
    : file_(path.string()), what_(what), max_line_(max_line) {
  require_regular_file(path, what);
  in_.open(path, std::ios::binary);
  if (!in_) throw Error(fmt::format("{}: cannot open the file for reading", file_));
}

bool LineReader::fill() {
  constexpr std::size_t kChunk = 64 * 1024;
  buffer_.resize(kChunk);
  in_.read(buffer_.data(), static_cast<std::streamsize>(kChunk));
  buffer_.resize(static_cast<std::size_t>(in_.gcount()));
  pos_ = 0;
  if (in_.bad()) throw Error(fmt::format("{}: cannot read the file", file_));
  return !buffer_.empty();
}

bool LineReader::next(std::string& line, bool& ended) {
  line.clear();
  bool any = false;
  while (true) {
    if (pos_ == buffer_.size() && !fill()) {
      if (!any) return false;
      ++line_;
      ended = false;
      return true;
    }
    any = true;
    const std::size_t end = buffer_.find('\n', pos_);
    const std::size_t stop = end == std::string::npos ? buffer_.size() : end;
    if (line.size() + (stop - pos_) > max_line_) {
      throw FormatError(
          file_, line_ + 1,
          fmt::format("a line longer than {} bytes; {} has no such lines", max_line_, what_));
    }
    line.append(buffer_, pos_, stop - pos_);
    offset_ += stop - pos_;
    pos_ = stop;
    if (end != std::string::npos) {
      ++pos_;
      ++offset_;
      ++line_;
      ended = true;
      return true;
    }
  }
}

bool next_csv_record(LineReader& reader, CsvRecord& record) {
  record.fields.clear();
  record.text.clear();
  record.problem.clear();
  record.problem_field = 0;
  record.ended = true;
  std::string line;
  bool ended = true;
  if (!reader.next(line, ended)) return false;
  record.line = reader.line_number();
  enum class State { FieldStart, Unquoted, Quoted, QuoteInQuoted };
  State state = State::FieldStart;
  std::string field;
  const auto note = [&](std::string_view what) {
    if (record.problem.empty()) {
      record.problem = what;
      record.problem_field = record.fields.size();
    }
  };
  while (true) {
    // A line break ending the line in a quoted field is part of the field.
    std::string_view text = line;
    if (ended && !text.empty() && text.back() == '\r' && state != State::Quoted) {
      text.remove_suffix(1);  // CRLF line breaks
    }
    record.text += line;
    for (const char c : text) {
      switch (state) {
        case State::FieldStart:
          if (c == '"') {
            state = State::Quoted;
            break;
          }
          state = State::Unquoted;
          [[fallthrough]];
        case State::Unquoted:
          if (c == ',') {
            record.fields.push_back(std::move(field));
            field.clear();
            state = State::FieldStart;
          } else {
            if (c == '"') note("a quote inside an unquoted field");
            field += c;
          }
          break;
        case State::Quoted:
          if (c == '"') {
            state = State::QuoteInQuoted;
          } else {
            field += c;
          }
          break;
        case State::QuoteInQuoted:
          if (c == '"') {  // a doubled quote
            field += '"';
            state = State::Quoted;
          } else if (c == ',') {
            record.fields.push_back(std::move(field));
            field.clear();
            state = State::FieldStart;
          } else {
            note("text after a closing quote");
            field += c;
            state = State::Unquoted;
          }
          break;
      }
    }
    if (state != State::Quoted) break;
    if (!ended) {
      note("a quoted field is not closed");
      record.ended = false;
      break;
    }
    field += '\n';
    record.text += '\n';
    std::string more;
    if (!reader.next(more, ended)) {
      note("a quoted field is not closed");
      record.ended = false;
      break;
    }
    if (record.text.size() + more.size() > reader.max_line()) {
      throw FormatError(reader.file(), record.line,
                        fmt::format("a record longer than {} bytes", reader.max_line()));
    }
    line = std::move(more);
  }
  record.fields.push_back(std::move(field));
  if (!ended) record.ended = false;
  return true;
}

CsvTable read_csv_table(const std::filesystem::path& path) {
  LineReader reader(path, "a CSV file");
  CsvTable table;
  table.file = path.string();
  CsvRecord record;
  while (next_csv_record(reader, record)) {
    if (record.problem == "a quoted field is not closed") {
      throw FormatError(table.file, record.line, "a quoted field is not closed");
    }
    if (table.columns.empty()) {
      table.columns = std::move(record.fields);
    } else if (record.fields.size() != table.columns.size()) {
      throw FormatError(table.file, record.line,
                        fmt::format("expected {} fields as in the header, got {}",
                                    table.columns.size(), record.fields.size()));
    } else {
      table.rows.push_back(std::move(record.fields));
    }
  }
  if (table.columns.empty())
    throw FormatError(table.file, 1, "expected a header line, got an empty file");
  return table;
}

}  // namespace perflow::explore
