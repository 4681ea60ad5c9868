#include "perflow/explore/sweep.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "perflow/core/error.hpp"
#include "perflow/core/memory_budget.hpp"
#include "perflow/explore/csv_table.hpp"
#include "perflow/explore/sweep_run.hpp"
#include "perflow/explore/sweep_runner.hpp"
#include "perflow/explore/sweep_table.hpp"
#include "perflow/study/config.hpp"

namespace perflow::explore {
namespace {

nlohmann::json document(const std::string& axes, const std::string& zip = "") {
  return nlohmann::json::parse(R"({
    "base": {"pipeline": {"schedule": "1f1b", "stages": 4, "microbatches": 8},
             "costs": {"forward": 10, "backward": 20, "weight": 15}},
    "axes": )" + axes + (zip.empty() ? "" : R"(, "zip": )" + zip) +
                               "}");
}

Sweep sweep_of(const std::string& axes, const std::vector<std::string>& order,
               const std::string& zip = "") {
  return parse_sweep(document(axes, zip), order, "s.json", ".");
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The values run `run` sets, as "pointer=value" texts.
std::vector<std::string> set_by(const Sweep& sweep, std::uint64_t run) {
  std::vector<std::string> texts;
  for (const study::ConfigOverride& o : sweep.overrides(run)) texts.push_back(o.text);
  return texts;
}

TEST(Sweep, FirstAxisIsOutermostInTheFileOrder) {
  const Sweep sweep =
      sweep_of(R"({"/pipeline/stages": [2, 4], "/pipeline/microbatches": [8, 16, 24]})",
               {"/pipeline/stages", "/pipeline/microbatches"});
  ASSERT_EQ(sweep.run_count(), 6u);
  EXPECT_EQ(sweep.pointers(),
            (std::vector<std::string>{"/pipeline/stages", "/pipeline/microbatches"}));
  EXPECT_EQ(set_by(sweep, 0),
            (std::vector<std::string>{"/pipeline/stages=2", "/pipeline/microbatches=8"}));
  EXPECT_EQ(set_by(sweep, 2),
            (std::vector<std::string>{"/pipeline/stages=2", "/pipeline/microbatches=24"}));
  EXPECT_EQ(set_by(sweep, 3),
            (std::vector<std::string>{"/pipeline/stages=4", "/pipeline/microbatches=8"}));
  // The other order written: the other nesting.
  const Sweep swapped =
      sweep_of(R"({"/pipeline/stages": [2, 4], "/pipeline/microbatches": [8, 16, 24]})",
               {"/pipeline/microbatches", "/pipeline/stages"});
  EXPECT_EQ(set_by(swapped, 1),
            (std::vector<std::string>{"/pipeline/microbatches=8", "/pipeline/stages=4"}));
}

TEST(Sweep, RangesIncludeTheirEndAndKeepIntegers) {
  const Sweep sweep = sweep_of(R"({"/pipeline/microbatches": {"from": 8, "to": 32, "step": 8},
                                   "/costs/forward": {"from": 0.5, "to": 0.2, "step": -0.1}})",
                               {"/pipeline/microbatches", "/costs/forward"});
  ASSERT_EQ(sweep.axes.size(), 2u);
  ASSERT_EQ(sweep.axes[0].values.size(), 4u);
  EXPECT_EQ(sweep.axes[0].values[3][0], nlohmann::json(32));
  EXPECT_TRUE(sweep.axes[0].values[3][0].is_number_integer());
  ASSERT_EQ(sweep.axes[1].values.size(), 4u);  // 0.5, 0.4, 0.3, 0.2 despite rounding
  EXPECT_NEAR(sweep.axes[1].values[3][0].get<double>(), 0.2, 1e-12);
}

TEST(Sweep, ZippedAxesMoveTogetherAtTheirFirstPointersPlace) {
  const Sweep sweep = sweep_of(
      R"({"/pipeline/microbatches": [8, 16], "/pipeline/schedule": ["1f1b", "zbv"],
          "/pipeline/chunks": [1, 2]})",
      {"/pipeline/microbatches", "/pipeline/schedule", "/pipeline/chunks"},
      R"([["/pipeline/schedule", "/pipeline/chunks"]])");
  ASSERT_EQ(sweep.run_count(), 4u);
  EXPECT_EQ(set_by(sweep, 1),
            (std::vector<std::string>{"/pipeline/microbatches=8", "/pipeline/schedule=\"zbv\"",
                                      "/pipeline/chunks=2"}));
}

