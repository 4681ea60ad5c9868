// ROCm readers: rocprofv3 CSV and JSON, rocprof v1 results.csv / results.db, rocprofv2 text.
// Expected values were computed independently with python3's csv, gzip+json and sqlite3 modules on
// the fixture files.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "perflow/reader/profile_reader.hpp"
#include "profile_test_support.hpp"

namespace perflow::reader {
namespace {

using test::count_kind;
using test::count_named;
using test::error_of;
using test::expect_range;
using test::fixture;
using test::op_at;
using test::write_temp;

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// --- rocprofv3 CSV ------------------------------------------------------------------------

TEST(RocprofCsv, KernelTrace) {
  const KernelTrace trace = read_profile(fixture("rocm/rocprofv3_docs_kernel_trace.csv"));
  EXPECT_EQ(trace.format, "rocprofv3-csv");
  ASSERT_EQ(trace.ops.size(), 7u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Kernel), 7u);
  EXPECT_TRUE(trace.ranges.empty());
  EXPECT_TRUE(trace.launches.empty());
  EXPECT_EQ(test::devices(trace), (std::set<std::uint32_t>{1}));
  EXPECT_EQ(test::streams(trace), (std::set<std::uint64_t>{1, 2, 3, 4}));  // queues
  EXPECT_TRUE(test::is_ordered(trace));
  const GpuOp& first = trace.ops.front();
  EXPECT_EQ(trace.names[first.name],
            "void addition_kernel<float>(float*, float const*, float const*, int, int)");
  EXPECT_EQ(first.start, 8819330200067564);
  EXPECT_EQ(first.end, 8819330200116308);
  EXPECT_EQ(first.stream, 1u);
  EXPECT_EQ(first.correlation, 1451u);
  EXPECT_EQ(first.bytes, -1);
  const GpuOp& last = trace.ops.back();
  EXPECT_EQ(trace.names[last.name],
            "multiply_kernel(float*, float const*, float const*, int, int)");
  EXPECT_EQ(last.start, 8819330200229796);
  EXPECT_EQ(last.end, 8819330200369359);
  EXPECT_EQ(last.correlation, 1467u);
  EXPECT_EQ(op_at(trace, 8819330200118678).stream, 2u);
}

TEST(RocprofCsv, MemoryCopyTrace) {
  const KernelTrace trace = read_profile(fixture("rocm/rocprofv3_docs_memory_copy_trace.csv"));
  EXPECT_EQ(trace.format, "rocprofv3-csv");
  ASSERT_EQ(trace.ops.size(), 2u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Memcpy), 2u);
  const GpuOp& to_device = trace.ops[0];
  EXPECT_EQ(trace.names[to_device.name], "MEMORY_COPY_HOST_TO_DEVICE");
  EXPECT_EQ(to_device.start, 14955949675563);
  EXPECT_EQ(to_device.end, 14955950239443);
  EXPECT_EQ(to_device.device, 1u);                   // the destination agent
  EXPECT_EQ(to_device.correlation, kNoCorrelation);  // 0 in the file
  EXPECT_EQ(to_device.bytes, -1);                    // the CSV has no byte count
  const GpuOp& to_host = trace.ops[1];
  EXPECT_EQ(trace.names[to_host.name], "MEMORY_COPY_DEVICE_TO_HOST");
  EXPECT_EQ(to_host.start, 14955952733485);
  EXPECT_EQ(to_host.end, 14955953315285);
  EXPECT_EQ(to_host.device, 1u);  // the source agent
}

