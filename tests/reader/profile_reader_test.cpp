#include "perflow/reader/profile_reader.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "detail/comm_kernel.hpp"
#include "perflow/reader/profile_error.hpp"

namespace perflow::reader {
namespace {

std::filesystem::path write_temp(const std::string& name, const std::string& content) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string error_of(const std::filesystem::path& path) {
  try {
    (void)read_profile(path);
  } catch (const ProfileError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ReadProfile, MissingFileIsNamed) {
  EXPECT_EQ(error_of("/nonexistent/rank0.json"),
            "/nonexistent/rank0.json: expected a profile file, found no such file");
}

TEST(ReadProfile, EmptyFileIsReported) {
  const auto path = write_temp("perflow_reader_empty.json", "");
  EXPECT_EQ(error_of(path), path.string() + ": expected a profile, found an empty file");
}

TEST(ReadProfile, UnknownContentListsTheKnownFormats) {
  const auto path = write_temp("perflow_reader_unknown.txt", "hello, not a profile\n");
  const std::string message = error_of(path);
  EXPECT_NE(message.find("not a profile format PerFlow reads; known formats:"), std::string::npos)
      << message;
  for (const ProfileReader& reader : profile_readers()) {
    EXPECT_NE(message.find(reader.name), std::string::npos) << reader.name;
  }
}

// Execution traces are graphs of host ops, not GPU profiles: the error says what they are
// and which file to give instead.
TEST(ReadProfile, ExecutionTracesAreNamed) {
  const std::filesystem::path fixtures(PERFLOW_PROFILE_FIXTURES);
  const auto chakra = fixtures / "chakra/chakra_feeder_tests_chakra.0.et.gz";
  EXPECT_EQ(error_of(chakra),
            chakra.string() +
                ": expected a profile, found a Chakra execution trace (protobuf: a dependency "
                "graph with integer-us durations, no devices or streams), not a GPU profile; "
                "give the PyTorch profiler (Kineto) trace it was converted from");
  const auto host_et = fixtures / "kineto/hta_simple_add_pytorch_et.json.gz";
  EXPECT_EQ(error_of(host_et),
            host_et.string() +
                ": expected a profile, found a PyTorch execution trace (ExecutionTraceObserver: "
                "the host op graph, no GPU times), not a GPU profile; give the PyTorch profiler "
                "(Kineto) trace of the same run");
}

TEST(ClassifyKernel, CommunicationLibrariesByFunctionNameInAnyCase) {
  using detail::classify_kernel;
  EXPECT_EQ(classify_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, ncclWork*)"),
            GpuOpKind::Collective);
  EXPECT_EQ(classify_kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"),
            GpuOpKind::P2P);
  EXPECT_EQ(classify_kernel("NCCL_AllGather"), GpuOpKind::Collective);
  EXPECT_EQ(classify_kernel("RcclKernel_Send"), GpuOpKind::P2P);
  EXPECT_EQ(classify_kernel("ncclDevKernel_Generic_1"), GpuOpKind::Collective);
  // Only the function name counts, not the parameter types; "ncl", "nccx" and a byte 0x20
  // below a letter ('.' is 'N' - 0x20) are no match.
  EXPECT_EQ(classify_kernel("gemm_kernel(ncclDevComm*)"), GpuOpKind::Kernel);
  EXPECT_EQ(classify_kernel("ncl_nccx_nCcL"), GpuOpKind::Collective);
  EXPECT_EQ(classify_kernel("ncl_nccx_.CCL"), GpuOpKind::Kernel);
  EXPECT_EQ(classify_kernel("ncc"), GpuOpKind::Kernel);
  EXPECT_EQ(classify_kernel(""), GpuOpKind::Kernel);
}

TEST(NameTable, InternsOnce) {
  NameTable names;
  EXPECT_EQ(names.intern("gemm"), 0u);
  EXPECT_EQ(names.intern("nccl"), 1u);
  EXPECT_EQ(names.intern("gemm"), 0u);
  EXPECT_EQ(names.size(), 2u);
  EXPECT_EQ(names[1], "nccl");
}

}  // namespace
}  // namespace perflow::reader
