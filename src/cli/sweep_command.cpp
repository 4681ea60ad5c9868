#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "detail/progress_line.hpp"
#include "detail/set_option.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/core/error.hpp"
#include "perflow/explore/sweep.hpp"
#include "perflow/explore/sweep_runner.hpp"
#include "perflow/explore/sweep_table.hpp"

namespace perflow::cli::detail {
namespace {

struct SweepOptions {
  std::vector<std::string> files;  // SWEEP.json, or with --merge the parts
  std::string output;              // -o: CSV (or .jsonl)
  std::string jsonl;               // --jsonl
  unsigned jobs = 0;               // 0: every core
  std::string shard;               // "I/N"
  std::string merge;               // --merge OUT
  std::vector<std::string> set;    // --set POINTER=VALUE on the base config
};

// A slice of the runs: shard `index` of `count`.
struct Shard {
  std::uint64_t index = 0;
  std::uint64_t count = 1;
};

std::optional<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// --shard I/N, else a Slurm job array's task (SLURM_ARRAY_TASK_ID less SLURM_ARRAY_TASK_MIN,
// of SLURM_ARRAY_TASK_COUNT), else the whole sweep.
Shard shard_of(const std::string& option) {
  if (!option.empty()) {
    const std::size_t slash = option.find('/');
    const auto index = parse_count(std::string_view(option).substr(0, slash));
    const auto count = slash == std::string::npos
                           ? std::nullopt
                           : parse_count(std::string_view(option).substr(slash + 1));
    if (!index || !count || *count == 0 || *index >= *count) {
      throw Error(fmt::format(
          "--shard '{}': expected I/N with 0 <= I < N, such as 0/4 for the first of 4 shards",
          option));
    }
    return {*index, *count};
  }
  const char* count_text = std::getenv("SLURM_ARRAY_TASK_COUNT");
  const char* id_text = std::getenv("SLURM_ARRAY_TASK_ID");
  if (count_text == nullptr || id_text == nullptr) return {};
  const char* min_text = std::getenv("SLURM_ARRAY_TASK_MIN");
  const auto count = parse_count(count_text);
  const auto id = parse_count(id_text);
  const auto min = min_text != nullptr ? parse_count(min_text) : std::optional<std::uint64_t>(0);
  if (!count || !id || !min || *count == 0 || *id < *min || *id - *min >= *count) {
    throw Error(fmt::format(
        "the Slurm job array (SLURM_ARRAY_TASK_ID={}, SLURM_ARRAY_TASK_MIN={}, "
        "SLURM_ARRAY_TASK_COUNT={}) is not a range such as --array=0-3: give --shard I/N",
        id_text, min_text != nullptr ? min_text : "unset", count_text));
  }
  return {*id - *min, *count};
}

// A results file appended to as runs end; every batch is flushed so a killed sweep
// resumes from what reached the disk.
class ResultsFile {
 public:
  ResultsFile(std::string path, explore::TableFormat format)
      : path_(std::move(path)), format_(format) {}
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;
  ResultsFile(ResultsFile&& other) noexcept
      : path_(std::move(other.path_)),
        format_(other.format_),
        file_(std::exchange(other.file_, nullptr)) {}  // closed once, by its new owner
  ResultsFile& operator=(ResultsFile&&) = delete;
  ~ResultsFile() {
    if (file_ != nullptr) std::fclose(file_);
  }

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] explore::TableFormat format() const { return format_; }

  // Keeps the first `bytes` (what an earlier run completed) and appends after them; a new
  // or empty file starts with the header.
  void open(std::uintmax_t bytes, const std::string& header) {
    std::error_code ec;
    if (bytes > 0) {
      std::filesystem::resize_file(path_, bytes, ec);
      if (ec) fail(ec.message());
    }
    file_ = std::fopen(path_.c_str(), bytes > 0 ? "ab" : "wb");
    if (file_ == nullptr) fail(std::strerror(errno));
    if (bytes == 0) write(header);
  }

  void write(std::string_view text) {
    if (!text.empty() && std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
      fail(std::strerror(errno));
    }
  }

  void flush() {
    if (std::fflush(file_) != 0) fail(std::strerror(errno));
  }