TEST(RocprofCsv, MarkerTraceNestsByThread) {
  const KernelTrace trace = read_profile(fixture("rocm/rocprofv3_docs_marker_api_trace.csv"));
  EXPECT_TRUE(trace.ops.empty());
  ASSERT_EQ(trace.ranges.size(), 5u);
  // Rows are in end order in the file; the trace is in start order with rebuilt nesting.
  for (const Range& range : trace.ranges) EXPECT_EQ(range.source, RangeSource::Roctx);
  expect_range(trace, 0, "before hipLaunchKernel", 1520113899312225, 1520113899312225, 0, 717);
  expect_range(trace, 1, "hipLaunchKernel range", 1520113899682208, 1520113901495882, 0, 0);
  expect_range(trace, 2, "hipLaunchKernel", 1520113899684965, 1520113901491622, 0, 717);
  expect_range(trace, 3, "after hipLaunchKernel", 1520113900128482, 1520113900128482, 1, 717);
  expect_range(trace, 4, "hipMemcpy", 1520113900141100, 1520113901483408, 1, 717);
}

// The current layout (ROCm 6.3+): "Agent N" ids, Stream_Id, a leading Guid (rocpd convert),
// other capitalisation; and a HIP API trace whose launches link to kernels by correlation.
TEST(RocprofCsv, NewLayoutAndHipApiTrace) {
  const auto kernels = write_temp(
      "new_kernel_trace.csv",
      "\"Guid\",\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\","
      "\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\","
      "\"Lds_Block_Size\",\"Scratch_Size\",\"Vgpr_Count\"\n"
      "\"g\",\"KERNEL_DISPATCH\",\"Agent 7\",17,26,847809,101,49,\"void addition_kernel<float>"
      "(float*, int)\",101,1551401624448706,1551401624459226,0,0,8\n"
      "\"g\",\"KERNEL_DISPATCH\",\"GPU-7\",18,27,847809,102,50,"
      "\"ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>) [clone .kd]\",102,"
      "1551401624460000,1551401624470000,0,0,8\n");
  const KernelTrace trace = read_profile(kernels);
  ASSERT_EQ(trace.ops.size(), 2u);
  EXPECT_EQ(trace.ops[0].device, 7u);
  EXPECT_EQ(trace.ops[0].stream, 17u);
  EXPECT_EQ(trace.ops[0].correlation, 101u);
  EXPECT_EQ(trace.names[trace.ops[0].name], "void addition_kernel<float>(float*, int)");
  EXPECT_EQ(trace.ops[1].kind, GpuOpKind::Collective);
  EXPECT_EQ(trace.ops[1].device, 7u);

  const auto copies = write_temp(
      "new_memory_copy_trace.csv",
      "\"Kind\",\"Direction\",\"Stream_Id\",\"Source_Agent_Id\",\"Destination_Agent_Id\","
      "\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n"
      "\"MEMORY_COPY\",\"MEMORY_COPY_DEVICE_TO_HOST\",3,\"GPU-1\",\"CPU-0\",12,100,200\n");
  const KernelTrace copy_trace = read_profile(copies);
  ASSERT_EQ(copy_trace.ops.size(), 1u);
  EXPECT_EQ(copy_trace.ops[0].device, 1u);  // the source: a device-to-host copy
  EXPECT_EQ(copy_trace.ops[0].stream, 3u);
  EXPECT_EQ(copy_trace.ops[0].correlation, 12u);

  const auto api =
      write_temp("hip_api_trace.csv",
                 "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\","
                 "\"Start_Timestamp\",\"End_Timestamp\"\n"
                 "\"HIP_RUNTIME_API\",\"hipMalloc\",717,718,100,10,20\n"
                 "\"HIP_RUNTIME_API\",\"hipLaunchKernel\",717,718,101,30,40\n"
                 "\"HIP_RUNTIME_API\",\"hipMemcpyAsync\",717,719,102,35,45\n"
                 "\"HSA_CORE_API\",\"hsa_signal_store_screlease\",717,718,103,31,32\n");
  const KernelTrace calls = read_profile(api);
  EXPECT_TRUE(calls.ops.empty());
  EXPECT_TRUE(calls.ranges.empty());
  ASSERT_EQ(calls.launches.size(), 2u);
  EXPECT_EQ(calls.launches[0].correlation, 101u);
  EXPECT_EQ(calls.launches[0].thread, 718u);
  EXPECT_EQ(calls.launches[0].start, 30);
  EXPECT_EQ(calls.launches[0].end, 40);
  EXPECT_EQ(calls.launches[1].correlation, 102u);
  EXPECT_EQ(calls.launches[1].thread, 719u);
}