TEST(Sweep, ErrorsNameThePointer) {
  EXPECT_EQ(error_of([] { sweep_of(R"({"/pipeline/stages": []})", {"/pipeline/stages"}); }),
            "s.json:/axes/~1pipeline~1stages: expected at least one value, got an empty list");
  EXPECT_EQ(error_of([] { sweep_of(R"({"stages": [1]})", {"stages"}); }),
            "s.json:/axes/stages: expected a JSON pointer such as /pipeline/stages, got 'stages'");
  EXPECT_EQ(error_of([] {
              sweep_of(R"({"/model/layers": {"from": 1, "to": 4, "step": -1}})", {"/model/layers"});
            }),
            "s.json:/axes/~1model~1layers/step: expected a step that goes from 1 to 4, got -1");
  EXPECT_EQ(error_of([] {
              sweep_of(R"({"/model/layers": {"from": 0, "to": 1e9, "step": 1}})",
                       {"/model/layers"});
            }),
            "s.json:/axes/~1model~1layers: 1000000001 values; an axis may have at most 16777216");
  EXPECT_EQ(error_of([] {
              sweep_of(R"({"/model/layers": {"from": 1, "to": 65536, "step": 1},
                           "/model/hidden": {"from": 1, "to": 65536, "step": 1},
                           "/model/heads": {"from": 1, "to": 2, "step": 1}})",
                       {"/model/layers", "/model/hidden", "/model/heads"});
            }),
            "s.json:/axes: 8589934592 runs; a sweep may have at most 4294967296");
  EXPECT_EQ(error_of([] { sweep_of(R"({"/model/layers": 3})", {"/model/layers"}); }),
            "s.json:/axes/~1model~1layers: expected a list of values or {\"from\": a, \"to\": b, "
            "\"step\": s}, got 3");
  EXPECT_EQ(error_of([] {
              sweep_of(R"({"/model/layers": [1, 2], "/model/hidden": [1]})",
                       {"/model/layers", "/model/hidden"},
                       R"([["/model/layers", "/model/hidden"]])");
            }),
            "s.json:/zip/0/1: zipped axes must have as many values: '/model/hidden' has 1, "
            "'/model/layers' has 2");
  EXPECT_EQ(error_of([] {
              sweep_of(R"({"/model/layers": [1]})", {"/model/layers"},
                       R"([["/model/layers", "/model/heads"]])");
            }),
            "s.json:/zip/0/1: '/model/heads' is not an axis of /axes");
  EXPECT_EQ(error_of([] { sweep_of(R"({"/model/layres": [1, 2]})", {"/model/layres"}); }),
            "s.json:/axes/~1model~1layres: '/model/layres' is not a place in a config: 'layres' "
            "is not a key of /model; did you mean 'layers'?");
  EXPECT_EQ(error_of([] {
              parse_sweep(nlohmann::json::parse(R"({"base": 3, "axes": {"/model/layers": [1]}})"),
                          {"/model/layers"}, "s.json", ".");
            }),
            "s.json:/base: expected a config object or the path of a config file, got 3");
}

// A row is what reading, building and simulating that config alone gives.
TEST(Sweep, RunsEqualTheConfigsSimulatedAlone) {
  const Sweep sweep = sweep_of(
      R"({"/pipeline/schedule": ["1f1b", "zb-h1", "zbv"], "/pipeline/chunks": [1, 2],
          "/pipeline/microbatches": [8, 12]})",
      {"/pipeline/schedule", "/pipeline/chunks", "/pipeline/microbatches"});
  int simulated = 0;
  for (std::uint64_t run = 0; run < sweep.run_count(); ++run) {
    const RunOutcome outcome = run_point(sweep, run);
    nlohmann::json config = sweep.base;
    study::apply_overrides(config, sweep.overrides(run), "s.json");
    try {
      const study::Config alone = study::parse_config(config, "s.json");
      const EventGraph graph = study::build_graph(alone);
      const simulator::SimulationResult result = study::simulate(alone, graph);
      EXPECT_EQ(outcome.error, "") << run;
      EXPECT_EQ(outcome.makespan, result.metrics.makespan) << run;
      EXPECT_EQ(outcome.bubble_ratio, result.metrics.bubble_ratio) << run;
      double peak = 0;
      for (const auto& d : result.metrics.devices) peak = std::max(peak, d.peak_memory);
      EXPECT_EQ(outcome.peak_memory, peak) << run;
      ++simulated;
    } catch (const ConfigError& e) {
      const std::string expected =
          "s.json:/base" + e.pointer() + ": " + e.message() + " (set by the sweep axis '";
      EXPECT_EQ(outcome.error.substr(0, expected.size()), expected) << run;
    }
  }
  EXPECT_EQ(simulated, 6);  // 1f1b and zb-h1 with 1 chunk, zbv with 2
}

