// rocpd reader (rocprofv3's ROCm 7 SQLite output). The databases are built at test time
// from tests/data/rocpd/rank{0,1}_results.sql (the documented schema 3 tables, a 2-stage
// pipeline on a 2-GPU node); every expected value below was worked out by hand from the
// rows of those scripts (T0 = 5000000000000 ns is their time origin).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "perflow/reader/attribution.hpp"
#include "perflow/reader/cost_extraction.hpp"
#include "perflow/reader/markers.hpp"
#include "perflow/reader/profile_reader.hpp"
#include "profile_test_support.hpp"

namespace perflow::reader {
namespace {

using test::count_kind;
using test::error_of;
using test::expect_range;
using test::launch_of;
using test::op_at;
using test::write_temp;

constexpr TimeNs kT0 = 5'000'000'000'000;
constexpr std::uint64_t kComputeQueue0 = 94371840;
constexpr std::uint64_t kCommQueue0 = 94372096;
constexpr std::string_view kSuffix0 = "_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";

std::filesystem::path rocpd_data(std::string_view name) {
  return std::filesystem::path(PERFLOW_PROFILE_FIXTURES).parent_path() / "rocpd" / name;
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A database built from SQL with the sqlite3 C API (in one transaction: fast).
std::filesystem::path make_db(const std::string& name, const std::string& sql) {
  const auto path = write_temp(name, "");
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const std::string script = "BEGIN;\n" + sql + "\nCOMMIT;\n";
  EXPECT_EQ(sqlite3_exec(db, script.c_str(), nullptr, nullptr, &message), SQLITE_OK)
      << (message != nullptr ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
  return path;
}

// Rank r's fixture database, plus `extra` SQL run after the script.
std::filesystem::path rank_db(int rank, const std::string& extra = "",
                              const std::string& name = "") {
  const std::string script = file_text(rocpd_data("rank" + std::to_string(rank) + "_results.sql"));
  return make_db(name.empty() ? "rank" + std::to_string(rank) + "_results.db" : name,
                 script + extra);
}

std::string rocpd_error(const std::filesystem::path& path) {
  return error_of([&] { return test::reader_named("rocpd").read(path); });
}

std::string name_of(const KernelTrace& trace, const GpuOp& op) { return trace.names[op.name]; }

TEST(Rocpd, RankZeroKernelsCopiesAndDevices) {
  const KernelTrace trace = read_profile(rank_db(0));
  EXPECT_EQ(trace.format, "rocpd");
  EXPECT_EQ(trace.device_name, "AMD Instinct MI300X");
  EXPECT_EQ(trace.rank, -1);
  EXPECT_TRUE(test::is_ordered(trace));
  // 12 dispatches (10 compute, 2 RCCL send/recv) and the input copy.
  ASSERT_EQ(trace.ops.size(), 13u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Kernel), 10u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::P2P), 2u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Memcpy), 1u);
  // Agent 1 is the node's first GPU: type_index 0 (absolute index 1, after the CPU).
  EXPECT_EQ(test::devices(trace), (std::set<std::uint32_t>{0}));
  EXPECT_EQ(test::streams(trace), (std::set<std::uint64_t>{0, kComputeQueue0, kCommQueue0}));

  const GpuOp& copy = trace.ops.front();
  EXPECT_EQ(copy.kind, GpuOpKind::Memcpy);
  EXPECT_EQ(name_of(trace, copy), "MEMORY_COPY_HOST_TO_DEVICE");
  EXPECT_EQ(copy.start, kT0 + 2000);
  EXPECT_EQ(copy.end, kT0 + 12000);
  EXPECT_EQ(copy.bytes, 1048576);
  EXPECT_EQ(copy.stream, 0u);
  EXPECT_EQ(copy.correlation, 104u);

