// Nsight Systems SQLite exports (`nsys export --type sqlite`), schema 2.x and 3.x. Tables are
// created lazily, so a missing table means no data of that kind; columns are probed with
// PRAGMA table_info because they drift between versions. Times are the file's own: integer
// ns relative to the capture session start (TARGET_INFO_SESSION_START_TIME.utcEpochNs gives
// the epoch of 0).
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
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

constexpr std::string_view kFormat = "nsys-sqlite";

// ENUM_NSYS_EVENT_TYPE values (the same in schema 2.x and 3.x).
constexpr std::int64_t kNvtxMark = 34;
constexpr std::int64_t kNvtxPushPopRange = 59;
constexpr std::int64_t kNvtxStartEndRange = 60;

// globalTid packs the host/VM id, the pid and the OS thread id; ranges and launches keep the
// OS thread id, like the `nsys stats` CSV reports do.
std::uint64_t os_thread(std::int64_t global_tid) {
  return static_cast<std::uint64_t>(global_tid) & 0xFFFFFFU;
}
std::uint64_t os_process(std::int64_t global_tid) {
  return (static_cast<std::uint64_t>(global_tid) >> 24U) & 0xFFFFFFU;
}

bool is_nsys_export(const std::vector<std::string>& tables) {
  const auto has = [&](std::string_view name) {
    return std::binary_search(tables.begin(), tables.end(), name);
  };
  const bool activity = std::any_of(tables.begin(), tables.end(), [](const std::string& t) {
    return t.starts_with("CUPTI_ACTIVITY_KIND_");
  });
  return has("StringIds") &&
         (activity || has("NVTX_EVENTS") || has("EXPORT_META_DATA") || has("META_DATA_EXPORT"));
}

// A table's columns, checked against what the reader needs.
class TableColumns {
 public:
  TableColumns(const SqliteDb& db, std::string table)
      : db_(&db), table_(std::move(table)), names_(db.columns(table_)) {}

  [[nodiscard]] bool exists() const { return !names_.empty(); }
  [[nodiscard]] bool has(std::string_view name) const {
    return std::find(names_.begin(), names_.end(), name) != names_.end();
  }
  void require(std::initializer_list<std::string_view> names) const {
    for (std::string_view name : names) {
      if (!has(name)) fail(fmt::format("expected column {}, found none", name));
    }
  }
  /// The first of `names` that the table has.
  [[nodiscard]] std::string_view first_of(std::initializer_list<std::string_view> names) const {
    for (std::string_view name : names) {
      if (has(name)) return name;
    }
    fail(fmt::format("expected column {}, found none", fmt::join(names, " or ")));
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw ProfileError(db_->file(), fmt::format("table {}", table_), message);
  }
  [[nodiscard]] const std::string& table() const { return table_; }

 private:
  const SqliteDb* db_;
  std::string table_;
  std::vector<std::string> names_;
};

std::uint32_t device_of(const SqliteStatement& row, int column) {
  const std::int64_t device = row.integer(column);
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(device, 0, std::int64_t{UINT32_MAX}));
}

std::uint64_t correlation_of(const SqliteStatement& row, int column) {
  const auto correlation = row.optional_integer(column);
  return correlation ? static_cast<std::uint64_t>(*correlation) : kNoCorrelation;
}

void check_interval(const SqliteStatement& row, const std::string& file, const std::string& table,
                    TimeNs start, TimeNs end) {
  if (end < start) {
    throw ProfileError(file, fmt::format("table {}", table),
                       fmt::format("row {}: expected end >= start, found start {} and end {}",
                                   row.row(), start, end));
  }
}

void read_kernels(const SqliteDb& db, KernelTrace& trace) {
  const TableColumns columns(db, "CUPTI_ACTIVITY_KIND_KERNEL");
  if (!columns.exists()) return;
  columns.require({"start", "end", "deviceId", "streamId", "correlationId"});
  // demangledName is the readable one; older or stripped exports may lack it. Looked up by
  // subquery, not joined: a StringIds without a unique id must not multiply the kernels.
  std::vector<std::string> names;
  for (std::string_view column : {"demangledName", "shortName", "mangledName"}) {
    if (columns.has(column)) {
      names.push_back(fmt::format("(SELECT value FROM StringIds WHERE id = k.{})", column));
    }
  }
  if (names.empty()) (void)columns.first_of({"demangledName", "shortName", "mangledName"});
  names.emplace_back("''");
  SqliteStatement row =
      db.prepare(fmt::format("SELECT k.start, k.\"end\", k.deviceId, k.streamId, k.correlationId, "
                             "COALESCE({}) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k",
                             fmt::join(names, ", ")),
                 columns.table());
  while (row.step()) {
    GpuOp op;
    op.start = row.integer(0);
    op.end = row.integer(1);
    check_interval(row, db.file(), columns.table(), op.start, op.end);
    op.device = device_of(row, 2);
    op.stream = static_cast<std::uint64_t>(row.integer(3));
    op.correlation = correlation_of(row, 4);
    const std::string_view name = row.text(5);
    op.kind = classify_kernel(name);
    op.name = trace.names.intern(name);
    trace.ops.push_back(op);
  }
}

