#include "perflow/explore/sweep_table.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "perflow/core/csv.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/excerpt.hpp"
#include "perflow/explore/csv_table.hpp"

namespace perflow::explore {
namespace {

constexpr std::size_t kFigures = std::size(kResultColumns);
constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

// What is wrong with text a row holds: a NUL or a byte that is not UTF-8; empty if nothing.
std::string text_problem(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\0') return fmt::format("a NUL byte at byte {}", i + 1);
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      return fmt::format("byte {} (0x{:02x}) is not UTF-8", i + 1,
                         static_cast<unsigned char>(text[i]));
    }
    i += n;
  }
  return {};
}

// Text with every NUL and byte that is not UTF-8 replaced by U+FFFD.
std::string clean_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = text[i] == '\0' ? 0 : utf8_sequence_length(text, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

// RFC 4180 (core/csv.hpp), of the text made valid UTF-8 without control characters.
void append_csv_field(std::string& out, std::string_view raw) { out += csv_field(clean_text(raw)); }

// A value in a CSV cell: a string as itself, anything else as JSON.
std::string cell_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>()
                           : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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

// The CSV text of figures (empty where null).
std::string csv_figures(const std::vector<nlohmann::json>& values) {
  std::string line;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) line += ',';
    if (!values[i].is_null()) append_csv_field(line, cell_text(values[i]));
  }
  return line;
}

std::string jsonl_figures(const std::vector<nlohmann::json>& values) {
  std::string line;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) line += ',';
    // Invalid UTF-8 in a message cannot stop the sweep: it is replaced.
    line += nlohmann::json(kResultColumns[i]).dump();
    line += ':';
    line += values[i].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return line;
}

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

// ---- Reading rows back ----------------------------------------------------------------

// Why a row is not a sweep's row: the field and what was expected there.
struct RowProblem {
  std::string field;  // a column name, or empty for the row as a whole
  std::string message;
};

std::string describe(const RowProblem& p, std::optional<std::uint64_t> run) {
  const std::string of_run = run ? fmt::format(" of run {}", *run) : std::string();
  if (p.field.empty()) return fmt::format("the row{}: {}", of_run, p.message);
  return fmt::format("field '{}'{}: {}", p.field, of_run, p.message);
}

// A CSV cell of figure column `c` as the JSON value it stands for (text that is not one
// stays text, for the check to name).
nlohmann::json csv_figure(std::size_t c, const std::string& cell) {
  if (cell.empty()) return nullptr;
  const std::string_view name = kResultColumns[c];
  if (name == "error") return cell;
  if (name == "out_of_memory") {
    if (cell == "true") return true;
    if (cell == "false") return false;
    return cell;
  }
  nlohmann::json number = nlohmann::json::parse(cell, nullptr, false);
  if (number.is_discarded() || !number.is_number()) return cell;
  return number;
}

// Checks the figures (kResultColumns' order) of a row; `written[c]` is how each was found.
std::optional<RowProblem> check_figures(const std::vector<nlohmann::json>& values,
                                        const std::vector<std::string>& written) {
  const nlohmann::json& error = values[kFigures - 1];
  const auto found = [&](std::size_t c) { return fmt::format("found '{}'", excerpt(written[c])); };
  if (!error.is_null() && (!error.is_string() || error.get<std::string>().empty())) {
    return RowProblem{"error", "expected a message or nothing, " + found(kFigures - 1)};
  }
  if (error.is_string()) {
    if (const std::string bad = text_problem(error.get<std::string>()); !bad.empty()) {
      return RowProblem{"error", bad};
    }
  }
  for (std::size_t c = 0; c + 1 < kFigures; ++c) {
    const nlohmann::json& v = values[c];
    const std::string name(kResultColumns[c]);
    if (!error.is_null()) {
      if (!v.is_null()) {
        return RowProblem{name, "expected nothing (the run has an error), " + found(c)};
      }
      continue;
    }
    const bool optional = name == "tokens_per_s" || name == "mfu";
    if (name == "out_of_memory") {
      if (!v.is_boolean()) return RowProblem{name, "expected true or false, " + found(c)};
    } else if (name == "makespan_ns" || name == "iteration_time_ns") {
      if (!v.is_number_unsigned()) {
        return RowProblem{name, "expected a whole number of nanoseconds, " + found(c)};
      }
    } else if (!(v.is_number() || (optional && v.is_null()) || written[c] == "null")) {
      // (a figure that is not finite is written as JSON writes it: null)
      return RowProblem{
          name, fmt::format("expected a number{}, {}", optional ? " or nothing" : "", found(c))};
    }
    if (v.is_number()) {
      const std::string canonical = v.dump();
      const std::string& as_written = written[c];
      if (canonical != as_written) {
        return RowProblem{name, fmt::format("expected the number as PerFlow writes it ('{}'), {}",
                                            excerpt(canonical), found(c))};
      }
    }
  }
  return std::nullopt;
}

