#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/task.hpp"
#include "perflow/core/time.hpp"
#include "perflow/core/trace.hpp"

// The trace as a table: one row per task, for pandas, spreadsheets and scripts.
namespace perflow {

enum class TaskTableFormat { Csv, Jsonl };

/// The columns, in order: the CSV header and the keys of each JSON line.
inline constexpr std::array<std::string_view, 9> kTaskTableColumns = {
    "device", "lane", "kind", "microbatch", "chunk", "stage", "iteration", "start_ns", "end_ns"};

/// .csv or .jsonl (any case); nullopt otherwise.
std::optional<TaskTableFormat> task_table_format_of(const std::filesystem::path& path);

/// The whole table as text.
///
/// One row per task, lane by lane (lanes in id order: the devices' compute lanes, then the
/// communication lanes), each lane's tasks in execution order (Trace::lane_events). `lane`
/// is the lane's name ("compute", "send 3>4", "dp all-reduce"), `kind` the task kind's name
/// (F, B, W, BW, SEND, ALLREDUCE, OPT, RECV, SYNC). `microbatch`, `chunk` and `stage` are
/// empty (CSV) or null (JSONL) where the kind has none: an ALLREDUCE reduces a whole (stage,
/// chunk), so it has no microbatch; an OPT steps all of its device's stages and chunks and a
/// SYNC joins all devices, so they have none of the three. `iteration` is the task's training
/// iteration (0 when one iteration is simulated). Times are integer nanoseconds.
/// CSV has a header line and quotes fields per RFC 4180 where needed; JSONL is one JSON
/// object per line. Every line ends with '\n'. Deterministic: same input, same bytes.
std::string render_task_table(const EventGraph& graph, const Trace& trace, TaskTableFormat format);

/// render_task_table, appended to `out` (which keeps its contents). Throws
/// std::invalid_argument, with `out` as it was, for a trace that is not of `graph`.
void append_task_table(std::string& out, const EventGraph& graph, const Trace& trace,
                       TaskTableFormat format);

/// One row of a task table, as parse_task_table reads it back.
struct TaskTableRow {
  std::uint32_t device = 0;
  std::string lane;
  TaskKind kind = TaskKind::F;
  std::optional<std::uint32_t> microbatch;
  std::optional<std::uint32_t> chunk;
  std::optional<std::uint32_t> stage;
  std::uint32_t iteration = 0;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;

  friend bool operator==(const TaskTableRow&, const TaskTableRow&) = default;
};

/// Reads a table written by render_task_table (CSV: the header line first; JSONL: one object
/// per line, blank lines skipped). Throws FormatError naming `source` and the line for
/// anything else: wrong header or keys, a wrong number of fields, a bad number or kind, an
/// unterminated quote.
std::vector<TaskTableRow> parse_task_table(std::string_view text, TaskTableFormat format,
                                           const std::string& source = "task table");

}  // namespace perflow