// CUPTI's memcpy kinds (ENUM_CUDA_MEMCPY_OPER), labelled like `nsys stats` does.
std::string memcpy_name(std::int64_t kind) {
  static constexpr std::array<std::string_view, 14> kLabels = {"Unknown",
                                                               "Host-to-Device",
                                                               "Device-to-Host",
                                                               "Host-to-Array",
                                                               "Array-to-Host",
                                                               "Array-to-Array",
                                                               "Array-to-Device",
                                                               "Device-to-Array",
                                                               "Device-to-Device",
                                                               "Host-to-Host",
                                                               "Peer-to-Peer",
                                                               "Unified Host-to-Device",
                                                               "Unified Device-to-Host",
                                                               "Unified Device-to-Device"};
  if (kind >= 0 && static_cast<std::size_t>(kind) < kLabels.size()) {
    return fmt::format("[CUDA memcpy {}]", kLabels[static_cast<std::size_t>(kind)]);
  }
  return fmt::format("[CUDA memcpy kind {}]", kind);
}

void read_copies(const SqliteDb& db, KernelTrace& trace, GpuOpKind kind) {
  const TableColumns columns(
      db, kind == GpuOpKind::Memcpy ? "CUPTI_ACTIVITY_KIND_MEMCPY" : "CUPTI_ACTIVITY_KIND_MEMSET");
  if (!columns.exists()) return;
  columns.require({"start", "end", "deviceId", "streamId", "correlationId", "bytes"});
  const bool has_copy_kind = kind == GpuOpKind::Memcpy && columns.has("copyKind");
  SqliteStatement row = db.prepare(
      fmt::format("SELECT start, \"end\", deviceId, streamId, correlationId, bytes, {} FROM {}",
                  has_copy_kind ? "copyKind" : "NULL", columns.table()),
      columns.table());
  const std::uint32_t memset_name = trace.names.intern("[CUDA memset]");
  while (row.step()) {
    GpuOp op;
    op.kind = kind;
    op.start = row.integer(0);
    op.end = row.integer(1);
    check_interval(row, db.file(), columns.table(), op.start, op.end);
    op.device = device_of(row, 2);
    op.stream = static_cast<std::uint64_t>(row.integer(3));
    op.correlation = correlation_of(row, 4);
    op.bytes = row.optional_integer(5).value_or(-1);
    op.name = kind == GpuOpKind::Memset
                  ? memset_name
                  : trace.names.intern(memcpy_name(row.optional_integer(6).value_or(0)));
    trace.ops.push_back(op);
  }
}

void read_nvtx(const SqliteDb& db, KernelTrace& trace) {
  const TableColumns columns(db, "NVTX_EVENTS");
  if (!columns.exists()) return;
  columns.require({"start", "end", "eventType", "globalTid"});
  // The name is inline text, or a registered string (textId) in StringIds (a subquery, as
  // for kernel names).
  std::string name = columns.has("text") ? "n.text" : "NULL";
  if (columns.has("textId")) {
    name = fmt::format("COALESCE({}, (SELECT value FROM StringIds WHERE id = n.textId))", name);
  }
  // Domain creation (75) and thread naming (39) rows are not ranges.
  SqliteStatement row = db.prepare(
      fmt::format("SELECT n.start, n.\"end\", n.eventType, {}, n.globalTid FROM NVTX_EVENTS AS n "
                  "WHERE n.eventType IN ({}, {}, {})",
                  name, kNvtxMark, kNvtxPushPopRange, kNvtxStartEndRange),
      columns.table());
  std::vector<Range> ranges;
  while (row.step()) {
    Range range;
    range.source = RangeSource::Nvtx;
    range.start = row.integer(0);
    const auto end = row.optional_integer(1);
    if (row.integer(2) == kNvtxMark) {
      range.end = range.start;
    } else if (end) {
      range.end = *end;
    } else {
      continue;  // pushed or started but never closed before the capture ended
    }
    check_interval(row, db.file(), columns.table(), range.start, range.end);
    range.name = trace.names.intern(row.text(3));
    range.thread = os_thread(row.optional_integer(4).value_or(0));
    ranges.push_back(range);
  }
  assign_nesting_depths(ranges);
  trace.ranges.insert(trace.ranges.end(), ranges.begin(), ranges.end());
}