// A run number as PerFlow writes it (digits, no sign, no leading zero).
std::optional<std::uint64_t> parse_run(std::string_view text) {
  std::uint64_t run = 0;
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), run);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return run;
}

// A row read back: its run, or the problem that makes it no row of the sweep.
struct ReadRow {
  std::optional<std::uint64_t> run;
  std::optional<RowProblem> problem;
};

// The CSV header's axis pointers, checked to be a sweep's header; throws FormatError.
std::vector<std::string> csv_header_pointers(const CsvRecord& header, const std::string& file) {
  const std::vector<std::string>& f = header.fields;
  const auto fail = [&](const std::string& what) {
    throw FormatError(file, header.line, "expected a sweep's CSV header line: " + what);
  };
  if (!header.problem.empty()) fail(header.problem);
  if (f.size() < kFigures + 2 || f.front() != "run") {
    fail(fmt::format("'run', the axes' pointers, then {}", fmt::join(kResultColumns, ",")));
  }
  for (std::size_t c = 0; c < kFigures; ++c) {
    if (f[f.size() - kFigures + c] != kResultColumns[c]) {
      fail(fmt::format("column {} is '{}', expected '{}'", f.size() - kFigures + c + 1,
                       excerpt(f[f.size() - kFigures + c]), kResultColumns[c]));
    }
  }
  std::vector<std::string> pointers(f.begin() + 1, f.end() - static_cast<long>(kFigures));
  for (const std::string& p : pointers) {
    if (p.empty() || p.front() != '/') fail(fmt::format("'{}' is no JSON pointer", excerpt(p)));
  }
  return pointers;
}

// Checks one CSV record as a row of a sweep with `pointers` as axes.
ReadRow check_csv_row(const CsvRecord& record, const std::vector<std::string>& pointers) {
  ReadRow row;
  std::vector<std::string> names = {"run"};
  names.insert(names.end(), pointers.begin(), pointers.end());
  for (const std::string_view c : kResultColumns) names.emplace_back(c);
  const std::vector<std::string>& f = record.fields;
  if (!f.empty()) row.run = parse_run(f.front());
  if (!record.problem.empty()) {
    const std::size_t at = record.problem_field;
    row.problem = RowProblem{at < names.size() ? names[at] : std::string(), record.problem};
    return row;
  }
  if (f.size() != names.size()) {
    row.problem = RowProblem{
        "", fmt::format("expected {} fields as in the header, found {}", names.size(), f.size())};
    return row;
  }
  if (!row.run) {
    row.problem =
        RowProblem{"run", fmt::format("expected a run number, found '{}'", excerpt(f[0]))};
    return row;
  }
  for (std::size_t c = 0; c < f.size(); ++c) {
    if (const std::string bad = text_problem(f[c]); !bad.empty()) {
      row.problem = RowProblem{names[c], bad};
      return row;
    }
  }
  std::vector<nlohmann::json> values;
  std::vector<std::string> written(f.end() - static_cast<long>(kFigures), f.end());
  for (std::size_t c = 0; c < kFigures; ++c) values.push_back(csv_figure(c, written[c]));
  if ((row.problem = check_figures(values, written))) return row;
  // Quoting as PerFlow quotes.
  std::string again = f[0];
  for (std::size_t a = 0; a < pointers.size(); ++a) {
    again += ',';
    append_csv_field(again, f[1 + a]);
  }
  again += ',';
  again += csv_figures(values);
  if (again != record.text) {
    row.problem =
        RowProblem{"", fmt::format("expected it written as PerFlow writes it ('{}'), found '{}'",
                                   excerpt(again), excerpt(record.text))};
  }
  return row;
}

