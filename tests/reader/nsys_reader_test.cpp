// Nsight Systems readers: the SQLite export (schema 2.9.1 and 3.13.2 fixtures) and the
// `nsys stats` CSV reports. Expected values were computed independently with python3's
// sqlite3 and csv modules on the fixture files.
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "perflow/reader/profile_reader.hpp"
#include "profile_test_support.hpp"

namespace perflow::reader {
namespace {

using test::count_kind;
using test::count_named;
using test::error_of;
using test::expect_range;
using test::fixture;
using test::launch_of;
using test::op_at;
using test::write_temp;

// A SQLite database built from SQL, standing in for an nsys export.
std::filesystem::path make_db(const std::string& name, const std::string& sql) {
  const auto path = write_temp(name, "");
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK)
      << (message != nullptr ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
  return path;
}

std::string nsys_error(const std::filesystem::path& path) {
  return error_of([&] { return test::reader_named("nsys-sqlite").read(path); });
}

// --- SQLite fixtures ---------------------------------------------------------------------

TEST(NsysSqlite, SaxpyOldSchema) {
  const KernelTrace trace =
      read_profile(fixture("nsys/pipit_saxpy-mpi-cuda_nsys_perlmutter0.sqlite"));
  EXPECT_EQ(trace.format, "nsys-sqlite");
  EXPECT_EQ(trace.device_name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(trace.rank, -1);
  ASSERT_EQ(trace.ops.size(), 20u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Kernel), 5u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Memcpy), 15u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Memset), 0u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Collective) + count_kind(trace, GpuOpKind::P2P), 0u);
  EXPECT_EQ(test::devices(trace), (std::set<std::uint32_t>{0}));
  EXPECT_EQ(test::streams(trace), (std::set<std::uint64_t>{7}));
  EXPECT_TRUE(test::is_ordered(trace));

  // The first op is the first HtoD copy; names use demangledName.
  const GpuOp& copy = trace.ops.front();
  EXPECT_EQ(copy.kind, GpuOpKind::Memcpy);
  EXPECT_EQ(trace.names[copy.name], "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(copy.start, 887857742);
  EXPECT_EQ(copy.end, 906688200);
  EXPECT_EQ(copy.correlation, 138u);
  EXPECT_EQ(copy.bytes, 262144000);
  const GpuOp& kernel = op_at(trace, 924922186);
  EXPECT_EQ(kernel.kind, GpuOpKind::Kernel);
  EXPECT_EQ(trace.names[kernel.name], "saxpy(double *, double *, double *, double, int)");
  EXPECT_EQ(kernel.end, 942626994);
  EXPECT_EQ(kernel.stream, 7u);
  EXPECT_EQ(kernel.device, 0u);
  EXPECT_EQ(kernel.correlation, 140u);
  EXPECT_EQ(kernel.bytes, -1);
  const GpuOp& last = trace.ops.back();
  EXPECT_EQ(trace.names[last.name], "[CUDA memcpy Device-to-Host]");
  EXPECT_EQ(last.start, 1965504097);
  EXPECT_EQ(last.end, 1985185585);
  EXPECT_EQ(last.correlation, 205u);

  // Two runtime rows per launch (cudaLaunchKernel, cudaLaunchKernel_v7000): one is kept, the
  // outer one; calls that launched nothing (cudaMalloc, cudaHostRegister) are not launches.
  ASSERT_EQ(trace.launches.size(), 20u);
  const Launch& launch = launch_of(trace, 140);
  EXPECT_EQ(launch.start, 924889832);
  EXPECT_EQ(launch.end, 924923197);
  EXPECT_EQ(launch.thread, 1230493u);  // globalTid 302119224788637 & 0xFFFFFF
  EXPECT_EQ(trace.launches.front().correlation, 138u);
  EXPECT_EQ(trace.launches.front().start, 887755510);
  EXPECT_EQ(trace.launches.back().correlation, 205u);
  EXPECT_EQ(trace.launches.back().end, 1985283597);

  // 22 push/pop ranges; the domain-create and thread-naming rows are skipped. Names come
  // from inline text (saxpy) or from StringIds through textId (MPI_*).
  ASSERT_EQ(trace.ranges.size(), 22u);
  EXPECT_EQ(count_named(trace, "MPI_Send"), 10u);
  EXPECT_EQ(count_named(trace, "MPI_Recv"), 5u);
  EXPECT_EQ(count_named(trace, "saxpy"), 5u);
  const Range& first = trace.ranges.front();
  EXPECT_EQ(trace.names[first.name], "MPI_Init");
  EXPECT_EQ(first.source, RangeSource::Nvtx);
  EXPECT_EQ(first.start, 65117824);
  EXPECT_EQ(first.end, 710796807);
  EXPECT_EQ(first.thread, 1230493u);
  EXPECT_EQ(trace.names[trace.ranges.back().name], "MPI_Finalize");
  EXPECT_EQ(trace.ranges.back().end, 2088944716);
  for (const Range& range : trace.ranges) EXPECT_EQ(range.depth, 0u);  // none nest here
}

