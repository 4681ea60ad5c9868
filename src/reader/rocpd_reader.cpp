// rocpd: the SQLite database that rocprofv3 (rocprofiler-sdk) writes by default in ROCm 7
// (`--output-format rocpd`, `<pid>_results.db`), schema 3 of rocprofiler-sdk's
// rocpd_tables.sql. Every data table carries the run's UUID as a suffix
// (`rocpd_kernel_dispatch_<uuid>`), and un-suffixed views (`rocpd_kernel_dispatch`,
// `kernels`, `regions`, ...) select from them. SqliteDb never runs views, so the tables are
// found by name and read directly; a database holding several runs (several suffixes) gives
// all of them. Ids (agent, kernel symbol, string, event, thread) are row ids of the tables of
// the same run.
//
// Read: kernel dispatches (name from rocpd_info_kernel_symbol, device from rocpd_info_agent,
// the queue as the stream, as the rocprofv3 CSV and JSON readers do), memory copies, ROCTx
// ranges and marks (regions and samples whose event category is a MARKER one; the text is
// the event's extdata `message`) and, as launches, the API regions (hipLaunchKernel, ...)
// whose event shares a dispatch's internal correlation id (`rocpd_event.stack_id`). Times are
// the file's integer ns.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "detail/comm_kernel.hpp"
#include "detail/readers.hpp"
#include "detail/sqlite_db.hpp"
#include "detail/trace_finish.hpp"
#include "perflow/reader/profile_error.hpp"

namespace perflow::reader::detail {

namespace {

constexpr std::string_view kFormat = "rocpd";

// Tables only the rocpd schema has; a run is the set of tables sharing one suffix.
constexpr std::string_view kDispatchTable = "rocpd_kernel_dispatch";
constexpr std::array<std::string_view, 3> kSignatureTables = {kDispatchTable, "rocpd_info_agent",
                                                              "rocpd_region"};

// The suffix that follows `base` in `table` ("" or "_<uuid>"), if `table` is one of base's.
std::optional<std::string> suffix_of(std::string_view table, std::string_view base) {
  if (!table.starts_with(base)) return std::nullopt;
  const std::string_view rest = table.substr(base.size());
  if (!rest.empty() && rest.front() != '_') return std::nullopt;
  return std::string(rest);
}

// The run suffixes present in the database, sorted.
std::vector<std::string> run_suffixes(const std::vector<std::string>& tables) {
  std::set<std::string> suffixes;
  for (const std::string& table : tables) {
    for (std::string_view base : kSignatureTables) {
      if (auto suffix = suffix_of(table, base)) suffixes.insert(std::move(*suffix));
    }
  }
  return {suffixes.begin(), suffixes.end()};
}

// An SQL identifier in double quotes.
std::string sql_name(std::string_view name) {
  std::string out = "\"";
  for (const char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + '"';
}

// One table of a run and its columns, checked against what the reader needs.
class Table {
 public:
  Table(const SqliteDb& db, std::string_view base, const std::string& suffix)
      : db_(&db), name_(fmt::format("{}{}", base, suffix)), columns_(db.columns(name_)) {}

  [[nodiscard]] bool exists() const { return !columns_.empty(); }
  [[nodiscard]] bool has(std::string_view column) const {
    return std::find(columns_.begin(), columns_.end(), column) != columns_.end();
  }
  void require(std::initializer_list<std::string_view> columns) const {
    for (std::string_view column : columns) {
      if (!has(column)) fail(fmt::format("expected column {}, found none", column));
    }
  }
  /// `alias.column` if the table has the column, else SQL NULL.
  [[nodiscard]] std::string column_or_null(std::string_view alias, std::string_view column) const {
    return has(column) ? fmt::format("{}.{}", alias, sql_name(column)) : std::string("NULL");
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw ProfileError(db_->file(), fmt::format("table {}", name_), message);
  }
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] std::string sql() const { return sql_name(name_); }

 private:
  const SqliteDb* db_;
  std::string name_;
  std::vector<std::string> columns_;
};

struct Agent {
  bool gpu = false;
  std::uint32_t device = 0;
  std::string product;
};

std::uint32_t clamp_device(std::int64_t index) {
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(index, 0, std::int64_t{UINT32_MAX}));
}

// One run's tables (one suffix), read into `trace`.
class RunReader {
 public:
  RunReader(const SqliteDb& db, const std::string& suffix, KernelTrace& trace)
      : db_(db),
        suffix_(suffix),
        trace_(trace),
        strings_(required("rocpd_string")),
        agents_(required("rocpd_info_agent")),
        symbols_(required("rocpd_info_kernel_symbol")),
        dispatches_(required(kDispatchTable)),
        events_(required("rocpd_event")),
        threads_(db, "rocpd_info_thread", suffix) {
    strings_.require({"id", "string"});
    events_.require({"id", "category_id", "stack_id", "extdata"});
    if (threads_.exists()) threads_.require({"id", "tid"});
  }