// Checks one JSON Lines line as a row of a sweep with `pointers` as axes; with no pointers
// given (merge), takes them from the row and sets `pointers`.
ReadRow check_jsonl_row(const std::string& line,
                        std::optional<std::vector<std::string>>& pointers) {
  ReadRow row;
  nlohmann::ordered_json value;
  try {
    value = nlohmann::ordered_json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    if (const std::size_t at = what.find("] "); at != std::string::npos) what.erase(0, at + 2);
    // "parse error at line 1, column 211: ...": the row is one line.
    constexpr std::string_view kAt = "parse error at line 1, ";
    if (what.starts_with(kAt)) what = "at " + what.substr(kAt.size());
    row.problem = RowProblem{"", "invalid JSON " + excerpt(what, 300)};
    return row;
  }
  if (!value.is_object()) {
    row.problem = RowProblem{"", "expected a JSON object"};
    return row;
  }
  if (const auto run = value.find("run"); run != value.end() && run->is_number_unsigned()) {
    row.run = run->get<std::uint64_t>();
  }
  std::vector<std::string> keys;
  for (const auto& [key, v] : value.items()) keys.push_back(key);
  if (!pointers) {  // run, then the pointers, up to the first figure
    const auto figure = std::find(keys.begin(), keys.end(), std::string(kResultColumns[0]));
    if (keys.empty() || keys.front() != "run" || figure == keys.end() ||
        figure == keys.begin() + 1) {
      row.problem =
          RowProblem{"", fmt::format("expected the keys 'run', the axes' pointers, then {}",
                                     fmt::join(kResultColumns, ", "))};
      return row;
    }
    pointers = std::vector<std::string>(keys.begin() + 1, figure);
  }
  std::vector<std::string> expected = {"run"};
  expected.insert(expected.end(), pointers->begin(), pointers->end());
  for (const std::string_view c : kResultColumns) expected.emplace_back(c);
  for (std::size_t k = 0; k < std::max(keys.size(), expected.size()); ++k) {
    if (k < keys.size() && k < expected.size() && keys[k] == expected[k]) continue;
    if (k >= keys.size()) {
      row.problem = RowProblem{expected[k], "missing"};
    } else if (k >= expected.size()) {
      row.problem = RowProblem{"", fmt::format("unexpected key '{}'", excerpt(keys[k]))};
    } else {
      row.problem = RowProblem{
          "", fmt::format("expected key '{}', found '{}'", expected[k], excerpt(keys[k]))};
    }
    return row;
  }
  if (!row.run) {
    row.problem = RowProblem{
        "run", fmt::format("expected a run number, found '{}'", excerpt(value["run"].dump()))};
    return row;
  }
  std::vector<nlohmann::json> values;
  std::vector<std::string> written;
  for (const std::string_view c : kResultColumns) {
    values.push_back(value[std::string(c)]);
    written.push_back(
        value[std::string(c)].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  if ((row.problem = check_figures(values, written))) return row;
  if (value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) != line) {
    row.problem = RowProblem{
        "", "expected it written as PerFlow writes it ('" +
                excerpt(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
                "')"};
  }
  return row;
}

// Reads a results file's rows one at a time, each checked.
class RowReader {
 public:
  RowReader(const std::filesystem::path& path, TableFormat format)
      : reader_(path, "a sweep results file"), format_(format) {}

  LineReader& lines() { return reader_; }

  // The CSV header (the first record), or nullopt for an empty file.
  std::optional<CsvRecord> header() {
    CsvRecord record;
    if (!next_csv_record(reader_, record)) return std::nullopt;
    return record;
  }

  // The next row: false at the end. `text` is it as written (line break included when it
  // has one), `ended` false for a last row without a line break.
  bool next(std::optional<std::vector<std::string>>& pointers, ReadRow& row, std::string& text,
            bool& ended, std::size_t& line) {
    if (format_ == TableFormat::Csv) {
      if (!next_csv_record(reader_, record_)) return false;
      line = record_.line;
      ended = record_.ended;
      text = record_.text;
      row = check_csv_row(record_, *pointers);
    } else {
      if (!reader_.next(text, ended)) return false;
      line = reader_.line_number();
      row = check_jsonl_row(text, pointers);
    }
    if (ended) text += '\n';
    return true;
  }

 private:
  LineReader reader_;
  TableFormat format_;
  CsvRecord record_;
};

std::string format_name(TableFormat format) { return format == TableFormat::Csv ? "csv" : "jsonl"; }

std::string short_digest(const std::string& digest) {
  return digest.substr(0, std::min<std::size_t>(digest.size(), 19));  // "sha256:" + 12
}

}  // namespace

RunRange shard_runs(std::uint64_t runs, std::uint64_t index, std::uint64_t count) {
  // 128-bit products keep runs * i / count exact for any --shard.
  __extension__ using Wide = unsigned __int128;
  const auto at = [&](std::uint64_t i) {
    return static_cast<std::uint64_t>(static_cast<Wide>(runs) * i / count);
  };
  return {at(index), at(index + 1)};
}

TableIdentity identity_of(const Sweep& sweep, std::uint64_t shard, std::uint64_t shards,
                          TableFormat format) {
  return {sweep.digest, sweep.run_count(), shard, shards, format};
}

std::filesystem::path identity_path(const std::filesystem::path& results) {
  std::filesystem::path path = results;
  path += ".identity.json";
  return path;
}

std::string identity_text(const TableIdentity& identity) {
  nlohmann::ordered_json j;
  j["perflow"] = "sweep results";
  j["sweep"] = identity.digest;
  j["runs"] = identity.runs;
  j["shard"] = fmt::format("{}/{}", identity.shard, identity.shards);
  j["format"] = format_name(identity.format);
  return j.dump(2) + "\n";
}

std::optional<TableIdentity> read_identity(const std::filesystem::path& results) {
  const std::filesystem::path path = identity_path(results);
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return std::nullopt;
  const auto fail = [&](const std::string& what) -> TableIdentity {
    throw Error(
        fmt::format("{}: is not the identity file of sweep results: {}", path.string(), what));
  };
  // Small: a few lines, one of them at most 4 KiB.
  LineReader reader(path, "a sweep results identity file", 4096);
  std::string text;
  std::string line;
  bool ended = true;
  while (reader.next(line, ended)) {
    if (reader.line_number() > 16) return fail("more than 16 lines");
    text += line + '\n';
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return fail("expected a JSON object");
  if (j.value("perflow", "") != "sweep results")
    return fail("expected \"perflow\": \"sweep results\"");
  TableIdentity identity;
  const auto string_at = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_string())
      fail(fmt::format("expected a string at '{}'", key));
    return j[key].get<std::string>();
  };
  identity.digest = string_at("sweep");
  if (!j.contains("runs") || !j["runs"].is_number_unsigned()) fail("expected a count at 'runs'");
  identity.runs = j["runs"].get<std::uint64_t>();
  const std::string shard = string_at("shard");
  const std::size_t slash = shard.find('/');
  const auto index = parse_run(std::string_view(shard).substr(0, slash));
  const auto count = slash == std::string::npos
                         ? std::nullopt
                         : parse_run(std::string_view(shard).substr(slash + 1));
  if (!index || !count || *count == 0 || *index >= *count) fail("expected 'shard' as I/N");
  identity.shard = *index;
  identity.shards = *count;
  const std::string format = string_at("format");
  if (format != "csv" && format != "jsonl") fail("expected 'format' csv or jsonl");
  identity.format = format == "csv" ? TableFormat::Csv : TableFormat::Jsonl;
  return identity;
}

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

