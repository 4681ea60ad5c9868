#include "perflow/core/task_table.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "perflow/core/csv.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/huge_page_allocator.hpp"

// A million rows must take well under a second, so rows are written with std::to_chars
// straight into the output's buffer, a block of rows at a time, and everything that repeats
// along a lane (device, escaped or quoted lane name) is formatted once per lane. Strings go
// through nlohmann's escaping (JSON) or RFC 4180 quoting (CSV), but no DOM is built per row.
namespace perflow {
namespace {

/// Rows written between two resizes of the output.
constexpr std::size_t kBlockRows = 1024;
/// The longest integer field: an int64 with its sign.
constexpr std::size_t kMaxNumber = 20;

/// The fixed text of a row after the kind: separators and JSON keys.
constexpr std::size_t kCsvText = std::string_view(",,,,,,\n").size();
constexpr std::size_t kJsonlText =
    std::string_view(
        ",\"microbatch\":,\"chunk\":,\"stage\":,\"iteration\":,\"start_ns\":,\"end_ns\":}\n")
        .size();

/// Which of microbatch, chunk and stage a kind has (see render_task_table).
bool has_microbatch(TaskKind kind) {
  return kind != TaskKind::AllReduce && kind != TaskKind::ReduceScatter &&
         kind != TaskKind::AllGather && kind != TaskKind::Optimizer && kind != TaskKind::Sync;
}
bool has_chunk_and_stage(TaskKind kind) {
  return kind != TaskKind::Optimizer && kind != TaskKind::Sync;
}

/// A JSON string literal (escaped by nlohmann; invalid UTF-8 replaced, never thrown).
std::string json_string(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

char* put(char* p, std::string_view text) {
  std::memcpy(p, text.data(), text.size());
  return p + text.size();
}

template <class Integer>
char* put_number(char* p, Integer value) {
  return std::to_chars(p, p + kMaxNumber, value).ptr;
}

/// The per-lane and per-kind pieces of a row, formatted once.
struct RowParts {
  std::string lane_prefix;  ///< everything before the kind
  std::array<std::string, kTaskKindCount> kinds;
};

/// Writes one row at `p` and returns its end.
char* put_csv_row(char* p, const RowParts& parts, const EventGraph& graph, const Trace& trace,
                  TaskId t) {
  const TaskKind kind = graph.kind(t);
  p = put(p, parts.lane_prefix);
  p = put(p, parts.kinds[static_cast<std::size_t>(kind)]);
  *p++ = ',';
  if (has_microbatch(kind)) p = put_number(p, graph.microbatch(t));
  *p++ = ',';
  if (has_chunk_and_stage(kind)) p = put_number(p, graph.chunk(t));
  *p++ = ',';
  if (has_chunk_and_stage(kind)) p = put_number(p, graph.stage(t).value);
  *p++ = ',';
  p = put_number(p, graph.iteration(t));
  *p++ = ',';
  p = put_number(p, trace.start_of(t));
  *p++ = ',';
  p = put_number(p, trace.finish_of(t));
  *p++ = '\n';
  return p;
}

char* put_jsonl_row(char* p, const RowParts& parts, const EventGraph& graph, const Trace& trace,
                    TaskId t) {
  const TaskKind kind = graph.kind(t);
  p = put(p, parts.lane_prefix);
  p = put(p, parts.kinds[static_cast<std::size_t>(kind)]);
  p = put(p, ",\"microbatch\":");
  p = has_microbatch(kind) ? put_number(p, graph.microbatch(t)) : put(p, "null");
  p = put(p, ",\"chunk\":");
  p = has_chunk_and_stage(kind) ? put_number(p, graph.chunk(t)) : put(p, "null");
  p = put(p, ",\"stage\":");
  p = has_chunk_and_stage(kind) ? put_number(p, graph.stage(t).value) : put(p, "null");
  p = put(p, ",\"iteration\":");
  p = put_number(p, graph.iteration(t));
  p = put(p, ",\"start_ns\":");
  p = put_number(p, trace.start_of(t));
  p = put(p, ",\"end_ns\":");
  p = put_number(p, trace.finish_of(t));
  p = put(p, "}\n");
  return p;
}

}  // namespace

std::optional<TaskTableFormat> task_table_format_of(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == ".csv") return TaskTableFormat::Csv;
  if (extension == ".jsonl") return TaskTableFormat::Jsonl;
  return std::nullopt;
}

void append_task_table(std::string& out, const EventGraph& graph, const Trace& trace,
                       TaskTableFormat format) {
  check_trace(graph, trace);
  const bool csv = format == TaskTableFormat::Csv;
  RowParts parts;
  std::size_t longest_kind = 0;
  for (int k = 0; k < kTaskKindCount; ++k) {
    const std::string_view name = to_string(static_cast<TaskKind>(k));
    parts.kinds[static_cast<std::size_t>(k)] = csv ? std::string(name) : json_string(name);
    longest_kind = std::max(longest_kind, parts.kinds[static_cast<std::size_t>(k)].size());
  }
  if (csv) {
    for (const std::string_view column : kTaskTableColumns) {
      out += column;
      out += column == kTaskTableColumns.back() ? '\n' : ',';
    }
  }
  // A row's bound: the lane prefix, then the kind, six numbers (or nulls) and the text
  // between them (see put_csv_row and put_jsonl_row).
  const std::size_t row_rest = longest_kind + 6 * kMaxNumber + (csv ? kCsvText : kJsonlText);
  std::vector<std::string> prefixes(trace.lane_count());
  std::size_t bound = out.size();
  for (std::uint32_t l = 0; l < trace.lane_count(); ++l) {
    const LaneInfo& lane = graph.lane_info(LaneId{l});
    prefixes[l] = csv ? fmt::format("{},{},", lane.device.value, csv_field(lane.name))
                      : fmt::format("{{\"device\":{},\"lane\":{},\"kind\":", lane.device.value,
                                    json_string(lane.name));
    bound += trace.lane_events[l].size() * (prefixes[l].size() + row_rest);
  }
  // Reserved once for the worst case, so the text is never copied while it grows; only the
  // pages written are ever touched, and large ones are huge pages (fewer page faults).
  out.reserve(bound);
  if (out.capacity() > out.size()) {
    detail::advise_huge_pages(out.data() + out.size(), out.capacity() - out.size());
  }

  for (std::uint32_t l = 0; l < trace.lane_count(); ++l) {
    const std::span<const TaskId> events = trace.events(LaneId{l});
    if (events.empty()) continue;
    parts.lane_prefix = std::move(prefixes[l]);
    const std::size_t row_bound = parts.lane_prefix.size() + row_rest;
    for (std::size_t first = 0; first < events.size(); first += kBlockRows) {
      const std::size_t count = std::min(kBlockRows, events.size() - first);
      const std::size_t used = out.size();
      out.resize(used + count * row_bound);
      char* p = out.data() + used;
      for (const TaskId t : events.subspan(first, count)) {
        p = csv ? put_csv_row(p, parts, graph, trace, t) : put_jsonl_row(p, parts, graph, trace, t);
      }
      out.resize(static_cast<std::size_t>(p - out.data()));
    }
  }
}

std::string render_task_table(const EventGraph& graph, const Trace& trace, TaskTableFormat format) {
  std::string out;
  append_task_table(out, graph, trace, format);
  return out;
}

// ---- Reading a table back ----

namespace {

/// Walks the text record by record, counting lines for messages.
class TableReader {
 public:
  TableReader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  /// Reports a problem at the line the current record starts on.
  [[noreturn]] void fail(const std::string& message) const {
    throw FormatError(source_, record_line_, message);
  }