TEST(NsysSqlite, CloverleafNewSchema) {
  const KernelTrace trace = read_profile(fixture("nsys/pipit_perlmutter-cloverleaf-cuda.sqlite"));
  EXPECT_EQ(trace.format, "nsys-sqlite");
  // Four GPUs of one model are listed; the ops ran on TARGET_INFO_GPU id 0.
  EXPECT_EQ(trace.device_name, "NVIDIA A100-SXM4-80GB");
  ASSERT_EQ(trace.ops.size(), 1591u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Kernel), 1312u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Memcpy), 279u);
  EXPECT_EQ(test::devices(trace), (std::set<std::uint32_t>{0}));
  EXPECT_EQ(test::streams(trace), (std::set<std::uint64_t>{7}));
  EXPECT_TRUE(trace.ranges.empty());  // no NVTX_EVENTS table: no data, no error
  EXPECT_TRUE(test::is_ordered(trace));

  const GpuOp& first = trace.ops.front();
  EXPECT_EQ(first.kind, GpuOpKind::Kernel);
  EXPECT_EQ(trace.names[first.name],
            "void clover::par_ranged2d_kernel<build_field(global_variables &)::[lambda(int, int) "
            "(instance 1)]>(clover::Range2d, T1)");
  EXPECT_EQ(first.start, 533338240);
  EXPECT_EQ(first.end, 534705884);
  EXPECT_EQ(first.correlation, 452u);
  const GpuOp& copy = op_at(trace, 537713204);
  EXPECT_EQ(trace.names[copy.name], "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(copy.bytes, 16);
  EXPECT_EQ(copy.correlation, 479u);
  const GpuOp& last = trace.ops.back();
  EXPECT_EQ(trace.names[last.name], "[CUDA memcpy Device-to-Host]");
  EXPECT_EQ(last.start, 875744322);
  EXPECT_EQ(last.end, 875746050);
  EXPECT_EQ(last.bytes, 2048);
  EXPECT_EQ(last.correlation, 3427u);

  // One runtime row per call in this schema; 1591 of the 3048 calls launched an op.
  ASSERT_EQ(trace.launches.size(), 1591u);
  EXPECT_EQ(trace.launches.front().correlation, 452u);
  EXPECT_EQ(trace.launches.front().start, 533303007);
  EXPECT_EQ(trace.launches.front().end, 533337262);
  EXPECT_EQ(trace.launches.front().thread, 1701896u);
  EXPECT_EQ(trace.launches.back().correlation, 3427u);
  EXPECT_EQ(trace.launches.back().start, 875740094);
}

// --- Synthetic exports: features the fixtures lack ---------------------------------------

constexpr std::int64_t kTid = (std::int64_t{1} << 48) + (std::int64_t{4321} << 24) + 4322;
constexpr std::int64_t kOtherTid = (std::int64_t{1} << 48) + (std::int64_t{4321} << 24) + 4399;

std::string with_tids(std::string sql) {
  for (const auto& [key, value] : {std::pair<std::string, std::int64_t>{"$TID", kTid},
                                   std::pair<std::string, std::int64_t>{"$OTHER", kOtherTid}}) {
    for (std::size_t at = sql.find(key); at != std::string::npos; at = sql.find(key)) {
      sql.replace(at, key.size(), std::to_string(value));
    }
  }
  return sql;
}