TEST(Sweep, InlineBaseErrorsPointIntoTheSweepFile) {
  const Sweep sweep = sweep_of(R"({"/pipeline/stages": [0]})", {"/pipeline/stages"});
  EXPECT_EQ(run_point(sweep, 0).error,
            "s.json:/base/pipeline/stages: expected an integer in [1, 65536], got 0 (set by the "
            "sweep axis '/pipeline/stages=0')");
}

std::vector<std::string> rows_with_jobs(const Sweep& sweep, unsigned jobs) {
  std::vector<std::string> rows;
  run_sweep(sweep, 0, sweep.run_count(), jobs, [&](const RunOutcome& outcome) {
    rows.push_back(table_row(sweep, outcome, TableFormat::Csv));
  });
  return rows;
}

TEST(Sweep, RowsComeInRunOrderWhateverTheJobs) {
  const Sweep sweep = sweep_of(R"({"/pipeline/stages": {"from": 2, "to": 9, "step": 1},
                                   "/pipeline/microbatches": {"from": 1, "to": 40, "step": 1}})",
                               {"/pipeline/stages", "/pipeline/microbatches"});
  const std::vector<std::string> one = rows_with_jobs(sweep, 1);
  ASSERT_EQ(one.size(), 320u);
  for (std::size_t i = 0; i < one.size(); ++i)
    ASSERT_EQ(one[i].rfind(std::to_string(i) + ",", 0), 0u);
  EXPECT_EQ(rows_with_jobs(sweep, 2), one);
  EXPECT_EQ(rows_with_jobs(sweep, 5), one);
}

TEST(Sweep, AnErrorWhileEmittingStopsTheWorkers) {
  const Sweep sweep = sweep_of(R"({"/pipeline/microbatches": {"from": 1, "to": 2000, "step": 1}})",
                               {"/pipeline/microbatches"});
  std::uint64_t emitted = 0;
  EXPECT_THROW(run_sweep(sweep, 0, sweep.run_count(), 2,
                         [&](const RunOutcome&) {
                           if (++emitted == 10) throw IoError("disk full");
                         }),
               IoError);
  EXPECT_EQ(emitted, 10u);
}

TEST(SweepTable, CsvQuotesWhatNeedsIt) {
  const Sweep sweep =
      sweep_of(R"({"/description": ["a,b", "say \"hi\"", "plain"]})", {"/description"});
  RunOutcome outcome;
  outcome.run = 1;
  outcome.error = "bad, \"very\"";
  EXPECT_EQ(table_header(sweep, TableFormat::Csv),
            "run,/description,makespan_ns,iteration_time_ns,bubble_ratio,tokens_per_s,mfu,"
            "peak_memory,peak_total_memory,out_of_memory,error\n");
  EXPECT_EQ(table_row(sweep, outcome, TableFormat::Csv),
            "1,\"say \"\"hi\"\"\",,,,,,,,,\"bad, \"\"very\"\"\"\n");
  outcome.run = 0;
  outcome.error.clear();
  outcome.makespan = 1234;
  outcome.iteration_time = 1200;
  outcome.bubble_ratio = 0.25;
  outcome.tokens_per_s = 1.5e6;
  outcome.peak_memory = 3;
  outcome.peak_total_memory = 7.5;
  EXPECT_EQ(table_row(sweep, outcome, TableFormat::Csv),
            "0,\"a,b\",1234,1200,0.25,1500000.0,,3.0,7.5,false,\n");
  EXPECT_EQ(table_row(sweep, outcome, TableFormat::Jsonl),
            "{\"run\":0,\"/description\":\"a,b\",\"makespan_ns\":1234,\"iteration_time_ns\":1200,"
            "\"bubble_ratio\":0.25,"
            "\"tokens_per_s\":1500000.0,\"mfu\":null,\"peak_memory\":3.0,\"peak_total_memory\":7.5,"
            "\"out_of_memory\":false,\"error\":null}\n");
}

class SweepFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() /
        ("perflow_sweep_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path write(const std::string& name, const std::string& text) {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::filesystem::path dir_;
};

std::string table_of(const Sweep& sweep, std::uint64_t first, std::uint64_t last,
                     TableFormat format) {
  std::string text = table_header(sweep, format);
  run_sweep(sweep, first, last, 1,
            [&](const RunOutcome& outcome) { text += table_row(sweep, outcome, format); });
  return text;
}

// The identity of shard `index` of `count` of `sweep`'s results.
TableIdentity id(const Sweep& sweep, std::uint64_t index = 0, std::uint64_t count = 1,
                 TableFormat format = TableFormat::Csv) {
  return identity_of(sweep, index, count, format);
}

TEST_F(SweepFiles, ResumeCountsCompleteRowsOfThisSweep) {
  const Sweep sweep =
      sweep_of(R"({"/pipeline/microbatches": [4, 8, 12, 16]})", {"/pipeline/microbatches"});
  const std::string full = table_of(sweep, 0, 4, TableFormat::Csv);
  const std::size_t second_row_end = full.find('\n', full.find('\n', full.find('\n') + 1) + 1) + 1;
  // Two rows and a piece of the third.
  const auto partial = write("p.csv", full.substr(0, second_row_end + 5));
  const ResumePoint point = find_resume_point(partial, sweep, id(sweep));
  EXPECT_EQ(point.rows, 2u);
  EXPECT_EQ(point.bytes, second_row_end);
  EXPECT_TRUE(point.without_identity);
  EXPECT_EQ(point.rerun_reason, "");
  EXPECT_EQ(find_resume_point(partial, sweep, id(sweep), 1).rows, 1u);
  EXPECT_EQ(find_resume_point(dir_ / "none.csv", sweep, id(sweep)).rows, 0u);
  // A shard's file starts at its first run (shard 1/2 of 4 runs: run 2).
  EXPECT_NE(error_of([&] {
              find_resume_point(partial, sweep, id(sweep, 1, 2));
            }).find("line 2 is not the result of run 2 of this sweep"),
            std::string::npos);
  // Another sweep's rows (other axis values) are not resumed.
  const Sweep other =
      sweep_of(R"({"/pipeline/microbatches": [4, 6, 12, 16]})", {"/pipeline/microbatches"});
  EXPECT_NE(error_of([&] {
              find_resume_point(partial, other, id(other));
            }).find("line 3 is not the result of run 1 of this sweep"),
            std::string::npos);
  const Sweep columns = sweep_of(R"({"/pipeline/stages": [4]})", {"/pipeline/stages"});
  EXPECT_NE(
      error_of([&] {
        find_resume_point(partial, columns, id(columns));
      }).find("holds the results of another sweep: its header is 'run,/pipeline/microbatches,"),
      std::string::npos);
}

TEST_F(SweepFiles, ShardsMergeIntoTheUnshardedFile) {
  const Sweep sweep = sweep_of(R"({"/pipeline/microbatches": {"from": 1, "to": 10, "step": 1}})",
                               {"/pipeline/microbatches"});
  for (const TableFormat format : {TableFormat::Csv, TableFormat::Jsonl}) {
    const std::string whole = table_of(sweep, 0, 10, format);
    const std::vector<std::filesystem::path> parts = {write("b", table_of(sweep, 3, 7, format)),
                                                      write("c", table_of(sweep, 7, 10, format)),
                                                      write("a", table_of(sweep, 0, 3, format))};
    const MergedTable merged = merge_tables(parts, format);
    EXPECT_EQ(merged.text, whole);
    // Parts without identity files (an older PerFlow's) merge, with a warning.
    EXPECT_EQ(merged.identity, std::nullopt);
    ASSERT_EQ(merged.warnings.size(), 1u);
    EXPECT_EQ(merged.warnings[0],
              "none of the parts has an identity file (results written before PerFlow wrote "
              "them): their rows are checked, but not that they are the shards of one sweep");
    const std::vector<std::filesystem::path> missing = {parts[1], parts[2]};
    EXPECT_EQ(error_of([&] { merge_tables(missing, format); }),
              "run 3 is in none of the parts (a shard is missing or unfinished)");
    const std::vector<std::filesystem::path> twice = {parts[0], parts[1], parts[2], parts[0]};
    EXPECT_NE(
        error_of([&] { merge_tables(twice, format); }).find(": run 3 is also in another part"),
        std::string::npos);
  }
}