constexpr std::string_view kKernelHeader =
    "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\","
    "\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n";

TEST(RocprofCsv, TruncatedLineIsReported) {
  const auto path = write_temp("truncated_kernel_trace.csv",
                               std::string(kKernelHeader) + "\"KERNEL_DISPATCH\",1,1,69,1\n");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() +
                ":line 2: expected 10 columns (Kind,Agent_Id,Queue_Id,Thread_Id,Dispatch_Id,"
                "Kernel_Id,Kernel_Name,Correlation_Id,Start_Timestamp,End_Timestamp), found 5");
}

TEST(RocprofCsv, WrongColumnTypesAreReported) {
  const auto bad_time =
      write_temp("bad_time_kernel_trace.csv",
                 std::string(kKernelHeader) + "\"KERNEL_DISPATCH\",1,1,69,1,16,\"k\",1,12.5,13\n");
  EXPECT_EQ(
      error_of([&] { return read_profile(bad_time); }),
      bad_time.string() + ":line 2: column Start_Timestamp: expected an integer, found '12.5'");
  const auto bad_agent = write_temp(
      "bad_agent_kernel_trace.csv",
      std::string(kKernelHeader) + "\"KERNEL_DISPATCH\",\"GPU#\",1,69,1,16,\"k\",1,12,13\n");
  EXPECT_EQ(error_of([&] { return read_profile(bad_agent); }),
            bad_agent.string() +
                ":line 2: column Agent_Id: expected an agent such as 7, 'Agent 7' or 'GPU-7', "
                "found 'GPU#'");
  const auto backwards =
      write_temp("backwards_kernel_trace.csv",
                 std::string(kKernelHeader) + "\"KERNEL_DISPATCH\",1,1,69,1,16,\"k\",1,20,13\n");
  EXPECT_EQ(error_of([&] { return read_profile(backwards); }),
            backwards.string() +
                ":line 2: column End_Timestamp: expected an end >= the start, found '13'");
}

TEST(RocprofCsv, MissingColumnIsReported) {
  // Accepted by its header (a memory copy trace) but without Correlation_Id.
  const auto path = write_temp(
      "no_correlation_copy_trace.csv",
      "\"Kind\",\"Direction\",\"Source_Agent_Id\",\"Destination_Agent_Id\",\"Start_Timestamp\","
      "\"End_Timestamp\"\n\"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",0,1,1,2\n");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() +
                ":line 1: expected column Correlation_Id, found none (columns: Kind,Direction,"
                "Source_Agent_Id,Destination_Agent_Id,Start_Timestamp,End_Timestamp)");
}

TEST(RocprofCsv, EmptyFileIsReportedByTheReader) {
  const auto path = write_temp("empty_kernel_trace.csv", "");
  EXPECT_EQ(error_of([&] { return test::reader_named("rocprofv3-csv").read(path); }),
            path.string() +
                ": expected a header line (rocprofv3 kernel_trace, memory_copy_trace, "
                "marker_api_trace or hip_api_trace columns), found an empty file");
  const auto other = write_temp("other.csv", "a,b\n1,2\n");
  EXPECT_EQ(error_of([&] { return test::reader_named("rocprofv3-csv").read(other); }),
            other.string() +
                ":line 1: expected a header line (rocprofv3 kernel_trace, memory_copy_trace, "
                "marker_api_trace or hip_api_trace columns), found 'a,b'");
}

// --- rocprofv3 JSON -----------------------------------------------------------------------