  /// The next CSV record's fields (RFC 4180: quoted fields may hold commas, doubled quotes
  /// and line breaks; records end with LF or CRLF); false at the end of the text.
  bool next_csv_record(std::vector<std::string>& fields) {
    fields.clear();
    if (pos_ >= text_.size()) return false;
    record_line_ = line_;
    std::string field;
    while (true) {
      if (pos_ < text_.size() && text_[pos_] == '"') {
        ++pos_;
        while (true) {
          if (pos_ >= text_.size()) fail("unterminated quoted field");
          const char c = text_[pos_++];
          if (c == '"' && (pos_ >= text_.size() || text_[pos_] != '"')) break;
          if (c == '"') ++pos_;  // a doubled quote stands for one
          if (c == '\n') ++line_;
          field += c;
        }
        if (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' &&
            text_[pos_] != '\r') {
          fail("text after a quoted field's closing quote");
        }
      } else {
        std::size_t stop = text_.find_first_of(",\r\n\"", pos_);
        if (stop == std::string_view::npos) stop = text_.size();
        if (stop < text_.size() && text_[stop] == '"') fail("a quote inside an unquoted field");
        field.append(text_.substr(pos_, stop - pos_));
        pos_ = stop;
      }
      fields.push_back(std::move(field));
      field.clear();
      if (pos_ >= text_.size()) return true;
      const char c = text_[pos_++];
      if (c == ',') continue;
      if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
      ++line_;
      return true;
    }
  }

  /// The next line, without its LF or CRLF; false at the end of the text.
  bool next_line(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    record_line_ = line_++;
    std::size_t stop = text_.find('\n', pos_);
    if (stop == std::string_view::npos) stop = text_.size();
    line = text_.substr(pos_, stop - pos_);
    if (line.ends_with('\r')) line.remove_suffix(1);
    pos_ = std::min(stop + 1, text_.size());
    return true;
  }