// Shard `index` of `count` as `sweep` writes it into `name`: its rows and identity file.
std::filesystem::path write_shard(const std::filesystem::path& dir, const std::string& name,
                                  const Sweep& sweep, std::uint64_t index, std::uint64_t count,
                                  TableFormat format) {
  const RunRange range = shard_runs(sweep.run_count(), index, count);
  const std::filesystem::path path = dir / name;
  std::ofstream(path, std::ios::binary) << table_of(sweep, range.first, range.last, format);
  std::ofstream(identity_path(path), std::ios::binary)
      << identity_text(identity_of(sweep, index, count, format));
  return path;
}

TEST(SweepIdentity, DigestIsSha256OfTheSweepAsRead) {
  // FIPS 180-4 examples (NIST's SHA-256 example values).
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  const Sweep sweep = sweep_of(R"({"/pipeline/microbatches": [4, 8]})", {"/pipeline/microbatches"});
  EXPECT_EQ(sweep.digest, "sha256:" + sha256_hex(nlohmann::json::parse(R"({"axes":
    [{"pointers": ["/pipeline/microbatches"], "values": [[4], [8]]}],
    "base": {"pipeline": {"schedule": "1f1b", "stages": 4, "microbatches": 8},
             "costs": {"forward": 10, "backward": 20, "weight": 15}}})")
                                                     .dump()));
  // The same sweep written otherwise is the same sweep; another value is another.
  EXPECT_EQ(parse_sweep(nlohmann::json::parse(R"({"axes": {"/pipeline/microbatches": [4, 8]},
    "base": {"costs": {"weight": 15, "backward": 20, "forward": 10},
             "pipeline": {"microbatches": 8, "stages": 4, "schedule": "1f1b"}}})"),
                        {"/pipeline/microbatches"}, "other.json", ".")
                .digest,
            sweep.digest);
  EXPECT_NE(sweep_of(R"({"/pipeline/microbatches": [4, 9]})", {"/pipeline/microbatches"}).digest,
            sweep.digest);
  EXPECT_EQ(identity_text(identity_of(sweep, 1, 2, TableFormat::Jsonl)),
            "{\n  \"perflow\": \"sweep results\",\n  \"sweep\": \"" + sweep.digest +
                "\",\n  \"runs\": 2,\n  \"shard\": \"1/2\",\n  \"format\": \"jsonl\"\n}\n");
}

TEST_F(SweepFiles, MergeRefusesPartsOfAnotherSweepOrAMissingOrRepeatedShard) {
  const Sweep sweep = sweep_of(R"({"/pipeline/microbatches": {"from": 1, "to": 10, "step": 1}})",
                               {"/pipeline/microbatches"});
  // The same axis, other values: the rows look alike.
  const Sweep other = sweep_of(R"({"/pipeline/microbatches": {"from": 2, "to": 11, "step": 1}})",
                               {"/pipeline/microbatches"});
  for (const TableFormat format : {TableFormat::Csv, TableFormat::Jsonl}) {
    const std::string ext = format == TableFormat::Csv ? ".csv" : ".jsonl";
    const auto a0 = write_shard(dir_, "a0" + ext, sweep, 0, 2, format);
    const auto a1 = write_shard(dir_, "a1" + ext, sweep, 1, 2, format);
    const auto b1 = write_shard(dir_, "b1" + ext, other, 1, 2, format);
    const std::vector<std::filesystem::path> good = {a1, a0};
    const MergedTable merged = merge_tables(good, format);
    EXPECT_EQ(merged.text, table_of(sweep, 0, 10, format));
    EXPECT_EQ(merged.identity, identity_of(sweep, 0, 1, format));
    EXPECT_TRUE(merged.warnings.empty());

    const std::vector<std::filesystem::path> mixed = {a0, b1};
    EXPECT_EQ(error_of([&] { merge_tables(mixed, format); }),
              fmt::format("{} and {} hold results of different sweeps ({} and {}); merge the "
                          "shards of one sweep",
                          a0.string(), b1.string(), sweep.digest.substr(0, 19),
                          other.digest.substr(0, 19)));
    const std::vector<std::filesystem::path> one = {a0};
    EXPECT_EQ(error_of([&] { merge_tables(one, format); }),
              "shard 1/2 (runs 5 to 9) is in none of the parts: merge all 2 shards");
    const std::vector<std::filesystem::path> twice = {a0, a1, a0};
    EXPECT_EQ(error_of([&] { merge_tables(twice, format); }),
              fmt::format("{} and {} are both shard 0/2: give each shard once", a0.string(),
                          a0.string()));
    // A part of another split of the same sweep.
    const auto c0 = write_shard(dir_, "c0" + ext, sweep, 0, 3, format);
    const std::vector<std::filesystem::path> split = {a0, c0};
    EXPECT_EQ(error_of([&] { merge_tables(split, format); }),
              fmt::format("{} is shard 0/2 and {} is shard 0/3: the parts are not shards of one "
                          "split of the sweep",
                          a0.string(), c0.string()));
    // A part without its identity file among parts with one.
    const auto bare = write("bare" + ext, table_of(sweep, 5, 10, format));
    const std::vector<std::filesystem::path> unknown = {a0, bare};
    EXPECT_NE(error_of([&] { merge_tables(unknown, format); })
                  .find(bare.string() + ": has no identity file (" + bare.string() +
                        ".identity.json), while " + a0.string() + " has one"),
              std::string::npos);
    // An unfinished shard: its rows stop early.
    const auto cut = write_shard(dir_, "cut" + ext, sweep, 1, 2, format);
    std::ofstream(cut, std::ios::binary) << table_of(sweep, 5, 8, format);
    const std::vector<std::filesystem::path> unfinished = {a0, cut};
    EXPECT_EQ(error_of([&] { merge_tables(unfinished, format); }),
              cut.string() +
                  ": holds 3 of the 5 runs of shard 1/2 (5 to 9): the shard is unfinished "
                  "(rerun it to finish it)");
  }
}