TEST(RocprofJson, Mi350xKernelDispatches) {
  const KernelTrace trace =
      read_profile(fixture("rocm/tracelens_rocprofv3_mi350x_908_results.json.gz"));
  EXPECT_EQ(trace.format, "rocprofv3-json");
  EXPECT_EQ(trace.device_name, "AMD Instinct MI350X");
  ASSERT_EQ(trace.ops.size(), 43915u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Collective), 1310u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::P2P), 0u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Kernel), 43915u - 1310u);
  EXPECT_TRUE(trace.ranges.empty());
  EXPECT_TRUE(trace.launches.empty());
  EXPECT_EQ(test::devices(trace), (std::set<std::uint32_t>{0}));  // gpu_index, not node_id 2
  EXPECT_EQ(test::streams(trace), (std::set<std::uint64_t>{16, 17, 18, 19, 20}));
  EXPECT_EQ(trace.names.size(), 80u);
  EXPECT_TRUE(test::is_ordered(trace));

  const GpuOp& first = trace.ops.front();
  EXPECT_EQ(trace.names[first.name], "__amd_rocclr_copyBuffer");
  EXPECT_EQ(first.start, 63857982592000);
  EXPECT_EQ(first.end, 63857982594840);
  EXPECT_EQ(first.stream, 16u);
  EXPECT_EQ(first.correlation, 1u);
  const GpuOp& rccl = op_at(trace, 63861843088486);
  EXPECT_EQ(rccl.kind, GpuOpKind::Collective);
  EXPECT_EQ(trace.names[rccl.name], "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(rccl.end, 63861843158766);
  EXPECT_EQ(rccl.stream, 20u);
  EXPECT_EQ(rccl.correlation, 2650u);
  const GpuOp& last = trace.ops.back();
  EXPECT_EQ(last.start, 63872976934414);
  EXPECT_EQ(last.end, 63873104615494);
  EXPECT_EQ(last.correlation, 43915u);

  TimeNs rccl_total = 0;
  for (const GpuOp& op : trace.ops) {
    if (op.kind == GpuOpKind::Collective) rccl_total += op.end - op.start;
  }
  EXPECT_EQ(rccl_total, 4158756678);
}

// Buffer records the fixture leaves empty: memory copies with bytes, ROCTx markers with
// messages in strings.marker_api, and HIP calls that become launches by correlation.
constexpr std::string_view kSmallJson = R"json({"rocprofiler-sdk-tool": [{
  "metadata": {"pid": 5},
  "buffer_records": {
    "kernel_dispatch": [{"kind": 11, "operation": 2, "thread_id": 5,
      "correlation_id": {"internal": 3, "external": 0}, "start_timestamp": 100,
      "end_timestamp": 150, "stream_id": {"handle": 9},
      "dispatch_info": {"agent_id": {"handle": 21}, "queue_id": {"handle": 4}, "kernel_id": 1}}],
    "memory_copy": [{"kind": 10, "operation": 1, "thread_id": 5,
      "correlation_id": {"internal": 4, "external": 0}, "start_timestamp": 200,
      "end_timestamp": 260, "src_agent_id": {"handle": 20}, "dst_agent_id": {"handle": 21},
      "bytes": 4096}],
    "marker_api": [
      {"kind": 7, "operation": 0, "thread_id": 5, "correlation_id": {"internal": 1, "external": 0},
       "start_timestamp": 50, "end_timestamp": 300},
      {"kind": 7, "operation": 0, "thread_id": 5, "correlation_id": {"internal": 2, "external": 0},
       "start_timestamp": 60, "end_timestamp": 120}],
    "hip_api": [
      {"kind": 5, "operation": 0, "thread_id": 5, "correlation_id": {"internal": 3, "external": 0},
       "start_timestamp": 70, "end_timestamp": 80},
      {"kind": 5, "operation": 0, "thread_id": 5, "correlation_id": {"internal": 8, "external": 0},
       "start_timestamp": 85, "end_timestamp": 90}]},
  "agents": [
    {"id": {"handle": 20}, "type": 1, "node_id": 0, "gpu_index": -1, "name": "CPU"},
    {"id": {"handle": 21}, "type": 2, "node_id": 1, "gpu_index": 0, "name": "gfx942",
     "product_name": "AMD Instinct MI300X"}],
  "kernel_symbols": [{"kernel_id": 0, "formatted_kernel_name": "0"},
    {"kernel_id": 1, "kernel_name": "_Z4gemmv.kd", "formatted_kernel_name": "gemm()"}],
  "strings": {
    "buffer_records": [{"kind": "NONE", "operations": []}, {"kind": "A", "operations": []},
      {"kind": "B", "operations": []}, {"kind": "C", "operations": []},
      {"kind": "D", "operations": []}, {"kind": "E", "operations": []},
      {"kind": "F", "operations": []}, {"kind": "MARKER_CORE_API", "operations": ["roctxRangePushA"]},
      {"kind": "G", "operations": []}, {"kind": "H", "operations": []},
      {"kind": "MEMORY_COPY", "operations": ["MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_DEVICE"]}],
    "marker_api": [{"key": 1, "value": "step 0"}, {"key": 2, "value": "forward"}]}
}]})json";