  void read() {
    read_agents();
    read_dispatches();
    read_copies();
    read_regions();
    read_marks();
  }

  /// Product names of the agents the ops ran on, by device index.
  [[nodiscard]] const std::map<std::uint32_t, std::string>& used_devices() const {
    return used_devices_;
  }

  /// The run's ROCTx ranges, nesting depths set.
  std::vector<Range> take_ranges() {
    assign_nesting_depths(ranges_);
    return std::move(ranges_);
  }

 private:
  Table required(std::string_view base) const {
    Table table(db_, base, suffix_);
    if (!table.exists()) {
      throw ProfileError(
          db_.file(), "",
          fmt::format(
              "expected table {} (one of the rocpd schema 3 tables of run '{}'), found none",
              table.name(), suffix_.empty() ? "(no suffix)" : suffix_.substr(1)));
    }
    return table;
  }

  // SQL for the text of string id `expression`.
  [[nodiscard]] std::string string_of(std::string_view expression) const {
    return fmt::format("(SELECT s.string FROM {} AS s WHERE s.id = {})", strings_.sql(),
                       expression);
  }

  // SQL for the OS thread id of rocpd_info_thread row `expression` (the row id itself when
  // the table is missing or has no such row; rocprofv3 writes the OS tid as the row id).
  [[nodiscard]] std::string os_thread_of(std::string_view expression) const {
    if (!threads_.exists()) return std::string(expression);
    return fmt::format("COALESCE((SELECT t.tid FROM {} AS t WHERE t.id = {}), {})", threads_.sql(),
                       expression, expression);
  }

  void read_agents() {
    agents_.require({"id", "type"});
    SqliteStatement row =
        db_.prepare(fmt::format("SELECT a.id, a.type, {}, {}, {}, {}, {} FROM {} AS a",
                                agents_.column_or_null("a", "type_index"),
                                agents_.column_or_null("a", "logical_index"),
                                agents_.column_or_null("a", "absolute_index"),
                                agents_.column_or_null("a", "product_name"),
                                agents_.column_or_null("a", "name"), agents_.sql()),
                    agents_.name());
    while (row.step()) {
      Agent agent;
      agent.gpu = row.text(1) == "GPU";
      // The type-relative index (0 for the first GPU), as rocprofv3's JSON gpu_index; the
      // absolute index counts CPU agents first.
      std::optional<std::int64_t> index;
      for (int column : {2, 3, 4}) {
        if (!index) index = row.optional_integer(column);
      }
      agent.device = clamp_device(index.value_or(row.integer(0)));
      agent.product = std::string(row.is_null(5) ? row.text(6) : row.text(5));
      agents_by_id_[row.integer(0)] = std::move(agent);
    }
  }

  const Agent* agent(std::optional<std::int64_t> id) const {
    if (!id) return nullptr;
    const auto it = agents_by_id_.find(*id);
    return it == agents_by_id_.end() ? nullptr : &it->second;
  }

