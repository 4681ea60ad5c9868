// rocprofv2 (ROCm 5.5-6.x, deprecated) text output: one dispatch per line as
// `Dispatch_ID(1), GPU_ID(4), Queue_ID(1), ..., Kernel_Name("name"), Begin_Timestamp(t0),
// End_Timestamp(t1), Correlation_ID(0), <counters>`. Other lines (the counter preamble, API
// records without a thread id) are skipped. Times are the file's integer ns.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "detail/comm_kernel.hpp"
#include "detail/csv.hpp"
#include "detail/decompressed_file.hpp"
#include "detail/excerpt.hpp"
#include "detail/readers.hpp"
#include "detail/trace_finish.hpp"
#include "perflow/reader/profile_error.hpp"

namespace perflow::reader::detail {

namespace {

constexpr std::string_view kFormat = "rocprofv2-text";
constexpr std::string_view kDispatch = "Dispatch_ID(";

// Splits `Key(value), Key("quoted, (value)"), ...`; nullopt if the line is not in that form.
std::optional<std::vector<std::pair<std::string_view, std::string_view>>> split_fields(
    std::string_view line) {
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t open = line.find('(', pos);
    if (open == std::string_view::npos) return std::nullopt;
    const std::string_view key = line.substr(pos, open - pos);
    std::size_t close = 0;
    std::string_view value;
    if (open + 1 < line.size() && line[open + 1] == '"') {
      // Kernel names hold parentheses and commas; the quote before ')' ends them.
      close = line.find("\")", open + 2);
      if (close == std::string_view::npos) return std::nullopt;
      value = line.substr(open + 2, close - open - 2);
      ++close;
    } else {
      close = line.find(')', open + 1);
      if (close == std::string_view::npos) return std::nullopt;
      value = line.substr(open + 1, close - open - 1);
    }
    if (key.empty() || key.find_first_of(" ,\"") != std::string_view::npos) return std::nullopt;
    fields.emplace_back(key, value);
    pos = close + 1;
    while (pos < line.size() && (line[pos] == ',' || line[pos] == ' ')) ++pos;
  }
  return fields;
}

KernelTrace read_rocprof_v2(const std::filesystem::path& path) {
  const DecompressedFile content = read_decompressed(path);
  const std::string_view text = content.text();
  const std::string file = path.string();
  KernelTrace trace;
  trace.path = file;
  trace.format = std::string(kFormat);
  std::size_t line_number = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (!line.starts_with(kDispatch)) continue;
    const std::string location = fmt::format("line {}", line_number);
    const auto fields = split_fields(line);
    if (!fields) {
      throw ProfileError(
          file, location,
          fmt::format("expected 'Key(value), ...' fields, found '{}'", excerpt(line)));
    }
    const auto field = [&](std::string_view key) -> std::optional<std::string_view> {
      for (const auto& [name, value] : *fields) {
        if (name == key) return value;
      }
      return std::nullopt;
    };
    const auto number = [&](std::string_view key, bool required) -> std::optional<std::int64_t> {
      const auto value = field(key);
      if (!value) {
        if (!required) return std::nullopt;
        throw ProfileError(file, location, fmt::format("expected {}(...), found none", key));
      }
      const auto parsed = parse_int64(*value);
      if (!parsed || *parsed < 0) {
        throw ProfileError(
            file, location,
            fmt::format("{}: expected an integer >= 0, found '{}'", key, excerpt(*value)));
      }
      return parsed;
    };
    const auto name = field("Kernel_Name");
    if (!name) throw ProfileError(file, location, "expected Kernel_Name(...), found none");
    GpuOp op;
    op.start = *number("Begin_Timestamp", true);
    op.end = *number("End_Timestamp", true);
    if (op.end < op.start) {
      throw ProfileError(file, location,
                         fmt::format("expected End_Timestamp >= Begin_Timestamp, found {} and {}",
                                     op.end, op.start));
    }
    const std::int64_t device = number("GPU_ID", false).value_or(0);
    op.device = static_cast<std::uint32_t>(std::min<std::int64_t>(device, UINT32_MAX));
    op.stream = static_cast<std::uint64_t>(number("Queue_ID", false).value_or(0));
    const std::int64_t correlation = number("Correlation_ID", false).value_or(0);
    op.correlation = correlation == 0 ? kNoCorrelation : static_cast<std::uint64_t>(correlation);
    op.kind = classify_kernel(*name);
    op.name = trace.names.intern(*name);
    trace.ops.push_back(op);
  }
  finish_trace(trace);
  return trace;
}

// A dispatch line among the first lines (after the counter preamble).
bool accepts_rocprof_v2(const FileSniff& sniff) {
  const std::string_view head = sniff.head;
  std::size_t pos = 0;
  for (int line = 0; line < 32 && pos < head.size(); ++line) {
    const std::size_t end = std::min(head.find('\n', pos), head.size());
    const std::string_view text = head.substr(pos, end - pos);
    if (text.starts_with(kDispatch) && text.find("Kernel_Name(") != std::string_view::npos) {
      return true;
    }
    pos = end + 1;
  }
  return false;
}

}  // namespace

ProfileReader rocprof_v2_reader() {
  return {std::string(kFormat),
          "rocprofv2 text output (Dispatch_ID(...), ..., Kernel_Name(...), Begin_Timestamp(...))",
          &accepts_rocprof_v2, &read_rocprof_v2};
}

}  // namespace perflow::reader::detail
