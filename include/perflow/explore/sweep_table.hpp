#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
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

/// The runs [first, last) of shard `index` of `count` of a sweep of `runs` runs: contiguous
/// slices, the same whoever computes them.
struct RunRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};
RunRange shard_runs(std::uint64_t runs, std::uint64_t index, std::uint64_t count);

/// What a results file holds: the rows of which sweep (its digest), which shard of it, in
/// which format. Written beside the results, in `identity_path(results)`, when a sweep
/// starts writing them (the rows keep their format: CSV and JSON Lines readers see no
/// change); merge and resume compare it.
struct TableIdentity {
  std::string digest;       ///< Sweep::digest
  std::uint64_t runs = 0;   ///< the sweep's run count
  std::uint64_t shard = 0;  ///< the slice the file holds, of `shards`
  std::uint64_t shards = 1;
  TableFormat format = TableFormat::Csv;

  bool operator==(const TableIdentity&) const = default;
};
TableIdentity identity_of(const Sweep& sweep, std::uint64_t shard, std::uint64_t shards,
                          TableFormat format);
/// `results` with ".identity.json" appended.
std::filesystem::path identity_path(const std::filesystem::path& results);
/// The identity file's text: a small JSON object, one key a line.
std::string identity_text(const TableIdentity& identity);
/// The identity of a results file; nullopt when it has no identity file (results written
/// before identities were). Throws Error naming the identity file when it is not one.
std::optional<TableIdentity> read_identity(const std::filesystem::path& results);

/// The CSV header line ("run,/pipeline/stages,...,error\n"); empty for JSON Lines.
std::string table_header(const Sweep& sweep, TableFormat format);

/// One line for `outcome`: the run, the axis values, the figures (empty or null where a
/// run has none) and the error. Numbers are printed as the report prints them. Text with a
/// NUL or bytes that are not UTF-8 has them replaced by U+FFFD, in CSV as JSON Lines does.
std::string table_row(const Sweep& sweep, const RunOutcome& outcome, TableFormat format);

/// How far an earlier run of the same sweep got in `path`: the number of complete rows it
/// holds for the shard's runs first, first+1, ..., and the byte length of the header and
/// those rows. A partial last line (left by a run that was killed) is not counted, nor is a
/// row that does not parse as this sweep's row (its fields, numbers as PerFlow writes them)
/// or anything after it: they are run again. Throws Error when the file holds something
/// else: another sweep's identity, header or rows, another shard, rows out of order, or a
/// path that is not a regular file.
struct ResumePoint {
  std::uint64_t rows = 0;
  std::uintmax_t bytes = 0;
  /// The file holds a header or rows but has no identity file (written by an older PerFlow).
  bool without_identity = false;
  /// Why rows from `rows` on are run again ("r.csv:line 5: field 'mfu' of run 3: ..."), or
  /// empty.
  std::string rerun_reason;
};
/// At most `max_rows` rows are counted (two outputs resume from the shorter).
ResumePoint find_resume_point(const std::filesystem::path& path, const Sweep& sweep,
                              const TableIdentity& identity, std::uint64_t max_rows = UINT64_MAX);

/// The shards of one sweep merged: the text the sweep unsharded writes, byte for byte, and
/// its identity (none when the parts have none).
struct MergedTable {
  std::string text;
  std::optional<TableIdentity> identity;
  std::vector<std::string> warnings;  ///< e.g. parts without identity files
};
/// Merges sweep result files. With identity files, the parts must be every shard of one
/// sweep, once each, each complete; parts without any are accepted (with a warning) only
/// when none has one, and must then hold every run once. Every row must parse as a row of
/// the sweep (the header's columns, or the first row's keys). Throws Error naming the file
/// (and FormatError its line and field) otherwise.
MergedTable merge_tables(std::span<const std::filesystem::path> parts, TableFormat format);

/// The format a results file's extension names (.csv, .jsonl); throws Error otherwise.
TableFormat table_format_of(const std::filesystem::path& path, std::string_view option);

}  // namespace perflow::explore