  void use(const Agent& agent) { used_devices_.try_emplace(agent.device, agent.product); }

  static void check_interval(const SqliteStatement& row, const Table& table, TimeNs start,
                             TimeNs end) {
    if (end < start) {
      table.fail(fmt::format("row {}: expected end >= start, found start {} and end {}", row.row(),
                             start, end));
    }
  }

  static std::uint64_t correlation_of(const SqliteStatement& row, int column) {
    const auto id = row.optional_integer(column);
    return id && *id > 0 ? static_cast<std::uint64_t>(*id) : kNoCorrelation;
  }

  // SQL for the internal correlation id of the event `expression`.
  [[nodiscard]] std::string correlation_sql(std::string_view expression) const {
    return fmt::format("(SELECT e.stack_id FROM {} AS e WHERE e.id = {})", events_.sql(),
                       expression);
  }

  void read_dispatches() {
    dispatches_.require({"agent_id", "kernel_id", "queue_id", "start", "end", "event_id"});
    symbols_.require({"id", "kernel_name"});
    // display_name is the demangled name without the descriptor suffix, as the CSV's; the
    // symbol is looked up by subquery so that a duplicated id cannot multiply dispatches.
    const std::string name =
        symbols_.has("display_name")
            ? fmt::format(
                  "(SELECT COALESCE(NULLIF(y.display_name, ''), y.kernel_name) FROM {} "
                  "AS y WHERE y.id = k.kernel_id)",
                  symbols_.sql())
            : fmt::format("(SELECT y.kernel_name FROM {} AS y WHERE y.id = k.kernel_id)",
                          symbols_.sql());
    SqliteStatement row = db_.prepare(
        fmt::format("SELECT k.agent_id, k.kernel_id, k.queue_id, k.start, k.\"end\", {}, {} "
                    "FROM {} AS k",
                    name, correlation_sql("k.event_id"), dispatches_.sql()),
        dispatches_.name());
    while (row.step()) {
      const Agent* on = agent(row.integer(0));
      if (on == nullptr) {
        dispatches_.fail(fmt::format("row {}: expected an agent_id listed in {}, found {}",
                                     row.row(), agents_.name(), row.integer(0)));
      }
      if (row.is_null(5)) {
        dispatches_.fail(fmt::format("row {}: expected a kernel_id listed in {}, found {}",
                                     row.row(), symbols_.name(), row.integer(1)));
      }
      GpuOp op;
      op.start = row.integer(3);
      op.end = row.integer(4);
      check_interval(row, dispatches_, op.start, op.end);
      op.device = on->device;
      op.stream = static_cast<std::uint64_t>(row.integer(2));
      op.correlation = correlation_of(row, 6);
      const std::string_view kernel = row.text(5);
      op.kind = classify_kernel(kernel);
      op.name = trace_.names.intern(kernel);
      trace_.ops.push_back(op);
      use(*on);
      if (op.correlation != kNoCorrelation) launched_.insert(op.correlation);
    }
  }

