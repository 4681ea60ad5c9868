// rocprof v1 (ROCm <= 6.x) per-dispatch tables: results.csv and its SQLite twin results.db
// (table KERN, same columns). gpu-id is the HSA agent index as written (CPU agents count
// first), queue-id the stream. Times are BeginNs/EndNs, integer ns on the host clock. The
// summaries (results.stats.csv) have no timeline and are not read.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "detail/comm_kernel.hpp"
#include "detail/csv.hpp"
#include "detail/decompressed_file.hpp"
#include "detail/readers.hpp"
#include "detail/sqlite_db.hpp"
#include "detail/trace_finish.hpp"
#include "perflow/reader/profile_error.hpp"

namespace perflow::reader::detail {

namespace {

bool is_v1_header(const std::vector<std::string>& names) {
  return has_columns(names, {"KernelName", "gpu-id", "queue-id"});
}

GpuOp dispatch(KernelTrace& trace, std::string_view name, std::int64_t device, std::int64_t queue,
               TimeNs begin, TimeNs end) {
  GpuOp op;
  op.kind = classify_kernel(name);
  op.name = trace.names.intern(name);
  op.device = static_cast<std::uint32_t>(device);
  op.stream = static_cast<std::uint64_t>(queue);
  op.start = begin;
  op.end = end;
  return op;
}

KernelTrace read_v1_csv(const std::filesystem::path& path) {
  const DecompressedFile content = read_decompressed(path);
  CsvTable table(content.text(), path.string(), &is_v1_header,
                 "rocprof v1 results.csv: \"Index\",\"KernelName\",\"gpu-id\",\"queue-id\",...");
  KernelTrace trace;
  trace.path = path.string();
  trace.format = "rocprof-v1-csv";
  const std::size_t name_column = table.require("KernelName");
  const std::size_t device_column = table.require("gpu-id");
  const std::size_t queue_column = table.require("queue-id");
  // Only `rocprof --timestamp on` (or --stats, or a trace option) writes the times.
  const std::size_t begin_column = table.require("BeginNs");
  const std::size_t end_column = table.require("EndNs");
  while (table.next()) {
    const std::int64_t device = table.integer(device_column);
    if (device < 0 || device > std::int64_t{UINT32_MAX}) {
      table.fail(device_column, "expected a gpu-id >= 0");
    }
    const std::int64_t queue = table.integer(queue_column);
    if (queue < 0) table.fail(queue_column, "expected a queue-id >= 0");
    const TimeNs begin = table.integer(begin_column);
    const TimeNs end = table.integer(end_column);
    if (end < begin) table.fail(end_column, "expected EndNs >= BeginNs");
    trace.ops.push_back(dispatch(trace, table.text(name_column), device, queue, begin, end));
  }
  finish_trace(trace);
  return trace;
}

bool accepts_v1_csv(const FileSniff& sniff) {
  return find_csv_header(sniff.head, &is_v1_header, 1).has_value();
}

constexpr std::string_view kKernTable = "KERN";

bool has_kern_table(const SqliteDb& db) {
  const std::vector<std::string> columns = db.columns(kKernTable);
  return std::find(columns.begin(), columns.end(), "KernelName") != columns.end();
}

KernelTrace read_v1_db(const std::filesystem::path& path) {
  const SqliteDb db(path);
  const std::vector<std::string> columns = db.columns(kKernTable);
  if (columns.empty()) {
    throw ProfileError(path.string(), "table KERN",
                       "expected the rocprof v1 dispatch table, found none");
  }
  for (std::string_view column : {"KernelName", "gpu-id", "queue-id", "BeginNs", "EndNs"}) {
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) {
      throw ProfileError(path.string(), "table KERN",
                         fmt::format("expected column {}, found none", column));
    }
  }
  KernelTrace trace;
  trace.path = path.string();
  trace.format = "rocprof-v1-db";
  SqliteStatement row = db.prepare(
      "SELECT \"KernelName\", \"gpu-id\", \"queue-id\", \"BeginNs\", \"EndNs\" FROM KERN",
      kKernTable);
  while (row.step()) {
    // rocprof stores the name with the CSV's quotes around it.
    std::string_view name = row.text(0);
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
      name = name.substr(1, name.size() - 2);
    }
    const std::int64_t device = row.integer(1);
    const std::int64_t queue = row.integer(2);
    const TimeNs begin = row.integer(3);
    const TimeNs end = row.integer(4);
    if (device < 0 || device > std::int64_t{UINT32_MAX} || queue < 0 || end < begin) {
      throw ProfileError(path.string(), "table KERN",
                         fmt::format("row {}: expected gpu-id >= 0, queue-id >= 0 and EndNs >= "
                                     "BeginNs, found {}, {}, {} and {}",
                                     row.row(), device, queue, begin, end));
    }
    trace.ops.push_back(dispatch(trace, name, device, queue, begin, end));
  }
  finish_trace(trace);
  return trace;
}

bool accepts_v1_db(const FileSniff& sniff) {
  if (sniff.gzip || !has_sqlite_magic(sniff.head)) return false;
  try {
    return has_kern_table(SqliteDb(sniff.path));
  } catch (const ProfileError&) {
    return false;  // damaged: the nsys reader, tried first, reports it
  }
}

}  // namespace

ProfileReader rocprof_v1_reader() {
  return {"rocprof-v1-csv", "rocprof v1 results.csv (per-dispatch trace with BeginNs/EndNs)",
          &accepts_v1_csv, &read_v1_csv};
}

ProfileReader rocprof_v1_db_reader() {
  return {"rocprof-v1-db", "rocprof v1 results.db (SQLite table KERN)", &accepts_v1_db,
          &read_v1_db};
}

}  // namespace perflow::reader::detail