TEST(NsysSqlite, NcclNestingMemsetAndDuplicateLaunches) {
  const auto path = make_db("nsys_features.sqlite", with_tids(R"sql(
    CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
    INSERT INTO StringIds VALUES
      (1, 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)'),
      (2, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'),
      (3, 'gemm_short'), (4, 'outer'), (5, 'cudaLaunchKernel'), (6, 'cudaLaunchKernel_v7000');
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,
      contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
      demangledName INTEGER, shortName INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
      (100, 200, 1, 1, 13, 10, 0, 1, 1), (150, 260, 1, 1, 14, 11, 0, 2, 2),
      (300, 400, 0, 1, 7, 12, 0, NULL, 3);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, value INTEGER, bytes INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (50, 60, 0, 7, 13, 0, 4096);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, bytes INTEGER, copyKind INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (70, 90, 0, 7, 14, 1000, 10);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, end INTEGER, eventClass INTEGER,
      globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
      (11, 29, 0, $TID, 10, 6), (10, 30, 67, $TID, 10, 5), (40, 45, 0, $TID, 99, 5),
      (5, 8, 0, $TID, 13, 5);
    CREATE TABLE NVTX_EVENTS(start INTEGER, end INTEGER, eventType INTEGER, text TEXT,
      globalTid INTEGER, textId INTEGER, domainId INTEGER);
    INSERT INTO NVTX_EVENTS VALUES
      (0, NULL, 75, 'NCCL', $TID, NULL, 1), (0, NULL, 39, 'rank 0', $TID, NULL, 0),
      (0, 1000, 59, NULL, $TID, 4, 0), (10, 500, 59, 'F0', $TID, NULL, 0),
      (20, 100, 59, 'attn', $TID, NULL, 0), (30, NULL, 34, 'mark', $TID, NULL, 0),
      (900, NULL, 59, 'open', $TID, NULL, 0), (5, 50, 60, 'io', $OTHER, NULL, 0);
    CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT);
    INSERT INTO TARGET_INFO_GPU VALUES (0, 'GPU A'), (1, 'GPU B'), (2, 'GPU C');
  )sql"));
  const KernelTrace trace = read_profile(path);
  EXPECT_EQ(trace.device_name, "GPU A, GPU B");  // the GPUs the ops ran on
  ASSERT_EQ(trace.ops.size(), 5u);
  EXPECT_EQ(trace.ops[0].kind, GpuOpKind::Memset);
  EXPECT_EQ(trace.names[trace.ops[0].name], "[CUDA memset]");
  EXPECT_EQ(trace.ops[0].bytes, 4096);
  EXPECT_EQ(trace.ops[1].kind, GpuOpKind::Memcpy);
  EXPECT_EQ(trace.names[trace.ops[1].name], "[CUDA memcpy Peer-to-Peer]");
  EXPECT_EQ(trace.ops[2].kind, GpuOpKind::Collective);
  EXPECT_EQ(trace.ops[2].device, 1u);
  EXPECT_EQ(trace.ops[2].stream, 13u);
  EXPECT_EQ(trace.ops[3].kind, GpuOpKind::P2P);
  EXPECT_EQ(trace.ops[4].kind, GpuOpKind::Kernel);
  EXPECT_EQ(trace.names[trace.ops[4].name], "gemm_short");  // no demangledName: shortName

  ASSERT_EQ(trace.launches.size(), 2u);
  EXPECT_EQ(trace.launches[0].correlation, 13u);
  EXPECT_EQ(trace.launches[1].correlation, 10u);
  EXPECT_EQ(trace.launches[1].start, 10);  // the outer of the two rows
  EXPECT_EQ(trace.launches[1].end, 30);
  EXPECT_EQ(trace.launches[1].thread, 4322u);

  // Sorted by (start, depth); depth from push/pop nesting per thread; the mark is a
  // zero-length range; the never-popped range is dropped.
  ASSERT_EQ(trace.ranges.size(), 5u);
  expect_range(trace, 0, "outer", 0, 1000, 0, 4322);
  expect_range(trace, 1, "io", 5, 50, 0, 4399);
  expect_range(trace, 2, "F0", 10, 500, 1, 4322);
  expect_range(trace, 3, "attn", 20, 100, 2, 4322);
  expect_range(trace, 4, "mark", 30, 30, 3, 4322);
}

TEST(NsysSqlite, MissingTablesMeanNoData) {
  const auto path = make_db("nsys_empty.sqlite", R"sql(
    CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
    CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);
    INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.13.2');
  )sql");
  const KernelTrace trace = read_profile(path);
  EXPECT_EQ(trace.format, "nsys-sqlite");
  EXPECT_TRUE(trace.ops.empty());
  EXPECT_TRUE(trace.launches.empty());
  EXPECT_TRUE(trace.ranges.empty());
  EXPECT_EQ(trace.device_name, "");
}

