// `nsys stats --format csv` reports: the NVTX push/pop trace (nvtx_pushpop_trace, formerly
// nvtxpptrace) into ranges and the GPU trace (cuda_gpu_trace, formerly gputrace) into ops.
// Without --output, nsys prints preamble lines before the header; they are skipped. Times are
// the report's integer ns from the session start.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "detail/comm_kernel.hpp"
#include "detail/csv.hpp"
#include "detail/decompressed_file.hpp"
#include "detail/readers.hpp"
#include "detail/trace_finish.hpp"

namespace perflow::reader::detail {

namespace {

constexpr std::string_view kFormat = "nsys-csv";

bool is_pushpop_header(const std::vector<std::string>& names) {
  return has_columns(names, {"Start (ns)", "End (ns)", "Name", "TID", "Lvl"});
}

bool is_gputrace_header(const std::vector<std::string>& names) {
  return has_columns(names, {"Start (ns)", "Duration (ns)", "CorrId", "Strm", "Name"});
}

bool is_nsys_csv_header(const std::vector<std::string>& names) {
  return is_pushpop_header(names) || is_gputrace_header(names);
}

void read_pushpop(CsvTable& table, KernelTrace& trace) {
  const std::size_t start_column = table.require("Start (ns)");
  const std::size_t end_column = table.require("End (ns)");
  const std::size_t name_column = table.require("Name");
  const std::size_t thread_column = table.require("TID");
  const std::size_t level_column = table.require("Lvl");
  while (table.next()) {
    Range range;
    range.source = RangeSource::Nvtx;
    range.start = table.integer(start_column);
    const auto end = table.optional_integer(end_column);
    if (!end) continue;  // still open when the capture ended
    range.end = *end;
    if (range.end < range.start) table.fail(end_column, "expected an end >= the start");
    range.name = trace.names.intern(table.text(name_column));
    const std::int64_t thread = table.integer(thread_column);
    if (thread < 0) table.fail(thread_column, "expected a thread id >= 0");
    range.thread = static_cast<std::uint64_t>(thread);
    // The report knows the push/pop nesting; keep its level rather than rebuilding it.
    const std::int64_t level = table.integer(level_column);
    if (level < 0 || level > std::numeric_limits<std::uint32_t>::max()) {
      table.fail(level_column, "expected a nesting level >= 0");
    }
    range.depth = static_cast<std::uint32_t>(level);
    trace.ranges.push_back(range);
  }
}

// "Bytes (MB)" and friends: nsys uses decimal units (1 MB = 10^6 bytes).
std::optional<std::int64_t> bytes_scale(std::string_view column) {
  const std::size_t open = column.find('(');
  const std::size_t close = column.find(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  const std::string_view unit = column.substr(open + 1, close - open - 1);
  if (unit == "B" || unit == "byte" || unit == "bytes") return 1;
  if (unit == "KB" || unit == "kB") return 1'000;
  if (unit == "MB") return 1'000'000;
  if (unit == "GB") return 1'000'000'000;
  if (unit == "KiB") return 1'024;
  if (unit == "MiB") return 1'048'576;
  if (unit == "GiB") return 1'073'741'824;
  return std::nullopt;
}

// "262.144" MB -> 262144000 bytes, exactly (no binary floating point), rounded half up.
std::optional<std::int64_t> parse_scaled_decimal(std::string_view text, std::int64_t scale) {
  const std::size_t first = text.find_first_not_of(' ');
  if (first == std::string_view::npos) return std::nullopt;
  text = text.substr(first, text.find_last_not_of(' ') + 1 - first);
  std::uint64_t digits = 0;
  std::uint64_t denominator = 1;
  bool seen_point = false;
  bool seen_digit = false;
  for (const char c : text) {
    if (c == '.' && !seen_point) {
      seen_point = true;
    } else if (c >= '0' && c <= '9') {
      if (digits > 100'000'000'000'000'000ULL || denominator > 100'000'000'000'000'000ULL) {
        return std::nullopt;
      }
      digits = digits * 10 + static_cast<std::uint64_t>(c - '0');
      if (seen_point) denominator *= 10;
      seen_digit = true;
    } else {
      return std::nullopt;
    }
  }
  if (!seen_digit) return std::nullopt;
  __extension__ using Wide = unsigned __int128;
  const Wide value =
      (static_cast<Wide>(digits) * static_cast<Wide>(scale) + denominator / 2) / denominator;
  if (value > static_cast<Wide>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

GpuOpKind op_kind(std::string_view name) {
  if (name.starts_with("[CUDA memcpy")) return GpuOpKind::Memcpy;
  if (name.starts_with("[CUDA memset")) return GpuOpKind::Memset;
  return classify_kernel(name);
}

void read_gputrace(CsvTable& table, KernelTrace& trace) {
  const std::size_t start_column = table.require("Start (ns)");
  const std::size_t duration_column = table.require("Duration (ns)");
  const std::size_t correlation_column = table.require("CorrId");
  const std::size_t stream_column = table.require("Strm");
  const std::size_t name_column = table.require("Name");
  const auto device_column = table.find("Device");
  std::optional<std::size_t> bytes_column;
  std::int64_t scale = 1;
  for (std::string_view candidate : {"Bytes (MB)", "Bytes (B)", "Bytes (KB)", "Bytes (GB)",
                                     "Bytes (MiB)", "Bytes (KiB)", "Bytes (GiB)"}) {
    if ((bytes_column = table.find(candidate))) {
      scale = *bytes_scale(candidate);
      break;
    }
  }
  std::vector<std::string> device_names;
  while (table.next()) {
    GpuOp op;
    op.start = table.integer(start_column);
    const std::int64_t duration = table.integer(duration_column);
    if (duration < 0 || op.start > std::numeric_limits<TimeNs>::max() - duration) {
      table.fail(duration_column, "expected a duration >= 0 that ends before 2^63 ns");
    }
    op.end = op.start + duration;
    if (const auto correlation = table.optional_integer(correlation_column)) {
      if (*correlation < 0) table.fail(correlation_column, "expected a correlation id >= 0");
      op.correlation = static_cast<std::uint64_t>(*correlation);
    }
    const std::int64_t stream = table.optional_integer(stream_column).value_or(0);
    if (stream < 0) table.fail(stream_column, "expected a stream id >= 0");
    op.stream = static_cast<std::uint64_t>(stream);
    const std::string& name = table.text(name_column);
    op.kind = op_kind(name);
    op.name = trace.names.intern(name);
    if (bytes_column && !table.text(*bytes_column).empty()) {
      const auto bytes = parse_scaled_decimal(table.text(*bytes_column), scale);
      if (!bytes) table.fail(*bytes_column, "expected a byte count");
      op.bytes = *bytes;
    }
    if (device_column) {
      // "NVIDIA A100-SXM4-80GB (0)": the model, then the device index in parentheses.
      const std::string& device = table.text(*device_column);
      const std::size_t open = device.rfind('(');
      const auto index =
          open == std::string::npos
              ? parse_int64(device)
              : parse_int64(std::string_view(device).substr(open + 1, device.size() - open - 2));
      if (!device.empty() && (!index || *index < 0 || *index > std::int64_t{UINT32_MAX} ||
                              (open != std::string::npos && device.back() != ')'))) {
        table.fail(*device_column, "expected a device such as 'NVIDIA A100 (0)'");
      }
      op.device = static_cast<std::uint32_t>(index.value_or(0));
      const std::size_t model_end =
          open == std::string::npos || open == 0 ? 0 : device.find_last_not_of(' ', open - 1) + 1;
      if (model_end > 0) {
        std::string model = device.substr(0, model_end);
        if (std::find(device_names.begin(), device_names.end(), model) == device_names.end()) {
          device_names.push_back(std::move(model));
        }
      }
    }
    trace.ops.push_back(op);
  }
  trace.device_name = fmt::format("{}", fmt::join(device_names, ", "));
}

KernelTrace read_nsys_csv(const std::filesystem::path& path) {
  const DecompressedFile content = read_decompressed(path);
  CsvTable table(content.text(), path.string(), &is_nsys_csv_header,
                 "nsys stats CSV: nvtx_pushpop_trace 'Start (ns),End (ns),...,Name,PID,TID,Lvl' "
                 "or cuda_gpu_trace 'Start (ns),Duration (ns),CorrId,...,Strm,Name'");
  KernelTrace trace;
  trace.path = path.string();
  trace.format = std::string(kFormat);
  if (table.find("End (ns)") && table.find("Lvl")) {
    read_pushpop(table, trace);
  } else {
    read_gputrace(table, trace);
  }
  finish_trace(trace);
  return trace;
}

bool accepts_nsys_csv(const FileSniff& sniff) {
  return find_csv_header(sniff.head, &is_nsys_csv_header).has_value();
}

}  // namespace

ProfileReader nsys_csv_reader() {
  return {std::string(kFormat),
          "nsys stats CSV report: nvtx_pushpop_trace (nvtxpptrace) or cuda_gpu_trace (gputrace)",
          &accepts_nsys_csv, &read_nsys_csv};
}

}  // namespace perflow::reader::detail
