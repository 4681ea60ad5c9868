// Fuzz target for the rows `perflow sweep` reads back: bytes as an existing results file of
// a fixed 6-run sweep, read by a resume (find_resume_point) and a merge (merge_tables), as CSV
// and as JSON Lines, with and without an identity file, alone and as shard 1/2 beside a clean
// shard 0/2. An input that starts as an identity file ({"perflow": "sweep results", ...}) is
// that identity beside a clean results file instead. A merged table with the sweep's runs
// (their axis values as the sweep has them) must be what a resume takes whole; a resume never
// counts more rows than the file holds. Bad input must end in a perflow::Error, never a crash, a
// hang or another exception. Built with clang's -fsanitize=fuzzer when PERFLOW_FUZZ=ON; every build
// replays tests/fuzz/corpus/sweep_rows under ctest.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "explore_fuzz.hpp"
#include "perflow/explore/sweep.hpp"
#include "perflow/explore/sweep_run.hpp"
#include "perflow/explore/sweep_table.hpp"

namespace {

namespace explore = perflow::explore;
namespace fuzz = perflow::fuzz;
using explore::TableFormat;

// tests/golden/sweep_outputs/sweep.json: quotes and a comma in a cell, a zipped pair.
constexpr std::string_view kSweep = R"({
  "base": {
    "pipeline": {"schedule": "1f1b", "stages": 4, "microbatches": 8},
    "costs": {"forward": "1ms", "backward": "2ms", "weight": "1ms", "activation": "2GB"},
    "device": "h100-sxm"
  },
  "axes": {
    "/pipeline/schedule": ["1f1b", "zbv"],
    "/pipeline/chunks": [1, 2],
    "/pipeline/microbatches": [4, 8, 9],
    "/description": ["a, \"quoted\" cell"]
  },
  "zip": [["/pipeline/schedule", "/pipeline/chunks"]]
})";

struct Fixture {
  std::filesystem::path dir;
  explore::Sweep sweep;
  std::vector<explore::RunOutcome> outcomes;  // every run, simulated once
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture made;
    made.dir = fuzz::scratch_dir("sweep_rows");
    fuzz::write_file(made.dir / "sweep.json", kSweep);
    made.sweep = explore::load_sweep(made.dir / "sweep.json");
    for (std::uint64_t run = 0; run < made.sweep.run_count(); ++run) {
      made.outcomes.push_back(explore::run_point(made.sweep, run));
    }
    return made;
  }();
  return f;
}

std::string extension(TableFormat format) { return format == TableFormat::Csv ? ".csv" : ".jsonl"; }

// The clean results of shard `shard` of `shards`.
std::string clean_text(TableFormat format, std::uint64_t shard, std::uint64_t shards) {
  const Fixture& f = fixture();
  const explore::RunRange range = explore::shard_runs(f.sweep.run_count(), shard, shards);
  std::string text = explore::table_header(f.sweep, format);
  for (std::uint64_t run = range.first; run < range.last; ++run) {
    text += explore::table_row(f.sweep, f.outcomes[run], format);
  }
  return text;
}

// Writes a results file and, unless `identity` is empty, its identity file.
std::filesystem::path write_results(const std::string& name, TableFormat format,
                                    std::string_view text, std::string_view identity) {
  const std::filesystem::path path = fixture().dir / (name + extension(format));
  fuzz::write_file(path, text);
  const std::filesystem::path id = explore::identity_path(path);
  std::filesystem::remove(id);
  if (!identity.empty()) fuzz::write_file(id, identity);
  return path;
}