std::string table_row(const Sweep& sweep, const RunOutcome& outcome, TableFormat format) {
  std::string line = row_key(sweep, outcome.run, format);
  const std::vector<nlohmann::json> values = figures(outcome);
  if (format == TableFormat::Jsonl) {
    line += jsonl_figures(values);
    line += "}\n";
    return line;
  }
  line += csv_figures(values);
  line += '\n';
  return line;
}

ResumePoint find_resume_point(const std::filesystem::path& path, const Sweep& sweep,
                              const TableIdentity& identity, std::uint64_t max_rows) {
  const TableFormat format = identity.format;
  const std::uint64_t first = shard_runs(identity.runs, identity.shard, identity.shards).first;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  RowReader rows(path, format);  // refuses what is not a regular file
  if (std::filesystem::file_size(path, ec) == 0 && !ec) return {};
  const std::optional<TableIdentity> found = read_identity(path);
  if (found && *found != identity) {
    std::string what;
    if (found->digest != identity.digest) {
      what = fmt::format("the results of another sweep ({} names {}, this sweep is {})",
                         identity_path(path).string(), short_digest(found->digest),
                         short_digest(identity.digest));
    } else if (found->shard != identity.shard || found->shards != identity.shards) {
      what = fmt::format("shard {}/{} of this sweep, not shard {}/{}", found->shard, found->shards,
                         identity.shard, identity.shards);
    } else {
      what = fmt::format("{} results, not {}", format_name(found->format), format_name(format));
    }
    throw Error(
        fmt::format("{}: holds {}; remove it or write to another file", path.string(), what));
  }
  ResumePoint point;
  point.without_identity = !found;
  // The file is this sweep's for sure once its identity, its header or a row says so: a
  // malformed row is then run again; before that, it is another file, not appended to.
  bool ours = found.has_value();
  const std::string header = table_header(sweep, format);
  std::optional<std::vector<std::string>> pointers = sweep.pointers();
  if (format == TableFormat::Csv) {
    const std::optional<CsvRecord> record = rows.header();
    if (!record) return point;
    if (record->text + "\n" != header || !record->ended) {
      // A header cut short by a killed run is no header yet.
      if (!record->ended && header.starts_with(record->text)) return point;
      throw Error(fmt::format(
          "{}: holds the results of another sweep: its header is '{}', this sweep's is '{}'; "
          "remove it or write to another file",
          path.string(), excerpt(record->text),
          std::string_view(header).substr(0, header.size() - 1)));
    }
    point.bytes = rows.lines().offset();
    ours = true;
  }
  ReadRow row;
  std::string text;
  bool ended = true;
  std::size_t line = 0;
  while (point.rows < max_rows && rows.next(pointers, row, text, ended, line)) {
    if (!ended) break;  // a partial last line: rewritten
    const std::uint64_t run = first + point.rows;
    if (row.problem) {
      const std::string reason =
          fmt::format("{}:line {}: {}", path.string(), line, describe(*row.problem, row.run));
      if (!ours) {
        throw Error(
            fmt::format("{}; it holds another sweep's results or was edited: remove it or "
                        "write to another file",
                        reason));
      }
      point.rerun_reason = reason;
      break;
    }
    // The row of the expected run, with this sweep's axis values.
    const std::string key = row_key(sweep, run, format);
    if (text.compare(0, key.size(), key) != 0) {
      throw Error(fmt::format(
          "{}: line {} is not the result of run {} of this sweep; it holds another sweep's "
          "results or was edited: remove it or write to another file",
          path.string(), line, run));
    }
    ours = true;
    ++point.rows;
    point.bytes = rows.lines().offset();
  }
  return point;
}