// --- SQLite errors ------------------------------------------------------------------------

TEST(NsysSqlite, MissingColumnIsNamed) {
  const auto path = make_db("nsys_no_start.sqlite", R"sql(
    CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(end INTEGER, deviceId INTEGER, streamId INTEGER,
      correlationId INTEGER, demangledName INTEGER);
  )sql");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() + ":table CUPTI_ACTIVITY_KIND_KERNEL: expected column start, found none");
}

TEST(NsysSqlite, MissingNameColumnsAreNamed) {
  const auto path = make_db("nsys_no_names.sqlite", R"sql(
    CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER);
  )sql");
  EXPECT_EQ(nsys_error(path), path.string() +
                                  ":table CUPTI_ACTIVITY_KIND_KERNEL: expected column "
                                  "demangledName or shortName or mangledName, found none");
}

TEST(NsysSqlite, WrongColumnTypeIsNamed) {
  const auto path = make_db("nsys_text_start.sqlite", R"sql(
    CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, bytes INTEGER, copyKind INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1, 2, 0, 7, 1, 8, 1), ('abc', 5, 0, 7, 2, 8, 1);
  )sql");
  EXPECT_EQ(nsys_error(path), path.string() +
                                  ":table CUPTI_ACTIVITY_KIND_MEMCPY: row 2: column start: "
                                  "expected an integer, found text 'abc'");
}

TEST(NsysSqlite, EndBeforeStartIsReported) {
  const auto path = make_db("nsys_backwards.sqlite", R"sql(
    CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
    CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, bytes INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (10, 5, 0, 7, 1, 8);
  )sql");
  EXPECT_EQ(nsys_error(path), path.string() +
                                  ":table CUPTI_ACTIVITY_KIND_MEMSET: row 1: expected end >= "
                                  "start, found start 10 and end 5");
}

// A profile is opened immutable: reading a WAL-mode database (rocpd writes them) from a
// read-only directory works and leaves no -wal / -shm file beside it.
TEST(NsysSqlite, ReadingLeavesNothingBesideTheFileAndNeedsNoWriteAccess) {
  const auto path = make_db("wal # mode%.sqlite", R"sql(
    PRAGMA journal_mode=WAL;
    CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
    INSERT INTO StringIds VALUES (1, 'gemm');
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, shortName INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 250, 0, 7, 1, 1);
  )sql");
  const auto directory = path.parent_path() / "read_only";
  std::filesystem::create_directories(directory);
  const auto copy = directory / path.filename();
  std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::permissions(
      directory, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  const KernelTrace trace = read_profile(copy);
  std::filesystem::permissions(directory, std::filesystem::perms::owner_all);
  ASSERT_EQ(trace.ops.size(), 1u);
  EXPECT_EQ(trace.ops[0].start, 100);
  EXPECT_EQ(trace.ops[0].end, 250);
  EXPECT_EQ(trace.names[trace.ops[0].name], "gemm");
  std::vector<std::string> beside;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    beside.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(beside, std::vector<std::string>{"wal # mode%.sqlite"});
}

TEST(NsysSqlite, SqliteThatIsNotNsysIsRefused) {
  const auto path = make_db("not_nsys.sqlite", "CREATE TABLE samples(x INTEGER);");
  EXPECT_FALSE(test::reader_named("nsys-sqlite")
                   .accepts(FileSniff{path, std::string_view("SQLite format 3\0", 16), false}));
  EXPECT_NE(error_of([&] {
              return read_profile(path);
            }).find(path.string() + ": not a profile format PerFlow reads; known formats:"),
            std::string::npos);
  EXPECT_EQ(nsys_error(path),
            path.string() +
                ": expected an Nsight Systems export (tables StringIds and CUPTI_ACTIVITY_KIND_*, "
                "NVTX_EVENTS or META_DATA_EXPORT), found an SQLite database without them");
}

TEST(NsysSqlite, DamagedDatabaseIsReported) {
  std::string bytes("SQLite format 3\0", 16);
  bytes += std::string(4080, '\x5a');
  const auto path = write_temp("damaged.sqlite", bytes);
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() +
                ": expected an SQLite database, found a damaged file (file is not a "
                "database)");
}

// --- nsys stats CSV -----------------------------------------------------------------------