// Runtime (and driver) API calls that launched an op of this trace. Schema 2.x writes two
// rows per call (cudaLaunchKernel and cudaLaunchKernel_v7000) with one correlationId: keep
// the outer one (earliest start, then latest end) per (process, correlationId).
void read_launches(const SqliteDb& db, KernelTrace& trace) {
  std::unordered_set<std::uint64_t> launched;
  for (const GpuOp& op : trace.ops) {
    if (op.correlation != kNoCorrelation) launched.insert(op.correlation);
  }
  std::map<std::pair<std::uint64_t, std::uint64_t>, Launch> calls;
  for (std::string_view table : {"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"}) {
    const TableColumns columns(db, std::string(table));
    if (!columns.exists()) continue;
    columns.require({"start", "end", "globalTid", "correlationId"});
    SqliteStatement row = db.prepare(
        fmt::format("SELECT start, \"end\", globalTid, correlationId FROM {}", table), table);
    while (row.step()) {
      const auto correlation = row.optional_integer(3);
      if (!correlation || !launched.contains(static_cast<std::uint64_t>(*correlation))) continue;
      Launch launch;
      launch.start = row.integer(0);
      launch.end = row.integer(1);
      check_interval(row, db.file(), columns.table(), launch.start, launch.end);
      const std::int64_t global_tid = row.optional_integer(2).value_or(0);
      launch.thread = os_thread(global_tid);
      launch.correlation = static_cast<std::uint64_t>(*correlation);
      const auto [it, inserted] =
          calls.try_emplace({os_process(global_tid), launch.correlation}, launch);
      Launch& kept = it->second;
      // Earliest start, then latest end (swapped, not negated: an end can be INT64_MIN).
      if (!inserted && std::tuple(launch.start, kept.end) < std::tuple(kept.start, launch.end)) {
        kept = launch;
      }
    }
  }
  for (const auto& [key, launch] : calls) trace.launches.push_back(launch);
}

// TARGET_INFO_GPU.id is the deviceId of the activity tables; its cuDevice is another
// numbering. The name of the GPUs the ops ran on, or of every listed GPU if none matches.
void read_device_name(const SqliteDb& db, KernelTrace& trace) {
  const TableColumns columns(db, "TARGET_INFO_GPU");
  if (!columns.exists() || !columns.has("name")) return;
  const bool has_id = columns.has("id");
  SqliteStatement row =
      db.prepare(fmt::format("SELECT {}, name FROM TARGET_INFO_GPU", has_id ? "id" : "NULL"),
                 "TARGET_INFO_GPU");
  std::set<std::uint32_t> used;
  for (const GpuOp& op : trace.ops) used.insert(op.device);
  std::vector<std::string> all;
  std::vector<std::string> matching;
  while (row.step()) {
    std::string name(row.text(1));
    const auto id = row.optional_integer(0);
    if (std::find(all.begin(), all.end(), name) == all.end()) all.push_back(name);
    if (id && *id >= 0 && used.contains(static_cast<std::uint32_t>(*id)) &&
        std::find(matching.begin(), matching.end(), name) == matching.end()) {
      matching.push_back(std::move(name));
    }
  }
  trace.device_name = fmt::format("{}", fmt::join(matching.empty() ? all : matching, ", "));
}

KernelTrace read_nsys_sqlite(const std::filesystem::path& path) {
  const SqliteDb db(path);
  const std::vector<std::string> tables = db.tables();
  if (!is_nsys_export(tables)) {
    throw ProfileError(path.string(), "",
                       "expected an Nsight Systems export (tables StringIds and "
                       "CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS or META_DATA_EXPORT), found an "
                       "SQLite database without them");
  }
  KernelTrace trace;
  trace.path = path.string();
  trace.format = std::string(kFormat);
  read_kernels(db, trace);
  read_copies(db, trace, GpuOpKind::Memcpy);
  read_copies(db, trace, GpuOpKind::Memset);
  read_nvtx(db, trace);
  read_launches(db, trace);
  read_device_name(db, trace);
  finish_trace(trace);
  return trace;
}

bool accepts_nsys_sqlite(const FileSniff& sniff) {
  if (sniff.gzip || !has_sqlite_magic(sniff.head)) return false;
  try {
    return is_nsys_export(SqliteDb(sniff.path).tables());
  } catch (const ProfileError&) {
    return true;  // damaged: read() reports what is wrong with it
  }
}

}  // namespace

ProfileReader nsys_sqlite_reader() {
  return {std::string(kFormat),
          "Nsight Systems SQLite export (nsys export --type sqlite), schema 2.x/3.x; times in "
          "ns from the session start",
          &accepts_nsys_sqlite, &read_nsys_sqlite};
}

}  // namespace perflow::reader::detail