 private:
  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;  ///< the line pos_ is on
  std::size_t record_line_ = 1;
};

template <class Integer>
Integer parse_integer(const TableReader& reader, std::string_view column, std::string_view text) {
  Integer value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    reader.fail(fmt::format("{}: expected an integer in [{}, {}], got '{}'", column,
                            std::numeric_limits<Integer>::min(),
                            std::numeric_limits<Integer>::max(), text));
  }
  return value;
}

std::optional<std::uint32_t> parse_optional(const TableReader& reader, std::string_view column,
                                            std::string_view text) {
  if (text.empty()) return std::nullopt;
  return parse_integer<std::uint32_t>(reader, column, text);
}

TaskKind parse_kind(const TableReader& reader, std::string_view text) {
  const auto kind = parse_task_kind(text);
  if (!kind) {
    std::string kinds;
    for (int k = 0; k < kTaskKindCount; ++k) {
      kinds += (k > 0 ? ", " : "") + std::string(to_string(static_cast<TaskKind>(k)));
    }
    reader.fail(fmt::format("kind: expected one of {}, got '{}'", kinds, text));
  }
  return *kind;
}

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

std::vector<TaskTableRow> parse_csv(std::string_view text, const std::string& source) {
  TableReader reader(text, source);
  std::vector<std::string> fields;
  const std::string header = fmt::format("{}", fmt::join(kTaskTableColumns, ","));
  if (!reader.next_csv_record(fields)) reader.fail("empty table: expected the header line");
  if (fmt::format("{}", fmt::join(fields, ",")) != header) {
    reader.fail(fmt::format("expected the header '{}', got '{}'", header, fmt::join(fields, ",")));
  }
  std::vector<TaskTableRow> rows;
  while (reader.next_csv_record(fields)) {
    if (fields.size() == 1 && blank(fields[0])) continue;
    if (fields.size() != kTaskTableColumns.size()) {
      reader.fail(
          fmt::format("expected {} fields, got {}", kTaskTableColumns.size(), fields.size()));
    }
    TaskTableRow row;
    row.device = parse_integer<std::uint32_t>(reader, "device", fields[0]);
    row.lane = std::move(fields[1]);
    row.kind = parse_kind(reader, fields[2]);
    row.microbatch = parse_optional(reader, "microbatch", fields[3]);
    row.chunk = parse_optional(reader, "chunk", fields[4]);
    row.stage = parse_optional(reader, "stage", fields[5]);
    row.iteration = parse_integer<std::uint32_t>(reader, "iteration", fields[6]);
    row.start_ns = parse_integer<TimeNs>(reader, "start_ns", fields[7]);
    row.end_ns = parse_integer<TimeNs>(reader, "end_ns", fields[8]);
    rows.push_back(std::move(row));
  }
  return rows;
}

template <class Integer>
Integer json_integer(const TableReader& reader, const nlohmann::json& object,
                     std::string_view key) {
  const nlohmann::json& value = object.at(std::string(key));
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (std::in_range<Integer>(u)) return static_cast<Integer>(u);
  } else if (value.is_number_integer()) {
    const auto i = value.get<std::int64_t>();
    if (std::in_range<Integer>(i)) return static_cast<Integer>(i);
  }
  reader.fail(fmt::format("{}: expected an integer in [{}, {}], got {}", key,
                          std::numeric_limits<Integer>::min(), std::numeric_limits<Integer>::max(),
                          value.dump()));
}

std::optional<std::uint32_t> json_optional(const TableReader& reader, const nlohmann::json& object,
                                           std::string_view key) {
  if (object.at(std::string(key)).is_null()) return std::nullopt;
  return json_integer<std::uint32_t>(reader, object, key);
}

std::string json_text(const TableReader& reader, const nlohmann::json& object,
                      std::string_view key) {
  const nlohmann::json& value = object.at(std::string(key));
  if (!value.is_string()) {
    reader.fail(fmt::format("{}: expected a string, got {}", key, value.dump()));
  }
  return value.get<std::string>();
}

std::vector<TaskTableRow> parse_jsonl(std::string_view text, const std::string& source) {
  TableReader reader(text, source);
  std::vector<std::string> expected(kTaskTableColumns.begin(), kTaskTableColumns.end());
  std::sort(expected.begin(), expected.end());
  std::vector<TaskTableRow> rows;
  std::string_view line;
  while (reader.next_line(line)) {
    if (blank(line)) continue;
    const nlohmann::json object = nlohmann::json::parse(line, nullptr, false);
    if (object.is_discarded() || !object.is_object()) reader.fail("expected a JSON object");
    std::vector<std::string> keys;
    for (const auto& item : object.items()) keys.push_back(item.key());
    if (keys != expected) {  // nlohmann's objects iterate in key order
      reader.fail(fmt::format("expected the keys {}, got {}", fmt::join(kTaskTableColumns, ", "),
                              fmt::join(keys, ", ")));
    }
    TaskTableRow row;
    row.device = json_integer<std::uint32_t>(reader, object, "device");
    row.lane = json_text(reader, object, "lane");
    row.kind = parse_kind(reader, json_text(reader, object, "kind"));
    row.microbatch = json_optional(reader, object, "microbatch");
    row.chunk = json_optional(reader, object, "chunk");
    row.stage = json_optional(reader, object, "stage");
    row.iteration = json_integer<std::uint32_t>(reader, object, "iteration");
    row.start_ns = json_integer<TimeNs>(reader, object, "start_ns");
    row.end_ns = json_integer<TimeNs>(reader, object, "end_ns");
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::vector<TaskTableRow> parse_task_table(std::string_view text, TaskTableFormat format,
                                           const std::string& source) {
  return format == TaskTableFormat::Csv ? parse_csv(text, source) : parse_jsonl(text, source);
}

}  // namespace perflow