// The full results of a 4-run sweep with `edit` applied to its third line.
struct RowEdit {
  std::string from;
  std::string to;
  std::string error;  // what merge says, after "FILE:line 3: "
};

TEST_F(SweepFiles, AMalformedRowIsAnErrorForMergeAndRunAgainOnResume) {
  using namespace std::string_literals;
  const Sweep sweep =
      sweep_of(R"({"/pipeline/microbatches": [4, 8, 12, 16]})", {"/pipeline/microbatches"});
  const std::string csv = table_of(sweep, 0, 4, TableFormat::Csv);
  const std::string jsonl = table_of(sweep, 0, 4, TableFormat::Jsonl);
  // Line 3 is run 1.
  ASSERT_NE(csv.find("\n1,8,495000,495000,0.2727272727272727,,,0.0,0.0,false,\n"),
            std::string::npos);
  const std::vector<RowEdit> csv_edits = {
      {"1,8,495000,495000,0.27", "1,8,495000,0.27",
       "the row of run 1: expected 11 fields as in the header, found 10"},
      {"0.0,false,\n2", "0.0,fal2e,\n2",
       "field 'out_of_memory' of run 1: expected true or false, found 'fal2e'"},
      {"1,8,495000,495000",
       "1,8,495\x00"
       "000,495000"s,
       "field 'makespan_ns' of run 1: a NUL byte at byte 4"},
      {"1,8,495000,495000",
       "1,8,495000,49\xff"
       "5000",
       "field 'iteration_time_ns' of run 1: byte 3 (0xff) is not UTF-8"},
      {"1,8,495000,495000", "1,8,495000,495\"000",
       "field 'iteration_time_ns' of run 1: a quote inside an unquoted field"},
      {"0.2727272727272727,,,0.0", "0.2727272727272727,,,0.00",
       "field 'peak_memory' of run 1: expected the number as PerFlow writes it ('0.0'), found "
       "'0.00'"},
      {"false,\n2", "false,oops\n2",
       "field 'makespan_ns' of run 1: expected nothing (the run has an error), found '495000'"},
  };
  const std::vector<RowEdit> jsonl_edits = {
      {"\"peak_memory\":0.0,\"peak_total_memory\":0.0,\"out_of_memory\":false,\"error\":null}\n"
       "{\"run\":2",
       "\"peax_memory\":0.0,\"peak_total_memory\":0.0,\"out_of_memory\":false,\"error\":null}\n"
       "{\"run\":2",
       "the row of run 1: expected key 'peak_memory', found 'peax_memory'"},
      {"\"out_of_memory\":false,\"error\":null}\n{\"run\":2",
       "\"out_of_memory\":fal2e,\"error\":null}\n{\"run\":2",
       "the row: invalid JSON at column 211: syntax error while parsing value - invalid "
       "literal; last read: '\"out_of_memory\":fal2'"},
      {"\"out_of_memory\":false,\"error\":null}\n{\"run\":2",
       "\"out_of_memory\":\"false\",\"error\":null}\n{\"run\":2",
       "field 'out_of_memory' of run 1: expected true or false, found '\"false\"'"},
      {"{\"run\":1,\"/pipeline/microbatches\":8,\"makespan_ns\":495000",
       "{\"run\":1,\"/pipeline/microbatches\":8,\"makespan_ns\":495000.0",
       "field 'makespan_ns' of run 1: expected a whole number of nanoseconds, found '495000.0'"},
  };
  for (const TableFormat format : {TableFormat::Csv, TableFormat::Jsonl}) {
    const std::string& whole = format == TableFormat::Csv ? csv : jsonl;
    const std::size_t line = format == TableFormat::Csv ? 3 : 2;
    for (const RowEdit& edit : format == TableFormat::Csv ? csv_edits : jsonl_edits) {
      SCOPED_TRACE(edit.to);
      std::string text = whole;
      const std::size_t at = text.find(edit.from);
      ASSERT_NE(at, std::string::npos);
      text.replace(at, edit.from.size(), edit.to);
      const auto path = write(format == TableFormat::Csv ? "e.csv" : "e.jsonl", text);
      const std::vector<std::filesystem::path> parts = {path};
      EXPECT_EQ(error_of([&] { merge_tables(parts, format); }),
                fmt::format("{}:line {}: {}", path.string(), line, edit.error));
      // Resume keeps the rows before it and runs it and the rest again.
      const ResumePoint point = find_resume_point(path, sweep, id(sweep, 0, 1, format));
      EXPECT_EQ(point.rows, 1u);
      // Through the first row (CSV: and the header).
      const std::size_t first_row_end = whole.find('\n') + 1;
      EXPECT_EQ(point.bytes,
                format == TableFormat::Csv ? whole.find('\n', first_row_end) + 1 : first_row_end);
      EXPECT_EQ(point.rerun_reason, fmt::format("{}:line {}: {}", path.string(), line, edit.error));
    }
  }
  // A malformed first row of a JSON Lines file without identity: nothing says the file is
  // this sweep's, so it is not written over.
  const auto notes = write("notes.jsonl", "{\"note\": \"mine\"}\n");
  EXPECT_NE(error_of([&] { find_resume_point(notes, sweep, id(sweep, 0, 1, TableFormat::Jsonl)); })
                .find("notes.jsonl:line 1: the row: expected key 'run', found 'note'; it holds "
                      "another sweep's results or was edited"),
            std::string::npos);
}

