#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perflow/explore/sweep.hpp"
#include "perflow/explore/sweep_run.hpp"

namespace perflow::explore {

/// A sweep's results file: CSV with a header, or JSON Lines (docs/search-and-sweeps.md "Sweeps").
enum class TableFormat { Csv, Jsonl };

/// The columns after `run` and the axes' pointers.
inline constexpr std::string_view kResultColumns[] = {
    "makespan_ns", "iteration_time_ns", "bubble_ratio",  "tokens_per_s", "mfu",
    "peak_memory", "peak_total_memory", "out_of_memory", "error"};

/// The CSV header line ("run,/pipeline/stages,...,error\n"); empty for JSON Lines.
std::string table_header(const Sweep& sweep, TableFormat format);

/// One line for `outcome`: the run, the axis values, the figures (empty or null where a
/// run has none) and the error. Numbers are printed as the report prints them.
std::string table_row(const Sweep& sweep, const RunOutcome& outcome, TableFormat format);

/// How far an earlier run of the same sweep got in `path`: the number of complete rows it
/// holds for runs first, first+1, ..., and the byte length of the header and those rows
/// (a partial last line, left by a run that was killed, is not counted). Throws Error
/// when the file holds something else: another sweep's header, or rows out of order.
struct ResumePoint {
  std::uint64_t rows = 0;
  std::uintmax_t bytes = 0;
};
/// At most `max_rows` rows are counted (two outputs resume from the shorter).
ResumePoint find_resume_point(const std::filesystem::path& path, const Sweep& sweep,
                              TableFormat format, std::uint64_t first,
                              std::uint64_t max_rows = UINT64_MAX);

/// Sorts the rows of sweep result files (the shards of one sweep) by run into one text:
/// what the sweep unsharded writes, byte for byte. Throws Error naming the file when the
/// parts disagree (headers), repeat a run, or miss one.
std::string merge_tables(std::span<const std::filesystem::path> parts, TableFormat format);

/// The format a results file's extension names (.csv, .jsonl); throws Error otherwise.
TableFormat table_format_of(const std::filesystem::path& path, std::string_view option);

}  // namespace perflow::explore