TEST(NsysCsv, NbodyPushPopTrace) {
  const KernelTrace trace = read_profile(fixture("nsys/pipit_nbody_nvtxpptrace.csv"));
  EXPECT_EQ(trace.format, "nsys-csv");
  EXPECT_TRUE(trace.ops.empty());
  EXPECT_TRUE(trace.launches.empty());
  ASSERT_EQ(trace.ranges.size(), 131u);
  EXPECT_TRUE(test::is_ordered(trace));
  std::size_t levels[3] = {0, 0, 0};
  for (const Range& range : trace.ranges) {
    ASSERT_LT(range.depth, 3u);
    ++levels[range.depth];
    EXPECT_EQ(range.thread, 3086332u);
    EXPECT_EQ(range.source, RangeSource::Nvtx);
  }
  EXPECT_EQ(levels[0], 1u);
  EXPECT_EQ(levels[1], 30u);
  EXPECT_EQ(levels[2], 100u);
  EXPECT_EQ(count_named(trace, "cudaDeviceSynchronize"), 40u);
  EXPECT_EQ(count_named(trace, "bodyForce"), 20u);
  const Range& main = trace.ranges.front();
  EXPECT_EQ(trace.names[main.name], "main");
  EXPECT_EQ(main.start, 982845927);
  EXPECT_EQ(main.end, 1987944256);
  EXPECT_EQ(trace.names[trace.ranges[1].name], "cudaMallocManaged");
  EXPECT_EQ(trace.ranges[1].start, 1589900254);
  EXPECT_EQ(trace.ranges[1].end, 1794736550);
  EXPECT_EQ(trace.ranges[1].depth, 1u);
  const auto body = std::find_if(trace.ranges.begin(), trace.ranges.end(),
                                 [](const Range& r) { return r.start == 1795116296; });
  ASSERT_NE(body, trace.ranges.end());
  EXPECT_EQ(trace.names[body->name], "bodyForce");
  EXPECT_EQ(body->end, 1795142456);
  EXPECT_EQ(body->depth, 2u);
  EXPECT_EQ(trace.names[trace.ranges.back().name], "write_values_to_file");
  EXPECT_EQ(trace.ranges.back().end, 1987759418);
}

// cuda_gpu_trace written from FORMATS.md's column list, with the preamble nsys prints when
// the CSV goes to stdout, quoted names (commas, doubled quotes) and decimal MB byte counts.
constexpr std::string_view kGpuTrace =
    "Generating SQLite file report.sqlite from report.nsys-rep\n"
    "Processing [report.sqlite] with [/opt/nvidia/nsys/reports/cuda_gpu_trace.py]... \n"
    "\n"
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),"
    "DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
    "1000,500,17,,,,,,,,,,0.262,523.998,Pageable,Device,NVIDIA A100-SXM4-80GB (0),1,,7,"
    "[CUDA memcpy Host-to-Device]\n"
    "2000,1500,18,108,1,1,256,1,1,32,0.000,0.000,,,,,NVIDIA A100-SXM4-80GB (0),1,,7,"
    "\"void gemm<float, 2>(float const*, float*, int)\"\r\n"
    "2500,3000,19,8,1,1,544,1,1,96,0.000,0.087,,,,,NVIDIA A100-SXM4-80GB (1),1,,40,"
    "\"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)\"\n"
    "2600,100,20,,,,,,,,,,1.048576,10485.760,,Device,NVIDIA A100-SXM4-80GB (0),1,,7,"
    "[CUDA memset]\n"
    "2700,400,21,2,1,1,64,1,1,40,0.000,0.000,,,,,NVIDIA A100-SXM4-80GB (1),1,,41,"
    "\"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)\"\n"
    "2800,10,22,1,1,1,1,1,1,8,0.000,0.000,,,,,NVIDIA A100-SXM4-80GB (0),1,,7,"
    "\"say \"\"hi\"\"\"\n";