  const GpuOp& gemm = trace.ops[1];
  EXPECT_EQ(name_of(trace, gemm),
            "gemm_fwd(_Float16 const*, _Float16 const*, _Float16*, int, int, int)");
  EXPECT_EQ(gemm.kind, GpuOpKind::Kernel);
  EXPECT_EQ(gemm.start, kT0 + 14000);
  EXPECT_EQ(gemm.end, kT0 + 18000);
  EXPECT_EQ(gemm.device, 0u);
  EXPECT_EQ(gemm.stream, kComputeQueue0);
  EXPECT_EQ(gemm.correlation, 106u);
  EXPECT_EQ(gemm.bytes, -1);

  const GpuOp& send = op_at(trace, kT0 + 22500);
  EXPECT_EQ(name_of(trace, send), "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)");
  EXPECT_EQ(send.kind, GpuOpKind::P2P);
  EXPECT_EQ(send.end, kT0 + 23500);
  EXPECT_EQ(send.stream, kCommQueue0);
  EXPECT_EQ(send.correlation, 108u);

  const GpuOp& last = trace.ops.back();
  EXPECT_EQ(name_of(trace, last),
            "gemm_wgrad(_Float16 const*, _Float16 const*, _Float16*, int, int, int)");
  EXPECT_EQ(last.start, kT0 + 75000);
  EXPECT_EQ(last.end, kT0 + 81500);
  EXPECT_EQ(last.correlation, 122u);
}

TEST(Rocpd, RankZeroRangesAndLaunches) {
  const KernelTrace trace = read_profile(rank_db(0));
  // The train_step range, the step_begin mark (a sample) and six PP ranges; the API regions
  // (hipLaunchKernel, hipMemcpyAsync, hipMalloc) are not ranges.
  ASSERT_EQ(trace.ranges.size(), 8u);
  for (const Range& range : trace.ranges) EXPECT_EQ(range.source, RangeSource::Roctx);
  expect_range(trace, 0, "train_step", kT0, kT0 + 100000, 0, 4242);
  expect_range(trace, 1, "step_begin", kT0 + 500, kT0 + 500, 1, 4242);
  expect_range(trace, 2, "PP:0F0", kT0 + 13000, kT0 + 23000, 1, 4242);
  expect_range(trace, 3, "PP:0F1", kT0 + 24000, kT0 + 34000, 1, 4242);
  expect_range(trace, 4, "PP:0I0", kT0 + 40000, kT0 + 52000, 1, 4242);
  expect_range(trace, 5, "PP:0W0", kT0 + 52000, kT0 + 60000, 1, 4242);
  expect_range(trace, 6, "PP:0I1", kT0 + 61000, kT0 + 73000, 1, 4242);
  expect_range(trace, 7, "PP:0W1", kT0 + 74000, kT0 + 82000, 1, 4242);

  // One launch per op (hipMalloc launched nothing); backward ones on the autograd thread.
  ASSERT_EQ(trace.launches.size(), 13u);
  const Launch& memcpy_call = launch_of(trace, 104);
  EXPECT_EQ(memcpy_call.start, kT0 + 1000);
  EXPECT_EQ(memcpy_call.end, kT0 + 1800);
  EXPECT_EQ(memcpy_call.thread, 4242u);
  const Launch& forward = launch_of(trace, 106);
  EXPECT_EQ(forward.start, kT0 + 13100);
  EXPECT_EQ(forward.end, kT0 + 13300);
  EXPECT_EQ(forward.thread, 4242u);
  const Launch& backward = launch_of(trace, 114);
  EXPECT_EQ(backward.start, kT0 + 40100);
  EXPECT_EQ(backward.thread, 4250u);
}

TEST(Rocpd, MarkerAttribution) {
  const KernelTrace trace = read_profile(rank_db(0));
  std::vector<std::uint32_t> selected;
  for (std::uint32_t i = 0; i < trace.ranges.size(); ++i) {
    if (trace.names[trace.ranges[i].name].starts_with("PP:")) selected.push_back(i);
  }
  ASSERT_EQ(selected.size(), 6u);
  const Attribution attribution = attribute_ops(trace, selected);
  EXPECT_EQ(attribution.method, AttributionMethod::Launch);
  EXPECT_EQ(attribution.ops_without_launch, 0u);
  EXPECT_EQ(attribution.ops_outside, 1u);  // the input copy, launched before PP:0F0
  // Per PP range (in range order): the start times of the ops it owns.
  const std::vector<std::vector<TimeNs>> expected = {{14000, 18000, 22500}, {25000, 29000, 33500},
                                                     {41000, 49000},        {53000},
                                                     {62000, 71000},        {75000}};
  for (std::size_t i = 0; i < selected.size(); ++i) {
    SCOPED_TRACE(trace.names[trace.ranges[selected[i]].name]);
    std::vector<TimeNs> starts;
    for (const std::uint32_t op : attribution.ops_of(i))
      starts.push_back(trace.ops[op].start - kT0);
    EXPECT_EQ(starts, expected[i]);
  }
}

TEST(Rocpd, TwoRanksCosts) {
  const std::vector<KernelTrace> traces = {read_profile(rank_db(0)), read_profile(rank_db(1))};
  // Rank 1's process ran on the second GPU (agent 2, type_index 1).
  EXPECT_EQ(test::devices(traces[1]), (std::set<std::uint32_t>{1}));
  EXPECT_EQ(traces[1].ops.size(), 13u);
  const ExtractedCosts costs = extract_costs(traces, MarkerClassifier::preset("torch-pipelining"));
  EXPECT_EQ(costs.stage_count, 2u);
  EXPECT_EQ(costs.microbatches, 2u);
  EXPECT_TRUE(costs.split_backward);
  ASSERT_EQ(costs.stages.size(), 2u);
  const auto cost = [&](std::size_t stage, MarkerKind kind) {
    return costs.stages[stage].cost[static_cast<std::size_t>(kind)].value_or(-1);
  };
  // Union of the compute kernels of each task, lower median over the two microbatches:
  // stage 0: F {6000, 6000}, B {10000, 11000}, W {6000, 6500};
  // stage 1: F {7500, 8000}, B {11500, 10500}, W {5000, 5000}.
  EXPECT_EQ(cost(0, MarkerKind::Forward), 6000);
  EXPECT_EQ(cost(0, MarkerKind::Backward), 10000);
  EXPECT_EQ(cost(0, MarkerKind::Weight), 6000);
  EXPECT_EQ(cost(1, MarkerKind::Forward), 7500);
  EXPECT_EQ(cost(1, MarkerKind::Backward), 10500);
  EXPECT_EQ(cost(1, MarkerKind::Weight), 5000);
  ASSERT_EQ(costs.communication.size(), 1u);
  EXPECT_EQ(costs.communication[0].count, 2u);
  EXPECT_EQ(costs.communication[0].ranks, 2u);
}

// The databases the golden case reads are the scripts' output (built with page_size 512
// and VACUUM to keep them small): reading either gives the same trace.
TEST(Rocpd, CommittedDatabasesMatchTheScripts) {
  for (int rank : {0, 1}) {
    SCOPED_TRACE(rank);
    const KernelTrace built = read_profile(rank_db(rank));
    const KernelTrace committed =
        read_profile(rocpd_data("rank" + std::to_string(rank) + "_results.db"));
    ASSERT_EQ(committed.ops.size(), built.ops.size());
    for (std::size_t i = 0; i < built.ops.size(); ++i) {
      const GpuOp& a = built.ops[i];
      const GpuOp& b = committed.ops[i];
      EXPECT_EQ(std::tie(a.kind, a.device, a.stream, a.start, a.end, a.correlation, a.bytes),
                std::tie(b.kind, b.device, b.stream, b.start, b.end, b.correlation, b.bytes));
      EXPECT_EQ(name_of(built, a), name_of(committed, b));
    }
    ASSERT_EQ(committed.ranges.size(), built.ranges.size());
    for (std::size_t i = 0; i < built.ranges.size(); ++i) {
      const Range& a = built.ranges[i];
      expect_range(committed, i, built.names[a.name], a.start, a.end, a.depth, a.thread);
    }
    EXPECT_EQ(committed.launches.size(), built.launches.size());
    EXPECT_EQ(committed.device_name, built.device_name);
  }
}

// --- Bad input ---------------------------------------------------------------------------

TEST(Rocpd, SqliteWithoutRocpdTables) {
  const auto path = make_db("not_rocpd.db", "CREATE TABLE results (name TEXT, ns INTEGER);");
  EXPECT_EQ(rocpd_error(path),
            path.string() +
                ": expected a rocpd database (rocprofv3 --output-format rocpd: tables "
                "rocpd_kernel_dispatch_<uuid>, rocpd_info_agent_<uuid>, rocpd_region_<uuid>), "
                "found an SQLite database without them");
  // Not claimed by content either: the registry lists the formats it knows.
  const std::string message = error_of([&] { return read_profile(path); });
  EXPECT_NE(message.find(": not a profile format PerFlow reads; known formats:"),
            std::string::npos);
  EXPECT_NE(message.find("rocpd (rocprofv3 rocpd SQLite"), std::string::npos);
}

TEST(Rocpd, OlderRpdDatabaseIsNamed) {
  const auto path = make_db("rpd.db",
                            "CREATE TABLE rocpd_string (id INTEGER PRIMARY KEY, string TEXT);"
                            "CREATE TABLE rocpd_op (id INTEGER PRIMARY KEY);"
                            "CREATE TABLE rocpd_api (id INTEGER PRIMARY KEY);");
  EXPECT_NE(rocpd_error(path).find("found an RPD database of rocmProfileData (tables rocpd_op, "
                                   "rocpd_api), another format"),
            std::string::npos);
}

TEST(Rocpd, MissingTableAndColumn) {
  const std::string table = "rocpd_event" + std::string(kSuffix0);
  const auto no_events =
      rank_db(0, "DROP VIEW rocpd_event; DROP TABLE \"" + table + "\";", "no_events.db");
  EXPECT_EQ(rocpd_error(no_events), no_events.string() + ": expected table " + table +
                                        " (one of the rocpd schema 3 tables of run '" +
                                        std::string(kSuffix0.substr(1)) + "'), found none");
  // Still a rocpd database by content, so read_profile reports the same.
  EXPECT_EQ(error_of([&] { return read_profile(no_events); }), rocpd_error(no_events));

  const std::string dispatches = "rocpd_kernel_dispatch" + std::string(kSuffix0);
  const auto no_queue =
      rank_db(0, "DROP VIEW kernels; ALTER TABLE \"" + dispatches + "\" DROP COLUMN queue_id;",
              "no_queue.db");
  EXPECT_EQ(rocpd_error(no_queue),
            no_queue.string() + ":table " + dispatches + ": expected column queue_id, found none");
}

TEST(Rocpd, BadRows) {
  const std::string dispatches = "rocpd_kernel_dispatch" + std::string(kSuffix0);
  const auto backwards = rank_db(
      0, "UPDATE \"" + dispatches + "\" SET \"end\" = start - 1 WHERE id = 3;", "backwards.db");
  EXPECT_EQ(rocpd_error(backwards),
            backwards.string() + ":table " + dispatches +
                ": row 3: expected end >= start, found start 5000000022500 and end "
                "5000000022499");
  const auto no_agent =
      rank_db(0, "UPDATE \"" + dispatches + "\" SET agent_id = 9 WHERE id = 1;", "no_agent.db");
  EXPECT_EQ(rocpd_error(no_agent), no_agent.string() + ":table " + dispatches +
                                       ": row 1: expected an agent_id listed in rocpd_info_agent" +
                                       std::string(kSuffix0) + ", found 9");
  const auto text_time =
      rank_db(0, "UPDATE \"" + dispatches + "\" SET start = 'soon' WHERE id = 2;", "text.db");
  EXPECT_NE(rocpd_error(text_time).find("row 2: column start: expected an integer, found text "
                                        "'soon'"),
            std::string::npos);
}

}  // namespace
}  // namespace perflow::reader