TEST(RocprofJson, CopiesMarkersAndLaunches) {
  const auto path = write_temp("small_results.json", kSmallJson);
  const KernelTrace trace = read_profile(path);
  EXPECT_EQ(trace.format, "rocprofv3-json");
  EXPECT_EQ(trace.device_name, "AMD Instinct MI300X");
  ASSERT_EQ(trace.ops.size(), 2u);
  EXPECT_EQ(trace.names[trace.ops[0].name], "gemm()");
  EXPECT_EQ(trace.ops[0].stream, 4u);
  EXPECT_EQ(trace.ops[0].device, 0u);
  EXPECT_EQ(trace.ops[1].kind, GpuOpKind::Memcpy);
  EXPECT_EQ(trace.names[trace.ops[1].name], "MEMORY_COPY_HOST_TO_DEVICE");
  EXPECT_EQ(trace.ops[1].bytes, 4096);
  EXPECT_EQ(trace.ops[1].device, 0u);  // the GPU end of the copy
  EXPECT_EQ(trace.ops[1].stream, 0u);
  ASSERT_EQ(trace.ranges.size(), 2u);
  EXPECT_EQ(trace.names[trace.ranges[0].name], "step 0");
  EXPECT_EQ(trace.ranges[0].depth, 0u);
  EXPECT_EQ(trace.names[trace.ranges[1].name], "forward");
  EXPECT_EQ(trace.ranges[1].depth, 1u);
  EXPECT_EQ(trace.ranges[1].source, RangeSource::Roctx);
  ASSERT_EQ(trace.launches.size(), 1u);  // correlation 8 launched nothing traced
  EXPECT_EQ(trace.launches[0].correlation, 3u);
  EXPECT_EQ(trace.launches[0].start, 70);
  EXPECT_EQ(trace.launches[0].thread, 5u);
}

TEST(RocprofJson, WrongTypeIsReportedWithItsPath) {
  const auto path = write_temp(
      "string_start.json",
      R"({"rocprofiler-sdk-tool": [{"buffer_records": {"kernel_dispatch": [{"start_timestamp": "1", "end_timestamp": 2}]}}]})");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() +
                ":/rocprofiler-sdk-tool/0/buffer_records/kernel_dispatch/0/start_timestamp: "
                "expected an integer >= 0, found a string");
  const auto negative = write_temp(
      "negative_end.json",
      R"({"rocprofiler-sdk-tool": [{"buffer_records": {"kernel_dispatch": [{"start_timestamp": 1, "end_timestamp": -2}]}}]})");
  EXPECT_EQ(error_of([&] { return read_profile(negative); }),
            negative.string() +
                ":/rocprofiler-sdk-tool/0/buffer_records/kernel_dispatch/0/end_timestamp: "
                "expected an integer >= 0, found -2");
  const auto not_list = write_temp("tool_object.json", R"({"rocprofiler-sdk-tool": {}})");
  EXPECT_EQ(error_of([&] { return read_profile(not_list); }),
            not_list.string() + ":/rocprofiler-sdk-tool: expected an array, found an object");
}

