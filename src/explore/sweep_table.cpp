#include "perflow/explore/sweep_table.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::explore {
namespace {

// RFC 4180: a field with a comma, a quote or a line break is quoted, quotes doubled.
void append_csv_field(std::string& out, std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += field;
    return;
  }
  out += '"';
  for (const char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

// A value in a CSV cell: a string as itself, anything else as JSON.
std::string cell_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

nlohmann::json optional_number(const std::optional<double>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

// The figures of an outcome as JSON values, in kResultColumns' order.
std::vector<nlohmann::json> figures(const RunOutcome& o) {
  if (!o.error.empty()) {
    return {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, o.error};
  }
  return {o.makespan,
          o.iteration_time,
          o.bubble_ratio,
          optional_number(o.tokens_per_s),
          optional_number(o.mfu),
          o.peak_memory,
          o.peak_total_memory,
          o.out_of_memory,
          nullptr};
}

// The run number a line starts with (CSV) or holds (JSON Lines), if it is well formed.
std::optional<std::uint64_t> run_of(std::string_view line, TableFormat format) {
  std::uint64_t run = 0;
  if (format == TableFormat::Csv) {
    const char* end = line.data() + line.size();
    const auto [ptr, ec] = std::from_chars(line.data(), end, run);
    if (ec != std::errc() || ptr == end || *ptr != ',') return std::nullopt;
    return run;
  }
  const nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
  if (row.is_discarded() || !row.is_object() || !row.contains("run") ||
      !row["run"].is_number_unsigned()) {
    return std::nullopt;
  }
  return row["run"].get<std::uint64_t>();
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open the file for reading", path.string()));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw Error(fmt::format("{}: cannot read the file", path.string()));
  return std::move(buffer).str();
}

}  // namespace

std::string table_header(const Sweep& sweep, TableFormat format) {
  if (format == TableFormat::Jsonl) return {};
  std::string line = "run";
  for (const std::string& pointer : sweep.pointers()) {
    line += ',';
    append_csv_field(line, pointer);
  }
  for (const std::string_view column : kResultColumns) {
    line += ',';
    line += column;
  }
  line += '\n';
  return line;
}

namespace {

// A row up to its figures: the run and the axis values, ending in ',' (the figures follow).
std::string row_key(const Sweep& sweep, std::uint64_t run, TableFormat format) {
  const std::vector<study::ConfigOverride> set = sweep.overrides(run);
  if (format == TableFormat::Jsonl) {
    nlohmann::ordered_json key;
    key["run"] = run;
    for (const study::ConfigOverride& o : set) key[o.pointer] = o.value;
    std::string text = key.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text.back() = ',';  // the closing brace
    return text;
  }
  std::string line = fmt::format("{}", run);
  for (const study::ConfigOverride& o : set) {
    line += ',';
    append_csv_field(line, cell_text(o.value));
  }
  line += ',';
  return line;
}

}  // namespace

std::string table_row(const Sweep& sweep, const RunOutcome& outcome, TableFormat format) {
  std::string line = row_key(sweep, outcome.run, format);
  const std::vector<nlohmann::json> values = figures(outcome);
  if (format == TableFormat::Jsonl) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i > 0) line += ',';
      // Invalid UTF-8 in a message cannot stop the sweep: it is replaced.
      line += nlohmann::json(kResultColumns[i]).dump();
      line += ':';
      line += values[i].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    line += "}\n";
    return line;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) line += ',';
    if (!values[i].is_null()) append_csv_field(line, cell_text(values[i]));
  }
  line += '\n';
  return line;
}

ResumePoint find_resume_point(const std::filesystem::path& path, const Sweep& sweep,
                              TableFormat format, std::uint64_t first, std::uint64_t max_rows) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  const std::string text = read_text(path);
  const std::string header = table_header(sweep, format);
  ResumePoint point;
  if (text.empty()) return point;
  if (!header.empty()) {
    if (text.compare(0, header.size(), header) != 0) {
      // A header cut short by a killed run is no header yet.
      if (text.find('\n') == std::string::npos && header.starts_with(text)) return point;
      const std::string_view found = std::string_view(text).substr(0, text.find('\n'));
      throw Error(fmt::format(
          "{}: holds the results of another sweep: its header is '{}', this sweep's is '{}'; "
          "remove it or write to another file",
          path.string(), found, std::string_view(header).substr(0, header.size() - 1)));
    }
    point.bytes = header.size();
  }
  std::size_t begin = point.bytes;
  while (begin < text.size() && point.rows < max_rows) {
    const std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) break;  // a partial last line: rewritten
    // The row of the expected run, with this sweep's axis values.
    const std::string key = row_key(sweep, first + point.rows, format);
    if (std::string_view(text).substr(begin, end - begin).substr(0, key.size()) != key) {
      throw Error(fmt::format(
          "{}: line {} is not the result of run {} of this sweep; it holds another sweep's "
          "results or was edited: remove it or write to another file",
          path.string(), std::count(text.begin(), text.begin() + long(begin), '\n') + 1,
          first + point.rows));
    }
    ++point.rows;
    begin = end + 1;
    point.bytes = begin;
  }
  return point;
}

std::string merge_tables(std::span<const std::filesystem::path> parts, TableFormat format) {
  std::string header;
  std::vector<std::pair<std::uint64_t, std::string>> rows;
  std::vector<std::string> from;  // the part each row came from, for messages
  for (const std::filesystem::path& part : parts) {
    const std::string text = read_text(part);
    std::size_t begin = 0;
    if (format == TableFormat::Csv) {
      const std::size_t end = text.find('\n');
      if (end == std::string::npos) {
        throw Error(fmt::format("{}: expected a sweep's CSV header line", part.string()));
      }
      const std::string part_header = text.substr(0, end + 1);
      if (header.empty()) header = part_header;
      if (part_header != header) {
        throw Error(
            fmt::format("{}: its header differs from {}'s: the parts are not of one "
                        "sweep",
                        part.string(), parts.front().string()));
      }
      begin = end + 1;
    }
    std::size_t line = format == TableFormat::Csv ? 2 : 1;
    while (begin < text.size()) {
      const std::size_t end = text.find('\n', begin);
      if (end == std::string::npos) {
        throw Error(
            fmt::format("{}:line {}: the last row is incomplete (the shard was "
                        "interrupted: rerun it to finish it)",
                        part.string(), line));
      }
      const std::string_view row = std::string_view(text).substr(begin, end - begin + 1);
      const std::optional<std::uint64_t> run = run_of(row.substr(0, row.size() - 1), format);
      if (!run) {
        throw Error(fmt::format("{}:line {}: expected a sweep result row", part.string(), line));
      }
      rows.emplace_back(*run, std::string(row));
      from.push_back(part.string());
      begin = end + 1;
      ++line;
    }
  }
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&rows](std::size_t a, std::size_t b) { return rows[a].first < rows[b].first; });
  std::string merged = header;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& [run, row] = rows[order[k]];
    if (run != k) {
      if (run < k) {
        throw Error(fmt::format("{}: run {} is also in another part", from[order[k]], run));
      }
      throw Error(
          fmt::format("run {} is in none of the parts (a shard is missing or "
                      "unfinished)",
                      k));
    }
    merged += row;
  }
  return merged;
}

TableFormat table_format_of(const std::filesystem::path& path, std::string_view option) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == ".csv") return TableFormat::Csv;
  if (extension == ".jsonl") return TableFormat::Jsonl;
  throw Error(fmt::format("{} '{}': expected a file ending in .csv or .jsonl, got '{}'", option,
                          path.string(), extension.empty() ? "no extension" : extension));
}

}  // namespace perflow::explore