// The merged file holds the sweep's header (CSV) and its runs in order, each row with the
// run's own axis values; only the figures may differ from a clean run's. (A merge has no sweep
// file: it checks the parts' identities and that each row parses as a row of the part's own
// columns, so it keeps a header or an axis value that was edited; a resume, which has the
// sweep, refuses those.)
bool holds_the_sweeps_runs(std::string_view text, TableFormat format) {
  const Fixture& f = fixture();
  if (format == TableFormat::Csv) {
    const std::string header = explore::table_header(f.sweep, format);
    if (!text.starts_with(header)) return false;
    text.remove_prefix(header.size());
  }
  for (const explore::RunOutcome& outcome : f.outcomes) {
    // The row up to its last axis value, the description: `..."a, ""quoted"" cell",`.
    const std::string clean = explore::table_row(f.sweep, outcome, format);
    const std::string_view key = std::string_view(clean).substr(0, clean.find("cell\"") + 6);
    const std::size_t end = text.find('\n');
    if (!text.starts_with(key) || end == std::string_view::npos) return false;
    text.remove_prefix(end + 1);
  }
  return text.empty();
}

// A merged file that holds the sweep's runs is a complete results file of the sweep: a resume
// takes it whole (merge and resume agree on which figures are well written).
void check_merged(const explore::MergedTable& merged, TableFormat format) {
  if (!holds_the_sweeps_runs(merged.text, format)) return;
  const Fixture& f = fixture();
  const explore::TableIdentity whole = explore::identity_of(f.sweep, 0, 1, format);
  const std::filesystem::path path =
      write_results("merged", format, merged.text, explore::identity_text(whole));
  explore::ResumePoint point;
  try {
    point = explore::find_resume_point(path, f.sweep, whole);
  } catch (const perflow::Error& e) {
    fuzz::fail(std::string("a resume refuses what a merge accepted: ") + e.what() +
               "\n--- the merged file:\n" + merged.text);
  }
  if (point.rows != f.sweep.run_count() || point.bytes != merged.text.size()) {
    fuzz::fail("a resume does not take whole what a merge accepted: " + point.rerun_reason +
               "\n--- the merged file:\n" + merged.text);
  }
}

// The readers run on this input, to tell an input every reader refused.
std::uint64_t reads = 0;

// Resumes from and merges `path` (as shard `shard` of `shards`, beside `others`).
void read_back(const std::filesystem::path& path, TableFormat format, std::uint64_t shard,
               std::uint64_t shards, const std::vector<std::filesystem::path>& others) {
  const Fixture& f = fixture();
  const explore::TableIdentity identity = explore::identity_of(f.sweep, shard, shards, format);
  reads += 2;
  fuzz::guarded([&] {
    const explore::ResumePoint point = explore::find_resume_point(path, f.sweep, identity);
    const explore::RunRange range = explore::shard_runs(f.sweep.run_count(), shard, shards);
    if (point.rows > range.last - range.first || point.bytes > std::filesystem::file_size(path)) {
      fuzz::fail("a resume counts more than the file holds");
    }
  });
  fuzz::guarded([&] {
    std::vector<std::filesystem::path> parts = others;
    parts.push_back(path);
    check_merged(explore::merge_tables(parts, format), format);
  });
}

}  // namespace

extern "C" std::uint64_t perflow_fuzz_errors() { return fuzz::error_count(); }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const Fixture& f = fixture();
  const std::uint64_t errors = fuzz::error_count();
  reads = 0;
  for (const TableFormat format : {TableFormat::Csv, TableFormat::Jsonl}) {
    if (input.substr(0, 64).find("sweep results") != std::string_view::npos) {
      // The input is the identity of a clean, complete results file.
      read_back(write_results("r", format, clean_text(format, 0, 1), input), format, 0, 1, {});
      continue;
    }
    const std::string whole = explore::identity_text(explore::identity_of(f.sweep, 0, 1, format));
    read_back(write_results("r", format, input, whole), format, 0, 1, {});
    read_back(write_results("r", format, input, ""), format, 0, 1, {});
    // Shard 1/2 beside a clean shard 0/2.
    const std::string half = explore::identity_text(explore::identity_of(f.sweep, 0, 2, format));
    const std::filesystem::path first =
        write_results("shard0", format, clean_text(format, 0, 2), half);
    const std::string second = explore::identity_text(explore::identity_of(f.sweep, 1, 2, format));
    read_back(write_results("r", format, input, second), format, 1, 2, {first});
  }
  // An input is an error when every reader refused it (each refusal was counted).
  fuzz::error_count() = errors + (fuzz::error_count() - errors == reads ? 1 : 0);
  return 0;
}