TEST(RocprofJson, DanglingReferencesAreReported) {
  const auto path = write_temp(
      "unknown_kernel.json",
      R"({"rocprofiler-sdk-tool": [{"agents": [{"id": {"handle": 1}, "type": 2, "gpu_index": 0}],
          "buffer_records": {"kernel_dispatch": [{"start_timestamp": 1, "end_timestamp": 2,
          "dispatch_info": {"agent_id": {"handle": 1}, "queue_id": {"handle": 3}, "kernel_id": 7}}]}}]})");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() +
                ":/rocprofiler-sdk-tool/0/buffer_records/kernel_dispatch/0/dispatch_info/"
                "kernel_id: expected a kernel_id listed in kernel_symbols, found 7");
  const auto agent = write_temp(
      "unknown_agent.json",
      R"({"rocprofiler-sdk-tool": [{"buffer_records": {"kernel_dispatch": [{"start_timestamp": 1,
          "end_timestamp": 2, "dispatch_info": {"agent_id": {"handle": 4}, "kernel_id": 7}}]}}]})");
  EXPECT_EQ(error_of([&] { return read_profile(agent); }),
            agent.string() +
                ":/rocprofiler-sdk-tool/0/buffer_records/kernel_dispatch/0/dispatch_info/"
                "agent_id: expected the handle of an agent listed in agents, found 4");
  const auto missing = write_temp(
      "missing_end.json",
      R"({"rocprofiler-sdk-tool": [{"buffer_records": {"memory_copy": [{"start_timestamp": 1}]}}]})");
  EXPECT_EQ(error_of([&] { return read_profile(missing); }),
            missing.string() +
                ":/rocprofiler-sdk-tool/0/buffer_records/memory_copy/0: expected key "
                "end_timestamp, found none");
}

TEST(RocprofJson, TruncatedJsonIsReported) {
  const auto path = write_temp(
      "truncated.json",
      R"({"rocprofiler-sdk-tool": [{"buffer_records": {"kernel_dispatch": [{"start_timestamp": 1, "end_ti)");
  const std::string message = error_of([&] { return read_profile(path); });
  EXPECT_EQ(message.rfind(path.string() + ":", 0), 0u) << message;
  EXPECT_NE(message.find(": expected valid JSON, found "), std::string::npos) << message;
}

TEST(RocprofJson, TruncatedGzipIsReported) {
  // The fixture cut at 200000 of its 1652787 bytes: zlib reports the missing end.
  const std::string bytes =
      read_bytes(fixture("rocm/tracelens_rocprofv3_mi350x_908_results.json.gz")).substr(0, 200000);
  const auto path = write_temp("truncated_results.json.gz", bytes);
  const std::string message = error_of([&] { return read_profile(path); });
  EXPECT_EQ(message.rfind(path.string() + ":byte ", 0), 0u) << message;
  const std::string suffix = ": expected the rest of the gzip stream, found unexpected end of file";
  ASSERT_GE(message.size(), suffix.size());
  EXPECT_EQ(message.substr(message.size() - suffix.size()), suffix) << message;
}

TEST(RocprofJson, MissingToolKeyIsReportedByTheReader) {
  const auto path = write_temp("no_tool.json", R"({"other": 1})");
  EXPECT_EQ(error_of([&] { return test::reader_named("rocprofv3-json").read(path); }),
            path.string() + ": expected key rocprofiler-sdk-tool, found none");
}