TEST_F(SweepFiles, ResumeRefusesAnotherSweepsOrShardsIdentity) {
  const Sweep sweep =
      sweep_of(R"({"/pipeline/microbatches": [4, 8, 12, 16]})", {"/pipeline/microbatches"});
  const Sweep other_base =
      parse_sweep(nlohmann::json::parse(R"({"base": {"pipeline": {"schedule": "1f1b", "stages": 4},
        "costs": {"forward": 11, "backward": 20, "weight": 15}},
        "axes": {"/pipeline/microbatches": [4, 8, 12, 16]}})"),
                  {"/pipeline/microbatches"}, "s.json", ".");
  const auto path = write_shard(dir_, "r.csv", sweep, 0, 2, TableFormat::Csv);
  EXPECT_EQ(find_resume_point(path, sweep, id(sweep, 0, 2)).rows, 2u);
  EXPECT_FALSE(find_resume_point(path, sweep, id(sweep, 0, 2)).without_identity);
  // Same axes and values, another base: the rows alone cannot tell.
  EXPECT_EQ(error_of([&] { find_resume_point(path, other_base, id(other_base, 0, 2)); }),
            fmt::format("{}: holds the results of another sweep ({} names {}, this sweep is {}); "
                        "remove it or write to another file",
                        path.string(), identity_path(path).string(), sweep.digest.substr(0, 19),
                        other_base.digest.substr(0, 19)));
  EXPECT_EQ(error_of([&] { find_resume_point(path, sweep, id(sweep, 1, 2)); }),
            path.string() +
                ": holds shard 0/2 of this sweep, not shard 1/2; remove it or write to another "
                "file");
}