  void close() {
    std::FILE* f = file_;
    file_ = nullptr;
    if (std::fclose(f) != 0) fail(std::strerror(errno));
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const {
    throw IoError(fmt::format("cannot write '{}': {}", path_, reason));
  }

  std::string path_;
  explore::TableFormat format_;
  std::FILE* file_ = nullptr;
};

void warn(const std::string& message) { fmt::print(stderr, "perflow: warning: {}\n", message); }

void run_merge(const SweepOptions& options) {
  if (options.files.empty()) throw Error("--merge OUT: name the parts to merge after it");
  const explore::TableFormat format = explore::table_format_of(options.merge, "--merge");
  std::vector<InputFile> inputs;
  std::vector<std::string> identities;
  identities.reserve(options.files.size());
  for (const std::string& part : options.files) {
    inputs.push_back({"a part", part});
    identities.push_back(explore::identity_path(part).string());
  }
  for (const std::string& identity : identities)
    inputs.push_back({"a part's identity file", identity});
  const std::string merge_identity = explore::identity_path(options.merge).string();
  const OutputFile outputs[] = {{"--merge", options.merge},
                                {"--merge's identity file", merge_identity}};
  check_output_paths(inputs, outputs);
  std::vector<std::filesystem::path> parts(options.files.begin(), options.files.end());
  const explore::MergedTable merged = explore::merge_tables(parts, format);
  for (const std::string& warning : merged.warnings) warn(warning);
  // A device or FIFO (written in place) gets no identity file beside it.
  if (merged.identity && !is_special_file(options.merge)) {
    const std::string identity = explore::identity_text(*merged.identity);
    const std::pair<std::filesystem::path, std::string_view> files[] = {
        {options.merge, merged.text}, {merge_identity, identity}};
    write_files_atomically(files);
  } else {
    write_file_atomically(options.merge, merged.text);
    // An identity left from an earlier merge would name what the file no longer holds.
    std::error_code ignored;
    if (!merged.identity) std::filesystem::remove(merge_identity, ignored);
  }
  fmt::print("merged {} parts into {}\n", parts.size(), options.merge);
}

void run_sweep_command(const SweepOptions& options) {
  if (!options.merge.empty()) {
    if (!options.set.empty()) {
      throw Error(
          "--set changes the sweep's base config: it goes with running a sweep, not "
          "with --merge (the parts' rows are already computed)");
    }
    return run_merge(options);
  }
  if (options.files.size() != 1) {
    throw Error(
        fmt::format("expected one sweep file, got {} (to merge shards: perflow sweep "
                    "--merge OUT PARTS...)",
                    options.files.size()));
  }
  const std::string& sweep_path = options.files.front();
  std::vector<ResultsFile> outputs;
  if (!options.output.empty()) {
    outputs.emplace_back(options.output, explore::table_format_of(options.output, "-o"));
  }
  if (!options.jsonl.empty()) {
    if (explore::table_format_of(options.jsonl, "--jsonl") != explore::TableFormat::Jsonl) {
      throw Error(fmt::format("--jsonl '{}': expected a file ending in .jsonl", options.jsonl));
    }
    outputs.emplace_back(options.jsonl, explore::TableFormat::Jsonl);
  }
  const Shard shard = shard_of(options.shard);
  // Each results file has its identity file beside it (explore::TableIdentity).
  const auto identity_file = [](const std::string& path) {
    return path.empty() ? std::string() : explore::identity_path(path).string();
  };
  const std::string output_identity = identity_file(options.output);
  const std::string jsonl_identity = identity_file(options.jsonl);
  const OutputFile files[] = {{"-o", options.output},
                              {"--jsonl", options.jsonl},
                              {"-o's identity file", output_identity},
                              {"--jsonl's identity file", jsonl_identity}};
  {
    const InputFile inputs[] = {{"the sweep", sweep_path}};
    check_output_paths(inputs, files);
  }
  const explore::Sweep sweep = explore::load_sweep(sweep_path, parse_overrides(options.set));
  if (sweep.base_pointer.empty()) {
    const InputFile inputs[] = {{"the sweep's base config", sweep.base_file}};
    check_output_paths(inputs, files);
  }
  const std::uint64_t total = sweep.run_count();
  const explore::RunRange range = explore::shard_runs(total, shard.index, shard.count);
  const std::uint64_t first = range.first;
  const std::uint64_t last = range.last;

  // Resume: every output continues after the rows all of them hold.
  const auto identity_for = [&](const ResultsFile& out) {
    return explore::identity_of(sweep, shard.index, shard.count, out.format());
  };
  std::uint64_t resumed = outputs.empty() ? 0 : last - first;
  std::vector<explore::ResumePoint> found;
  for (const ResultsFile& out : outputs) {
    found.push_back(explore::find_resume_point(out.path(), sweep, identity_for(out)));
    resumed = std::min(resumed, found.back().rows);
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    ResultsFile& out = outputs[i];
    const explore::TableIdentity identity = identity_for(out);
    const explore::ResumePoint point =
        explore::find_resume_point(out.path(), sweep, identity, resumed);
    if (point.without_identity) {
      warn(fmt::format(
          "{}: has no identity file (written by an older PerFlow): its rows were checked "
          "against this sweep's axis values only, not its base config; writing {}",
          out.path(), explore::identity_path(out.path()).string()));
    }
    if (!found[i].rerun_reason.empty()) {
      warn(fmt::format("{}; running that run and those after it again", found[i].rerun_reason));
    }
    write_file_atomically(explore::identity_path(out.path()), explore::identity_text(identity));
    out.open(point.bytes, explore::table_header(sweep, out.format()));
  }

  const bool to_stdout = outputs.empty();
  ProgressLine progress("runs", !to_stdout && ::isatty(STDOUT_FILENO) && ::isatty(STDERR_FILENO));
  std::uint64_t invalid = 0;
  std::optional<explore::RunOutcome> first_invalid;  // what a sweep with no answer shows
  if (to_stdout) fmt::print("{}", explore::table_header(sweep, explore::TableFormat::Csv));
  explore::run_sweep(
      sweep, first + resumed, last, options.jobs,
      [&](const explore::RunOutcome& outcome) {
        if (!outcome.error.empty() && invalid++ == 0) first_invalid = outcome;
        if (to_stdout) {
          fmt::print("{}", explore::table_row(sweep, outcome, explore::TableFormat::Csv));
        }
        for (ResultsFile& out : outputs)
          out.write(explore::table_row(sweep, outcome, out.format()));
      },
      [&](const explore::SweepProgress& p) {
        for (ResultsFile& out : outputs) out.flush();
        if (to_stdout) std::fflush(stdout);
        progress.update(p);
      });
  progress.clear();
  for (ResultsFile& out : outputs) out.close();
  const std::uint64_t ran = last - first - resumed;
  if (!to_stdout) {
    std::string where;
    for (const ResultsFile& out : outputs) where += (where.empty() ? "" : " and ") + out.path();
    const std::string slice =
        shard.count > 1 ? fmt::format(" (shard {}/{}: runs {} to {})", shard.index, shard.count,
                                      first, last == first ? first : last - 1)
                        : std::string();
    fmt::print("{}: {} runs{}", sweep_path, last - first, slice);
    if (resumed > 0) fmt::print(", {} already in {}", resumed, where);
    fmt::print("; ran {}: {} simulated, {} invalid\n", ran, ran - invalid, invalid);
    fmt::print("results written to {}\n", where);
  }
  if (ran > 0 && invalid == ran) {
    // The rows are written (each says why); the exit code says there is no answer.
    std::fflush(stdout);
    throw NoAnswerError(
        fmt::format("{}: no run simulated ({} of {} invalid); the first, run {}: {}", sweep_path,
                    invalid, ran, first_invalid->run, first_invalid->error));
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Simulate every combination of a sweep file's axes over a base config, on every "
      "core, one result row per run");
  cmd->add_option("files", options->files,
                  "The sweep file (JSON); with --merge, the result files of its shards");
  cmd->add_option("-o,--output", options->output,
                  "Write the results to this file (.csv, or .jsonl); an existing one is resumed");
  cmd->add_option("--jsonl", options->jsonl, "Also write the results as JSON Lines (.jsonl)");
  cmd->add_option("--jobs", options->jobs, "Threads to run on (default: every core)")
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option("--shard", options->shard,
                  "Run slice I of N (0 <= I < N); default: the Slurm job array's task, if any");
  cmd->add_option("--merge", options->merge,
                  "Merge the shards' result files (the positional files) into this file");
  add_set_option(*cmd, options->set);
  cmd->callback([options] { run_sweep_command(*options); });
}

}  // namespace perflow::cli::detail