TEST(RocprofJson, TextAfterTheDocumentIsReported) {
  const auto path = write_temp("trailing.json", R"({"rocprofiler-sdk-tool": []} {"x": 1})");
  EXPECT_EQ(error_of([&] { return test::reader_named("rocprofv3-json").read(path); }),
            path.string() +
                ": expected the end of the file after the JSON object, found more text at byte 29");
  const auto array = write_temp("array.json", R"([{"rocprofiler-sdk-tool": []}])");
  EXPECT_EQ(error_of([&] { return test::reader_named("rocprofv3-json").read(array); }),
            array.string() +
                ": expected a JSON object with key rocprofiler-sdk-tool, found another value");
}

// --- rocprof v1 ---------------------------------------------------------------------------

void expect_laplacian(const KernelTrace& trace) {
  ASSERT_EQ(trace.ops.size(), 1004u);
  EXPECT_EQ(count_kind(trace, GpuOpKind::Kernel), 1004u);
  EXPECT_EQ(test::devices(trace), (std::set<std::uint32_t>{8}));  // the HSA agent index
  EXPECT_EQ(test::streams(trace), (std::set<std::uint64_t>{0}));
  EXPECT_TRUE(trace.ranges.empty());
  EXPECT_TRUE(trace.launches.empty());
  EXPECT_TRUE(test::is_ordered(trace));
  const GpuOp& first = trace.ops.front();
  EXPECT_EQ(trace.names[first.name], "test_function_kernel");
  EXPECT_EQ(first.start, 2001401019948822);
  EXPECT_EQ(first.end, 2001401021036510);
  EXPECT_EQ(first.correlation, kNoCorrelation);
  EXPECT_EQ(trace.names[trace.ops.back().name], "laplacian_kernel");
  EXPECT_EQ(trace.ops.back().start, 2001403696538074);
  EXPECT_EQ(trace.ops.back().end, 2001403699176813);
  std::size_t laplacian = 0;
  for (const GpuOp& op : trace.ops) laplacian += trace.names[op.name] == "laplacian_kernel";
  EXPECT_EQ(laplacian, 1001u);
  EXPECT_EQ(trace.names[op_at(trace, 2001401023684049).name], "__amd_rocclr_fillBufferAligned.kd");
}

TEST(RocprofV1, ResultsCsv) {
  const KernelTrace trace = read_profile(fixture("rocm/rocprofv1_mi250x_laplacian_results.csv"));
  EXPECT_EQ(trace.format, "rocprof-v1-csv");
  expect_laplacian(trace);
}

TEST(RocprofV1, ResultsDb) {
  const KernelTrace trace = read_profile(fixture("rocm/rocprofv1_mi250x_laplacian_results.db"));
  EXPECT_EQ(trace.format, "rocprof-v1-db");
  expect_laplacian(trace);  // the names lose the quotes the db keeps
}

TEST(RocprofV1, CountersWithoutTimestampsAreReported) {
  const auto path = write_temp("counters_results.csv",
                               "\"Index\",\"KernelName\",\"gpu-id\",\"queue-id\",\"queue-index\","
                               "\"SQ_WAVES\"\n0,\"k\",8,0,0,64\n");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() +
                ":line 1: expected column BeginNs, found none (columns: Index,KernelName,gpu-id,"
                "queue-id,queue-index,SQ_WAVES)");
}

TEST(RocprofV1, WrongColumnTypeIsReported) {
  const auto path = write_temp("bad_gpu_results.csv",
                               "\"Index\",\"KernelName\",\"gpu-id\",\"queue-id\",\"BeginNs\","
                               "\"EndNs\"\n0,\"k\",8,0,1,2\n1,\"k\",eight,0,3,4\n");
  EXPECT_EQ(error_of([&] { return read_profile(path); }),
            path.string() + ":line 3: column gpu-id: expected an integer, found 'eight'");
}