MergedTable merge_tables(std::span<const std::filesystem::path> parts, TableFormat format) {
  MergedTable merged;
  // Identities first: which parts are which shard of which sweep.
  std::vector<std::optional<TableIdentity>> ids;
  for (const std::filesystem::path& part : parts) {
    const std::string name = part.filename().string();
    if (name.ends_with(".identity.json")) {
      throw Error(
          fmt::format("{}: is the identity file of a results file, not one: name the results files",
                      part.string()));
    }
    require_regular_file(part, "a sweep results file");
    ids.push_back(read_identity(part));
  }
  const auto with = static_cast<std::size_t>(
      std::count_if(ids.begin(), ids.end(), [](const auto& id) { return id.has_value(); }));
  std::vector<std::size_t> order(parts.size());  // the parts in the order their rows go
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (with > 0 && with < parts.size()) {
    const std::size_t without = static_cast<std::size_t>(
        std::find_if(ids.begin(), ids.end(), [](const auto& id) { return !id.has_value(); }) -
        ids.begin());
    const std::size_t has = static_cast<std::size_t>(
        std::find_if(ids.begin(), ids.end(), [](const auto& id) { return id.has_value(); }) -
        ids.begin());
    throw Error(fmt::format(
        "{}: has no identity file ({}), while {} has one: the parts cannot be checked to be "
        "the shards of one sweep; copy the identity files along with the results",
        parts[without].string(), identity_path(parts[without]).string(), parts[has].string()));
  }
  if (with > 0) {
    const TableIdentity& ref = *ids.front();
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const TableIdentity& id = *ids[i];
      if (id.digest != ref.digest || id.runs != ref.runs) {
        throw Error(fmt::format(
            "{} and {} hold results of different sweeps ({} and {}); merge the shards of one "
            "sweep",
            parts.front().string(), parts[i].string(), short_digest(ref.digest),
            short_digest(id.digest)));
      }
      if (id.shards != ref.shards) {
        throw Error(fmt::format(
            "{} is shard {}/{} and {} is shard {}/{}: the parts are not "
            "shards of one split of the sweep",
            parts.front().string(), ref.shard, ref.shards, parts[i].string(), id.shard, id.shards));
      }
      if (id.format != format) {
        throw Error(fmt::format("{}: holds {} results; the merged file is {}", parts[i].string(),
                                format_name(id.format), format_name(format)));
      }
    }
    std::map<std::uint64_t, std::size_t> shard_part;  // shard index -> part
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const auto [at, added] = shard_part.emplace(ids[i]->shard, i);
      if (!added) {
        throw Error(fmt::format("{} and {} are both shard {}/{}: give each shard once",
                                parts[at->second].string(), parts[i].string(), ids[i]->shard,
                                ref.shards));
      }
    }
    order.clear();
    for (std::uint64_t s = 0; s < ref.shards; ++s) {
      const auto at = shard_part.find(s);
      if (at == shard_part.end()) {
        const RunRange range = shard_runs(ref.runs, s, ref.shards);
        throw Error(
            fmt::format("shard {}/{} (runs {} to {}) is in none of the parts: merge all {} shards",
                        s, ref.shards, range.first,
                        range.last == range.first ? range.first : range.last - 1, ref.shards));
      }
      order.push_back(at->second);
    }
    merged.identity = TableIdentity{ref.digest, ref.runs, 0, 1, format};
  } else {
    merged.warnings.push_back(
        "none of the parts has an identity file (results written before PerFlow wrote them): "
        "their rows are checked, but not that they are the shards of one sweep");
  }

  std::string header;
  std::optional<std::vector<std::string>> pointers;
  std::vector<std::pair<std::uint64_t, std::string>> rows;
  std::vector<std::size_t> from;  // the part each row came from, for messages
  for (const std::size_t i : order) {
    const std::filesystem::path& part = parts[i];
    RowReader reader(part, format);
    if (format == TableFormat::Csv) {
      const std::optional<CsvRecord> record = reader.header();
      if (!record)
        throw Error(fmt::format("{}: expected a sweep's CSV header line, got an empty file",
                                part.string()));
      const std::vector<std::string> here = csv_header_pointers(*record, part.string());
      if (!record->ended) {
        throw FormatError(part.string(), record->line, "the header line is incomplete");
      }
      if (header.empty()) {
        header = record->text + "\n";
        pointers = here;
      } else if (record->text + "\n" != header) {
        throw Error(fmt::format("{}: its header differs from {}'s: the parts are not of one sweep",
                                part.string(), parts[order.front()].string()));
      }
    }
    // With identities, the runs the part must hold, in order (GCC 12's -O2 warns of an
    // optional RunRange here: a flag instead).
    const bool sharded = merged.identity.has_value();
    const RunRange range =
        sharded ? shard_runs(ids[i]->runs, ids[i]->shard, ids[i]->shards) : RunRange{};
    std::uint64_t next = range.first;
    ReadRow row;
    std::string text;
    bool ended = true;
    std::size_t line = 0;
    const std::optional<std::vector<std::string>> before = pointers;
    while (reader.next(pointers, row, text, ended, line)) {
      if (!ended) {
        throw FormatError(part.string(), line,
                          "the last row is incomplete (the shard was interrupted: rerun it to "
                          "finish it)");
      }
      if (row.problem) throw FormatError(part.string(), line, describe(*row.problem, row.run));
      if (before && pointers != before) {
        throw Error(
            fmt::format("{}: its rows' keys differ from {}'s: the parts are not of one sweep",
                        part.string(), parts[order.front()].string()));
      }
      if (sharded) {
        if (*row.run != next || next >= range.last) {
          throw FormatError(
              part.string(), line,
              fmt::format("run {} where shard {}/{} holds {}", *row.run, ids[i]->shard,
                          ids[i]->shards,
                          next >= range.last
                              ? (range.last == range.first
                                     ? std::string("no runs")
                                     : fmt::format("no more runs (its last is {})", range.last - 1))
                              : fmt::format("run {}", next)));
        }
        ++next;
      }
      rows.emplace_back(*row.run, std::move(text));
      from.push_back(i);
    }
    if (sharded && next != range.last) {
      throw Error(fmt::format(
          "{}: holds {} of the {} runs of shard {}/{} ({} to {}): the shard is unfinished "
          "(rerun it to finish it)",
          part.string(), next - range.first, range.last - range.first, ids[i]->shard,
          ids[i]->shards, range.first, range.last - 1));
    }
  }
  if (!merged.identity) {  // runs in order, each once, none missing
    std::vector<std::size_t> sorted(rows.size());
    for (std::size_t k = 0; k < sorted.size(); ++k) sorted[k] = k;
    std::stable_sort(sorted.begin(), sorted.end(), [&rows](std::size_t a, std::size_t b) {
      return rows[a].first < rows[b].first;
    });
    for (std::size_t k = 0; k < sorted.size(); ++k) {
      const std::uint64_t run = rows[sorted[k]].first;
      if (run < k) {
        throw Error(fmt::format("{}: run {} is also in another part",
                                parts[from[sorted[k]]].string(), run));
      }
      if (run > k) {
        throw Error(
            fmt::format("run {} is in none of the parts (a shard is missing or unfinished)", k));
      }
    }
    merged.text = header;
    for (const std::size_t k : sorted) merged.text += rows[k].second;
    return merged;
  }
  merged.text = header;
  for (const auto& [run, text] : rows) merged.text += text;
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