TEST(NsysCsv, GpuTrace) {
  const auto path = write_temp("cuda_gpu_trace.csv", kGpuTrace);
  const KernelTrace trace = read_profile(path);
  EXPECT_EQ(trace.format, "nsys-csv");
  EXPECT_EQ(trace.device_name, "NVIDIA A100-SXM4-80GB");
  ASSERT_EQ(trace.ops.size(), 6u);
  EXPECT_EQ(trace.ops[0].kind, GpuOpKind::Memcpy);
  EXPECT_EQ(trace.ops[0].start, 1000);
  EXPECT_EQ(trace.ops[0].end, 1500);
  EXPECT_EQ(trace.ops[0].bytes, 262000);
  EXPECT_EQ(trace.ops[0].correlation, 17u);
  EXPECT_EQ(trace.ops[0].stream, 7u);
  EXPECT_EQ(trace.ops[1].kind, GpuOpKind::Kernel);
  EXPECT_EQ(trace.names[trace.ops[1].name], "void gemm<float, 2>(float const*, float*, int)");
  EXPECT_EQ(trace.ops[1].end, 3500);
  EXPECT_EQ(trace.ops[1].bytes, -1);
  EXPECT_EQ(trace.ops[2].kind, GpuOpKind::Collective);
  EXPECT_EQ(trace.ops[2].device, 1u);
  EXPECT_EQ(trace.ops[2].stream, 40u);
  EXPECT_EQ(trace.ops[3].kind, GpuOpKind::Memset);
  EXPECT_EQ(trace.ops[3].bytes, 1048576);
  EXPECT_EQ(trace.ops[4].kind, GpuOpKind::P2P);
  EXPECT_EQ(trace.names[trace.ops[5].name], "say \"hi\"");
}

constexpr std::string_view kPushPopHeader =
    "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,"
    "RangeId,ParentId,RangeStack,NameTree\n";
constexpr std::string_view kPushPopRow =
    "982845927,1987944256,1005098329,397831233,607267096,main,3086332,3086332,0,30,1,,:1,main\n";

TEST(NsysCsv, TruncatedLineIsReported) {
  const auto path =
      write_temp("truncated_pptrace.csv", std::string(kPushPopHeader) + std::string(kPushPopRow) +
                                              "1589900254,1794736550,2048");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() +
                ":line 3: expected 14 columns (Start (ns),End (ns),Duration (ns),DurChild (ns),"
                "DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,"
                "NameTree), found 3");
}

TEST(NsysCsv, WrongColumnTypeIsReported) {
  const auto path = write_temp(
      "text_start_pptrace.csv",
      std::string(kPushPopHeader) + "abc,1987944256,1,1,1,main,3086332,3086332,0,30,1,,:1,main\n");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() + ":line 2: column Start (ns): expected an integer, found 'abc'");
}

TEST(NsysCsv, NegativeLevelIsReported) {
  const auto path =
      write_temp("negative_level_pptrace.csv",
                 std::string(kPushPopHeader) + "1,2,1,0,1,main,3086332,3086332,-1,0,1,,:1,main\n");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() + ":line 2: column Lvl: expected a nesting level >= 0, found '-1'");
}

TEST(NsysCsv, UnterminatedQuoteIsReported) {
  const auto path = write_temp("open_quote_pptrace.csv",
                               std::string(kPushPopHeader) + std::string(kPushPopRow) +
                                   "1,2,1,0,1,\"main,3086332,3086332,0,30,1,,:1,main\n");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() + ":line 3: expected a closing quote, found the end of the file");
}

TEST(NsysCsv, TextAfterClosingQuoteIsReported) {
  const auto path = write_temp(
      "quote_text_pptrace.csv",
      std::string(kPushPopHeader) + "1,2,1,0,1,\"main\"x,3086332,3086332,0,30,1,,:1,main\n");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() + ":line 2: expected ',' or a line end after a closing quote, found 'x'");
}

TEST(NsysCsv, EmptyFileIsReported) {
  const auto path = write_temp("empty_pptrace.csv", "");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() + ": expected a profile, found an empty file");
  EXPECT_EQ(error_of([&] { return test::reader_named("nsys-csv").read(path); }),
            path.string() +
                ": expected a header line (nsys stats CSV: nvtx_pushpop_trace 'Start (ns),End "
                "(ns),...,Name,PID,TID,Lvl' or cuda_gpu_trace 'Start (ns),Duration "
                "(ns),CorrId,...,Strm,Name'), found an empty file");
}

TEST(NsysCsv, OtherCsvIsNotClaimed) {
  // A summary report has no timeline: no reader claims it.
  const auto path = write_temp("cuda_gpu_kern_sum.csv",
                               "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),"
                               "Max (ns),StdDev (ns),Name\n24.4,6699857869,182028,36806.7,"
                               "14335.0,1984,1054500,95039.9,BoxKernel\n");
  EXPECT_NE(error_of([&] {
              return read_profile(path);
            }).find(": not a profile format PerFlow reads; known formats:"),
            std::string::npos);
}

}  // namespace
}  // namespace perflow::reader
