// rocprofv3 CSV traces (ROCprofiler-SDK, `--output-format csv`): *_kernel_trace.csv,
// *_memory_copy_trace.csv, *_marker_api_trace.csv (ROCTx) and *_hip_api_trace.csv. Each file
// of a run reads into its own KernelTrace. Columns are found by name, case-insensitively,
// because they move between releases (Stream_Id, LDS_Block_Size, a leading Guid, ...). Times
// are the file's integer ns (CLOCK_BOOTTIME by default).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "detail/comm_kernel.hpp"
#include "detail/csv.hpp"
#include "detail/decompressed_file.hpp"
#include "detail/readers.hpp"
#include "detail/trace_finish.hpp"

namespace perflow::reader::detail {

namespace {

constexpr std::string_view kFormat = "rocprofv3-csv";

bool is_kernel_header(const std::vector<std::string>& names) {
  return has_columns(names,
                     {"Agent_Id", "Queue_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp"});
}

bool is_copy_header(const std::vector<std::string>& names) {
  return has_columns(names, {"Direction", "Source_Agent_Id", "Destination_Agent_Id",
                             "Start_Timestamp", "End_Timestamp"});
}

bool is_api_header(const std::vector<std::string>& names) {
  return has_columns(names,
                     {"Domain", "Function", "Thread_Id", "Start_Timestamp", "End_Timestamp"});
}

bool is_rocprofv3_header(const std::vector<std::string>& names) {
  return is_kernel_header(names) || is_copy_header(names) || is_api_header(names);
}

// The columns every trace file has.
struct Interval {
  std::size_t start;
  std::size_t end;
  std::size_t correlation;
};

Interval interval_columns(const CsvTable& table) {
  return {table.require("Start_Timestamp"), table.require("End_Timestamp"),
          table.require("Correlation_Id")};
}

// Start, end and correlation (0 means none in ROCprofiler-SDK) of the current row.
void read_interval(const CsvTable& table, const Interval& columns, TimeNs& start, TimeNs& end,
                   std::uint64_t& correlation) {
  start = table.integer(columns.start);
  end = table.integer(columns.end);
  if (end < start) table.fail(columns.end, "expected an end >= the start");
  const std::int64_t id = table.integer(columns.correlation);
  if (id < 0) table.fail(columns.correlation, "expected a correlation id >= 0");
  correlation = id == 0 ? kNoCorrelation : static_cast<std::uint64_t>(id);
}

// Agents are written as 7, "Agent 7", "Agent-7", "GPU-7" or "CPU-0" depending on the release
// and --agent-index; the number is what the file says, CPU agents included.
std::uint32_t agent_of(const CsvTable& table, std::size_t column) {
  std::string_view text = table.text(column);
  const std::size_t digits = text.find_first_of("0123456789");
  const auto agent =
      digits == std::string_view::npos ? std::nullopt : parse_int64(text.substr(digits));
  if (!agent || *agent > std::int64_t{UINT32_MAX} ||
      text.substr(0, digits).find_first_not_of(
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz -") != std::string_view::npos) {
    table.fail(column, "expected an agent such as 7, 'Agent 7' or 'GPU-7'");
  }
  return static_cast<std::uint32_t>(*agent);
}

std::uint64_t id_of(const CsvTable& table, std::size_t column) {
  const std::int64_t id = table.integer(column);
  if (id < 0) table.fail(column, "expected an id >= 0");
  return static_cast<std::uint64_t>(id);
}

void read_kernels(CsvTable& table, KernelTrace& trace) {
  const Interval interval = interval_columns(table);
  const std::size_t agent_column = table.require("Agent_Id");
  const std::size_t queue_column = table.require("Queue_Id");
  const std::size_t name_column = table.require("Kernel_Name");
  while (table.next()) {
    GpuOp op;
    read_interval(table, interval, op.start, op.end, op.correlation);
    op.device = agent_of(table, agent_column);
    // The queue is the hardware lane a kernel waits in; Stream_Id is 0 unless HIP streams
    // are traced, so the queue is the stream for every ROCm format read here.
    op.stream = id_of(table, queue_column);
    const std::string& name = table.text(name_column);
    op.kind = classify_kernel(name);
    op.name = trace.names.intern(name);
    trace.ops.push_back(op);
  }
}

void read_copies(CsvTable& table, KernelTrace& trace) {
  const Interval interval = interval_columns(table);
  const std::size_t direction_column = table.require("Direction");
  const std::size_t source_column = table.require("Source_Agent_Id");
  const std::size_t destination_column = table.require("Destination_Agent_Id");
  const auto stream_column = table.find("Stream_Id");
  while (table.next()) {
    GpuOp op;
    op.kind = GpuOpKind::Memcpy;
    read_interval(table, interval, op.start, op.end, op.correlation);
    const std::string& direction = table.text(direction_column);
    const std::uint32_t source = agent_of(table, source_column);
    const std::uint32_t destination = agent_of(table, destination_column);
    // The device side of the copy: the destination of a host-to-device copy, else the source.
    op.device = direction.find("HOST_TO_DEVICE") != std::string::npos ? destination : source;
    if (stream_column) op.stream = id_of(table, *stream_column);
    op.name = trace.names.intern(direction);
    trace.ops.push_back(op);  // the CSV has no byte count: bytes stay unknown
  }
}

// API rows: ROCTx markers become ranges (the message is in Function); HIP calls that put
// work on a GPU (launches, copies, fills) become launches. Other domains are skipped.
void read_api(CsvTable& table, KernelTrace& trace) {
  const Interval interval = interval_columns(table);
  const std::size_t domain_column = table.require("Domain");
  const std::size_t function_column = table.require("Function");
  const std::size_t thread_column = table.require("Thread_Id");
  std::vector<Range> ranges;
  while (table.next()) {
    TimeNs start = 0;
    TimeNs end = 0;
    std::uint64_t correlation = kNoCorrelation;
    read_interval(table, interval, start, end, correlation);
    const std::uint64_t thread = id_of(table, thread_column);
    const std::string& domain = table.text(domain_column);
    const std::string& function = table.text(function_column);
    if (domain.starts_with("MARKER")) {
      Range range;
      range.source = RangeSource::Roctx;
      range.name = trace.names.intern(function);
      range.thread = thread;
      range.start = start;
      range.end = end;
      ranges.push_back(range);
    } else if (domain.starts_with("HIP") && (function.find("Launch") != std::string::npos ||
                                             function.find("Memcpy") != std::string::npos ||
                                             function.find("Memset") != std::string::npos)) {
      trace.launches.push_back(Launch{thread, start, end, correlation});
    }
  }
  // Rows are written in end order; the nesting is rebuilt per thread.
  assign_nesting_depths(ranges);
  trace.ranges.insert(trace.ranges.end(), ranges.begin(), ranges.end());
}

KernelTrace read_rocprof_csv(const std::filesystem::path& path) {
  const DecompressedFile content = read_decompressed(path);
  CsvTable table(content.text(), path.string(), &is_rocprofv3_header,
                 "rocprofv3 kernel_trace, memory_copy_trace, marker_api_trace or hip_api_trace "
                 "columns");
  KernelTrace trace;
  trace.path = path.string();
  trace.format = std::string(kFormat);
  if (table.find("Kernel_Name")) {
    read_kernels(table, trace);
  } else if (table.find("Direction")) {
    read_copies(table, trace);
  } else {
    read_api(table, trace);
  }
  finish_trace(trace);
  return trace;
}

bool accepts_rocprof_csv(const FileSniff& sniff) {
  return find_csv_header(sniff.head, &is_rocprofv3_header, 1).has_value();
}

}  // namespace

ProfileReader rocprof_csv_reader() {
  return {std::string(kFormat),
          "rocprofv3 CSV trace: kernel_trace, memory_copy_trace, marker_api_trace (ROCTx) or "
          "hip_api_trace, one file each",
          &accepts_rocprof_csv, &read_rocprof_csv};
}

}  // namespace perflow::reader::detail