  void read_copies() {
    const Table copies(db_, "rocpd_memory_copy", suffix_);
    if (!copies.exists()) return;
    copies.require({"start", "end", "name_id", "src_agent_id", "dst_agent_id", "size"});
    SqliteStatement row = db_.prepare(
        fmt::format("SELECT m.start, m.\"end\", {}, m.src_agent_id, m.dst_agent_id, m.size, {}, "
                    "{} FROM {} AS m",
                    string_of("m.name_id"), copies.column_or_null("m", "stream_id"),
                    copies.has("event_id") ? correlation_sql("m.event_id") : "NULL", copies.sql()),
        copies.name());
    while (row.step()) {
      const Agent* source = agent(row.optional_integer(3));
      const Agent* destination = agent(row.optional_integer(4));
      // The device side of the copy: the destination GPU, else the source GPU.
      const Agent* side = destination != nullptr && destination->gpu ? destination
                          : source != nullptr && source->gpu         ? source
                          : destination != nullptr                   ? destination
                                                                     : source;
      if (side == nullptr) {
        copies.fail(
            fmt::format("row {}: expected src_agent_id or dst_agent_id listed in {}, found neither",
                        row.row(), agents_.name()));
      }
      GpuOp op;
      op.kind = GpuOpKind::Memcpy;
      op.start = row.integer(0);
      op.end = row.integer(1);
      check_interval(row, copies, op.start, op.end);
      const std::string_view name = row.text(2);
      op.name = trace_.names.intern(name.empty() ? "MEMORY_COPY" : name);
      op.bytes = row.optional_integer(5).value_or(-1);
      op.stream = static_cast<std::uint64_t>(row.optional_integer(6).value_or(0));
      op.correlation = correlation_of(row, 7);
      op.device = side->device;
      trace_.ops.push_back(op);
      use(*side);
      if (op.correlation != kNoCorrelation) launched_.insert(op.correlation);
    }
  }

  // The event columns every region or sample query selects: category, message, correlation.
  [[nodiscard]] std::string event_columns() const {
    return fmt::format(
        "{}, CASE WHEN json_valid(e.extdata) THEN json_extract(e.extdata, '$.message') END, "
        "e.stack_id",
        string_of("e.category_id"));
  }

  static bool is_marker(std::string_view category) {
    return category.find("MARKER") != std::string_view::npos;
  }

  // Regions: ROCTx ranges (a MARKER category and a message) and API calls, which are
  // launches when their correlation id reached the GPU.
  void read_regions() {
    const Table regions(db_, "rocpd_region", suffix_);
    if (!regions.exists()) return;
    regions.require({"tid", "start", "end", "name_id", "event_id"});
    SqliteStatement row = db_.prepare(
        fmt::format("SELECT r.start, r.\"end\", {}, {}, {} FROM {} AS r LEFT JOIN {} AS e ON "
                    "e.id = r.event_id",
                    os_thread_of("r.tid"), string_of("r.name_id"), event_columns(), regions.sql(),
                    events_.sql()),
        regions.name());
    // Per correlation id, the outermost call (earliest start, then latest end).
    std::map<std::uint64_t, Launch> calls;
    while (row.step()) {
      const TimeNs start = row.integer(0);
      const TimeNs end = row.integer(1);
      check_interval(row, regions, start, end);
      const std::uint64_t thread = static_cast<std::uint64_t>(row.integer(2));
      if (is_marker(row.text(4))) {
        // A marker region without a message is a bare ROCTx call (roctxGetThreadId, ...).
        if (!row.is_null(5) && !row.text(5).empty()) {
          add_range(row.text(5), thread, start, end);
        }
        continue;
      }
      const std::uint64_t correlation = correlation_of(row, 6);
      if (correlation == kNoCorrelation || !launched_.contains(correlation)) continue;
      const Launch launch{thread, start, end, correlation};
      const auto [it, inserted] = calls.try_emplace(correlation, launch);
      if (!inserted &&
          std::tuple(launch.start, it->second.end) < std::tuple(it->second.start, launch.end)) {
        it->second = launch;
      }
    }
    for (const auto& [correlation, launch] : calls) trace_.launches.push_back(launch);
  }

  // ROCTx marks (roctxMarkA): instantaneous samples on a track, with the event's message.
  void read_marks() {
    const Table samples(db_, "rocpd_sample", suffix_);
    const Table tracks(db_, "rocpd_track", suffix_);
    if (!samples.exists() || !tracks.exists()) return;
    samples.require({"track_id", "timestamp", "event_id"});
    tracks.require({"id", "tid"});
    SqliteStatement row = db_.prepare(
        fmt::format("SELECT m.timestamp, {}, {} FROM {} AS m JOIN {} AS k ON k.id = m.track_id "
                    "LEFT JOIN {} AS e ON e.id = m.event_id",
                    os_thread_of("k.tid"), event_columns(), samples.sql(), tracks.sql(),
                    events_.sql()),
        samples.name());
    while (row.step()) {
      if (!is_marker(row.text(2)) || row.is_null(3) || row.text(3).empty()) continue;
      const TimeNs at = row.integer(0);
      add_range(row.text(3), static_cast<std::uint64_t>(row.optional_integer(1).value_or(0)), at,
                at);
    }
  }