TEST_F(SweepFiles, ReadersRefuseWhatIsNotARegularFile) {
  const Sweep sweep = sweep_of(R"({"/pipeline/microbatches": [4, 8]})", {"/pipeline/microbatches"});
  const auto good = write("good.csv", table_of(sweep, 0, 2, TableFormat::Csv));
  const std::filesystem::path fifo = dir_ / "fifo.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::filesystem::path link = dir_ / "zero.csv";
  std::filesystem::create_symlink("/dev/zero", link);
  const std::vector<std::pair<std::filesystem::path, std::string>> cases = {
      {"/dev/zero", "/dev/zero: is a character device, not a sweep results file"},
      {fifo, fifo.string() + ": is a FIFO, not a sweep results file"},
      {link, link.string() + ": is a character device, not a sweep results file"},
      {dir_, dir_.string() + ": is a directory, not a sweep results file"}};
  for (const auto& [path, message] : cases) {
    const std::vector<std::filesystem::path> parts = {good, path};
    EXPECT_EQ(error_of([&] { merge_tables(parts, TableFormat::Csv); }), message);
    EXPECT_EQ(error_of([&] { find_resume_point(path, sweep, id(sweep)); }), message);
  }
  // A line without end: bounded (16 MiB), named by its file and line.
  std::string huge = table_header(sweep, TableFormat::Csv) + std::string(kMaxLineBytes + 1, '7');
  const auto endless = write("endless.csv", huge);
  const std::vector<std::filesystem::path> parts = {endless};
  EXPECT_EQ(
      error_of([&] { merge_tables(parts, TableFormat::Csv); }),
      endless.string() +
          ":line 2: a line longer than 16777216 bytes; a sweep results file has no such lines");
  EXPECT_EQ(
      error_of([&] { find_resume_point(endless, sweep, id(sweep)); }),
      endless.string() +
          ":line 2: a line longer than 16777216 bytes; a sweep results file has no such lines");
}

TEST(SweepRunner, ARunRefusedForMemoryBesideOthersIsRunAgainAlone) {
  // Each evaluation is refused for memory when another one runs at the same time, as runs
  // refused by a limit the others' memory counts against.
  std::atomic<int> running{0};
  std::atomic<int> alone{0};
  const auto evaluate = [&](std::uint64_t run) {
    const int now = ++running;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    RunOutcome outcome;
    if (now > 1 || running.load() > 1) {
      outcome.error = "refused for memory";
      outcome.refused_for_memory = true;
    } else {
      ++alone;
      outcome.makespan = static_cast<TimeNs>(run);
    }
    --running;
    return outcome;
  };
  for (const unsigned jobs : {1u, 2u, 4u}) {
    alone = 0;
    std::vector<std::uint64_t> makespans;
    run_in_order(0, 40, jobs, evaluate, [&](const RunOutcome& outcome) {
      EXPECT_EQ(outcome.error, "") << "run " << outcome.run << " with --jobs " << jobs;
      makespans.push_back(static_cast<std::uint64_t>(outcome.makespan));
    });
    ASSERT_EQ(makespans.size(), 40u);
    for (std::uint64_t r = 0; r < 40; ++r) EXPECT_EQ(makespans[r], r);
    EXPECT_EQ(alone.load(), 40);
  }
}

TEST(SweepRunner, ConcurrentRunsShareOneMemoryBudget) {
  ::setenv("PERFLOW_MEMORY_LIMIT", "1000MB", 1);
  {
    const SharedMemoryScope mine;
    check_memory(600e6, "a run");
    EXPECT_EQ(shared_memory_held(), 600e6);
    std::string beside;
    std::thread([&] {
      const SharedMemoryScope other;
      beside = error_of([] { check_memory(600e6, "another run"); });
      check_memory(300e6, "a small run");  // fits beside it
      EXPECT_EQ(shared_memory_held(), 900e6);
    }).join();
    EXPECT_EQ(beside,
              "this run would need about 600.0MB of memory (another run), more than the 400.0MB "
              "this process may take (PERFLOW_MEMORY_LIMIT, less what other runs hold); make the "
              "pipeline smaller or raise the limit");
    EXPECT_EQ(shared_memory_held(), 600e6);
  }
  EXPECT_EQ(shared_memory_held(), 0.0);
  std::thread([] {
    const SharedMemoryScope other;
    check_memory(600e6, "another run");  // alone now
  }).join();
  // Without a scope a check counts nothing held.
  check_memory(900e6, "a run");
  EXPECT_EQ(shared_memory_held(), 0.0);
  ::unsetenv("PERFLOW_MEMORY_LIMIT");
}

}  // namespace
}  // namespace perflow::explore
