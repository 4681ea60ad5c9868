#include "perflow/explore/sweep.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
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
  EXPECT_EQ(error_of([] { sweep_of(R"({"/a": {"from": 1, "to": 4, "step": -1}})", {"/a"}); }),
            "s.json:/axes/~1a/step: expected a step that goes from 1 to 4, got -1");
  EXPECT_EQ(error_of([] { sweep_of(R"({"/a": {"from": 0, "to": 1e9, "step": 1}})", {"/a"}); }),
            "s.json:/axes/~1a: 1000000001 values; an axis may have at most 16777216");
  EXPECT_EQ(error_of([] {
              sweep_of(R"({"/a": {"from": 1, "to": 65536, "step": 1},
                           "/b": {"from": 1, "to": 65536, "step": 1},
                           "/c": {"from": 1, "to": 2, "step": 1}})",
                       {"/a", "/b", "/c"});
            }),
            "s.json:/axes: 8589934592 runs; a sweep may have at most 4294967296");
  EXPECT_EQ(error_of([] { sweep_of(R"({"/a": 3})", {"/a"}); }),
            "s.json:/axes/~1a: expected a list of values or {\"from\": a, \"to\": b, \"step\": s}, "
            "got 3");
  EXPECT_EQ(error_of([] {
              sweep_of(R"({"/a": [1, 2], "/b": [1]})", {"/a", "/b"}, R"([["/a", "/b"]])");
            }),
            "s.json:/zip/0/1: zipped axes must have as many values: '/b' has 1, '/a' has 2");
  EXPECT_EQ(error_of([] { sweep_of(R"({"/a": [1]})", {"/a"}, R"([["/a", "/c"]])"); }),
            "s.json:/zip/0/1: '/c' is not an axis of /axes");
  EXPECT_EQ(error_of([] {
              parse_sweep(nlohmann::json::parse(R"({"base": 3, "axes": {"/a": [1]}})"), {"/a"},
                          "s.json", ".");
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

TEST_F(SweepFiles, ResumeCountsCompleteRowsOfThisSweep) {
  const Sweep sweep =
      sweep_of(R"({"/pipeline/microbatches": [4, 8, 12, 16]})", {"/pipeline/microbatches"});
  const std::string full = table_of(sweep, 0, 4, TableFormat::Csv);
  const std::size_t second_row_end = full.find('\n', full.find('\n', full.find('\n') + 1) + 1) + 1;
  // Two rows and a piece of the third.
  const auto partial = write("p.csv", full.substr(0, second_row_end + 5));
  const ResumePoint point = find_resume_point(partial, sweep, TableFormat::Csv, 0);
  EXPECT_EQ(point.rows, 2u);
  EXPECT_EQ(point.bytes, second_row_end);
  EXPECT_EQ(find_resume_point(partial, sweep, TableFormat::Csv, 0, 1).rows, 1u);
  EXPECT_EQ(find_resume_point(dir_ / "none.csv", sweep, TableFormat::Csv, 0).rows, 0u);
  // A shard's file starts at its first run.
  EXPECT_NE(error_of([&] {
              find_resume_point(partial, sweep, TableFormat::Csv, 2);
            }).find("line 2 is not the result of run 2 of this sweep"),
            std::string::npos);
  // Another sweep's rows (other axis values) are not resumed.
  const Sweep other =
      sweep_of(R"({"/pipeline/microbatches": [4, 6, 12, 16]})", {"/pipeline/microbatches"});
  EXPECT_NE(error_of([&] {
              find_resume_point(partial, other, TableFormat::Csv, 0);
            }).find("line 3 is not the result of run 1 of this sweep"),
            std::string::npos);
  const Sweep columns = sweep_of(R"({"/pipeline/stages": [4]})", {"/pipeline/stages"});
  EXPECT_NE(
      error_of([&] {
        find_resume_point(partial, columns, TableFormat::Csv, 0);
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
    EXPECT_EQ(merge_tables(parts, format), whole);
    const std::vector<std::filesystem::path> missing = {parts[1], parts[2]};
    EXPECT_EQ(error_of([&] { merge_tables(missing, format); }),
              "run 3 is in none of the parts (a shard is missing or unfinished)");
    const std::vector<std::filesystem::path> twice = {parts[0], parts[1], parts[2], parts[0]};
    EXPECT_NE(
        error_of([&] { merge_tables(twice, format); }).find(": run 3 is also in another part"),
        std::string::npos);
  }
}

}  // namespace
}  // namespace perflow::explore