// --- rocprofv2 text ------------------------------------------------------------------------

TEST(RocprofV2, GoldenTraceText) {
  const KernelTrace trace = read_profile(fixture("rocm/rocprofv2_hip_vectoradd_golden_traces.txt"));
  EXPECT_EQ(trace.format, "rocprofv2-text");
  ASSERT_EQ(trace.ops.size(), 1u);
  const GpuOp& op = trace.ops.front();
  EXPECT_EQ(trace.names[op.name], "vectoradd_float");
  EXPECT_EQ(op.kind, GpuOpKind::Kernel);
  EXPECT_EQ(op.device, 4u);
  EXPECT_EQ(op.stream, 1u);
  EXPECT_EQ(op.start, 140169881587808);
  EXPECT_EQ(op.end, 140174279043296);
  EXPECT_EQ(op.correlation, kNoCorrelation);  // Correlation_ID(0)
  EXPECT_TRUE(trace.ranges.empty());
  EXPECT_TRUE(trace.launches.empty());
}

TEST(RocprofV2, QuotedNamesAndErrors) {
  const auto path = write_temp(
      "v2_names.txt",
      "Dispatch_ID(1), GPU_ID(2), Queue_ID(3), Kernel_Name(\"ncclKernel_SendRecv(int, (x))\"), "
      "Begin_Timestamp(10), End_Timestamp(20), Correlation_ID(7)\n"
      "Domain(HIP_API_DOMAIN), Function(hipMemcpy), Start_Timestamp(1), End_Timestamp(2), "
      "Correlation_ID(4)\n");
  const KernelTrace trace = read_profile(path);
  ASSERT_EQ(trace.ops.size(), 1u);
  EXPECT_EQ(trace.names[trace.ops[0].name], "ncclKernel_SendRecv(int, (x))");
  EXPECT_EQ(trace.ops[0].kind, GpuOpKind::P2P);
  EXPECT_EQ(trace.ops[0].correlation, 7u);

  const auto bad = write_temp("v2_bad.txt",
                              "ROCProfilerV2: Collecting the following counters:\n"
                              "Dispatch_ID(1), Kernel_Name(\"k\"), Begin_Timestamp(x1), "
                              "End_Timestamp(2)\n");
  EXPECT_EQ(error_of([&] { return read_profile(bad); }),
            bad.string() + ":line 2: Begin_Timestamp: expected an integer >= 0, found 'x1'");
  const auto missing =
      write_temp("v2_missing.txt", "Dispatch_ID(1), Kernel_Name(\"k\"), Begin_Timestamp(1)\n");
  EXPECT_EQ(error_of([&] { return read_profile(missing); }),
            missing.string() + ":line 1: expected End_Timestamp(...), found none");
  const auto cut = write_temp("v2_cut.txt", "Dispatch_ID(1), Kernel_Name(\"k(\n");
  EXPECT_EQ(error_of([&] { return test::reader_named("rocprofv2-text").read(cut); }),
            cut.string() +
                ":line 1: expected 'Key(value), ...' fields, found 'Dispatch_ID(1), "
                "Kernel_Name(\"k('");
}

// Summaries have no per-dispatch timeline PerFlow can use: no reader claims them.
TEST(RocprofUnsupported, StatsSummaryIsRefused) {
  const auto stats = fixture("rocm/rocprofv1_mi250x_laplacian_results.stats.csv");
  const std::string message = error_of([&] { return read_profile(stats); });
  EXPECT_EQ(
      message.rfind(stats.string() + ": not a profile format PerFlow reads; known formats:", 0), 0u)
      << message;
  for (const ProfileReader& reader : profile_readers()) {
    EXPECT_NE(message.find(reader.name), std::string::npos) << reader.name;
  }
}

}  // namespace
}  // namespace perflow::reader