  void add_range(std::string_view name, std::uint64_t thread, TimeNs start, TimeNs end) {
    Range range;
    range.source = RangeSource::Roctx;
    range.name = trace_.names.intern(name);
    range.thread = thread;
    range.start = start;
    range.end = end;
    ranges_.push_back(range);
  }

  const SqliteDb& db_;
  std::string suffix_;
  KernelTrace& trace_;
  Table strings_;
  Table agents_;
  Table symbols_;
  Table dispatches_;
  Table events_;
  Table threads_;
  std::map<std::int64_t, Agent> agents_by_id_;
  std::map<std::uint32_t, std::string> used_devices_;
  std::unordered_set<std::uint64_t> launched_;
  std::vector<Range> ranges_;
};

bool is_rocpd(const std::vector<std::string>& tables) { return !run_suffixes(tables).empty(); }

bool has_table(const std::vector<std::string>& tables, std::string_view name) {
  return std::binary_search(tables.begin(), tables.end(), name);
}

KernelTrace read_rocpd(const std::filesystem::path& path) {
  const SqliteDb db(path);
  const std::vector<std::string> tables = db.tables();
  const std::vector<std::string> suffixes = run_suffixes(tables);
  if (suffixes.empty()) {
    // rocmProfileData's RPD files (rpdTracer) also name their tables rocpd_*.
    const bool rpd = has_table(tables, "rocpd_op") && has_table(tables, "rocpd_api");
    throw ProfileError(
        path.string(), "",
        fmt::format("expected a rocpd database (rocprofv3 --output-format rocpd: tables "
                    "rocpd_kernel_dispatch_<uuid>, rocpd_info_agent_<uuid>, rocpd_region_<uuid>), "
                    "found {}",
                    rpd ? "an RPD database of rocmProfileData (tables rocpd_op, rocpd_api), "
                          "another format"
                        : "an SQLite database without them"));
  }
  KernelTrace trace;
  trace.path = path.string();
  trace.format = std::string(kFormat);
  std::map<std::uint32_t, std::string> devices;
  for (const std::string& suffix : suffixes) {
    RunReader run(db, suffix, trace);
    run.read();
    std::vector<Range> ranges = run.take_ranges();
    trace.ranges.insert(trace.ranges.end(), ranges.begin(), ranges.end());
    for (const auto& [device, product] : run.used_devices()) devices.try_emplace(device, product);
  }
  std::vector<std::string> names;
  for (const auto& [device, product] : devices) {
    if (!product.empty() && std::find(names.begin(), names.end(), product) == names.end()) {
      names.push_back(product);
    }
  }
  trace.device_name = fmt::format("{}", fmt::join(names, ", "));
  finish_trace(trace);
  return trace;
}

bool accepts_rocpd(const FileSniff& sniff) {
  if (sniff.gzip || !has_sqlite_magic(sniff.head)) return false;
  try {
    return is_rocpd(SqliteDb(sniff.path).tables());
  } catch (const ProfileError&) {
    return false;  // damaged: the nsys reader, tried first, reports it
  }
}

}  // namespace

ProfileReader rocpd_reader() {
  return {std::string(kFormat),
          "rocprofv3 rocpd SQLite (ROCm 7 default, --output-format rocpd, *_results.db), "
          "schema 3",
          &accepts_rocpd, &read_rocpd};
}

}  // namespace perflow::reader::detail
