// The Kineto reader against every Kineto fixture in tests/data/profiles/kineto. Expected
// values were computed independently with python3 (gzip + json with Decimal for exact ns,
// half-away rounding, + baseTimeNanoseconds), not taken from this reader's output.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "detail/byte_source.hpp"
#include "detail/kineto.hpp"
#include "detail/readers.hpp"
#include "perflow/reader/profile_error.hpp"
#include "perflow/reader/profile_reader.hpp"

namespace perflow::reader {
namespace {

const std::filesystem::path kFixtures = PERFLOW_PROFILE_FIXTURES;

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string gunzip(const std::filesystem::path& path) {
  detail::GzFileSource source(path);
  std::string text;
  std::string chunk(1 << 16, '\0');
  while (const std::size_t n = source.read(chunk)) text.append(chunk, 0, n);
  return text;
}

std::filesystem::path temp_file(const std::string& name, std::string_view content) {
  const auto path = std::filesystem::temp_directory_path() / ("perflow_kineto_" + name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

KernelTrace read_kineto_file(const std::filesystem::path& path) {
  return detail::kineto_reader().read(path);
}

// Reads JSON text given inline, as the file `name`.
KernelTrace read_text(std::string_view text, const std::string& name = "trace.json") {
  detail::MemorySource source(text, name);
  return detail::read_kineto(source);
}

std::string error_of_text(std::string_view text) {
  try {
    (void)read_text(text);
  } catch (const ProfileError& e) {
    return e.what();
  }
  return "no error";
}

std::string error_of_file(const std::filesystem::path& path) {
  try {
    (void)read_kineto_file(path);
  } catch (const ProfileError& e) {
    return e.what();
  }
  return "no error";
}

// ---------------------------------------------------------------------------------------
// Every fixture: counts and a few exact records.

struct Counts {
  std::size_t kernels, collectives, p2p, memcpys, memsets, launches, annotations, python, names,
      ops_with_bytes, outermost_ranges;
  std::uint32_t max_depth;
};

struct Op {
  GpuOpKind kind;
  std::uint32_t device;
  std::uint64_t stream;
  TimeNs start, end;
  std::uint64_t correlation;
  std::int64_t bytes;
  std::string_view name_prefix;  // long C++ kernel names: first 48 characters and the length
  std::size_t name_size;
};

struct LaunchRec {
  std::uint64_t thread;
  TimeNs start, end;
  std::uint64_t correlation;
};

struct RangeRec {
  RangeSource source;
  std::string_view name;
  std::uint64_t thread;
  TimeNs start, end;
  std::uint32_t depth;
};

using StreamList = std::vector<std::pair<std::uint32_t, std::uint64_t>>;  // (device, stream)

struct Fixture {
  const char* file;
  std::int64_t rank, world_size;
  const char* device_name;
  Counts counts;
  std::vector<std::uint32_t> devices;
  StreamList streams;
  Op first_op, last_op;
  std::optional<Op> first_comm, first_memcpy;
  LaunchRec first_launch, last_launch;
  RangeRec first_range, last_range;
};

std::ostream& operator<<(std::ostream& out, const Fixture& fixture) { return out << fixture.file; }

const std::vector<Fixture>& fixtures() {
  static const std::vector<Fixture> kFixtureList = {
      Fixture{
          "kineto/hta_a100_alexnet_benchmark_trace.json.gz",
          0,
          -1,
          "NVIDIA A100-PG509-200",
          Counts{79, 0, 0, 16, 3, 361, 8, 0, 23, 19, 1, 3u},
          {0u},
          {{0u, 7u}, {0u, 20u}},
          Op{GpuOpKind::Memcpy, 0, 7u, 1695835572943613000, 1695835572943625000, 14, 92928,
             "Memcpy HtoD (Pageable -> Device)", 32},
          Op{GpuOpKind::Kernel, 0, 7u, 1695835585863852000, 1695835585863857000, 5889, -1,
             "void epilogue::impl::globalKernel<float, float, ", 174},
          std::nullopt,
          Op{GpuOpKind::Memcpy, 0, 7u, 1695835572943613000, 1695835572943625000, 14, 92928,
             "Memcpy HtoD (Pageable -> Device)", 32},
          LaunchRec{2869224u, 1695835543008415000, 1695835572935792000, 5u},
          LaunchRec{2869224u, 1695835585939612000, 1695835585939626000, 5909u},
          RangeRec{RangeSource::Annotation, "[param|cuda]", 2869224u, 1695835542514261000,
                   1695835585939544000, 0u},
          RangeRec{RangeSource::Annotation, "[param|pytorch.model.alex_net|0|0|0|measure|forward]",
                   2869224u, 1695835585827782000, 1695835585864138000, 3u}},
      Fixture{"kineto/hta_a100_ddp2_nccl_data_rank0.json.gz",
              0,
              2,
              "NVIDIA A100-PG509-200",
              Counts{2679, 21, 0, 960, 114, 8740, 42, 0, 83, 1095, 18,
                     3u},  // NCCL: In msg nelems x dtype
              {0u},
              {{0u, 7u}, {0u, 40u}},
              Op{GpuOpKind::Kernel, 0, 7u, 1716423322422880181, 1716423322422883925, 19812, -1,
                 "void at::native::(anonymous namespace)::CatArray", 429},
              Op{GpuOpKind::Kernel, 0, 7u, 1716423323083276404, 1716423323083431186, 64874, -1,
                 "void at::native::(anonymous namespace)::multi_te", 385},
              // 53120 elements of Float.
              Op{GpuOpKind::Collective, 0, 40u, 1716423322423385774, 1716423322423416749, 19832,
                 212480, "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevC", 79},
              Op{GpuOpKind::Memcpy, 0, 7u, 1716423322441665209, 1716423322441666745, 19902, 256,
                 "Memcpy DtoD (Device -> Device)", 30},
              LaunchRec{2910249u, 1716423322417669918, 1716423322417679309, 19762u},
              LaunchRec{18446744073160099392ULL, 1716423323101159116, 1716423323101161005, 64889u},
              RangeRec{RangeSource::Annotation, "ProfilerStep#4", 2910249u, 1716423322416788066,
                       1716423322639230257, 0u},
              RangeRec{RangeSource::Annotation, "Optimizer.step#SGD.step", 2910249u,
                       1716423323069087306, 1716423323083947925, 2u}},
      Fixture{"kineto/hta_mi250_minitoy_train_ROCm6_2_kineto.json.gz",
              -1,
              -1,
              "AMD Radeon Graphics",
              Counts{14, 0, 0, 2, 0, 21, 3, 0, 16, 0, 2, 1u},
              {2u},
              {{2u, 0u}},
              Op{GpuOpKind::Memcpy, 2, 0u, 1739836029603454206, 1739836029603476647, 117, -1,
                 "Memcpy HtoD (Host -> Device)", 28},
              Op{GpuOpKind::Kernel, 2, 0u, 1739836029612357612, 1739836029612366093, 136, -1,
                 "void at::native::(anonymous namespace)::multi_te", 385},
              std::nullopt,
              Op{GpuOpKind::Memcpy, 2, 0u, 1739836029603454206, 1739836029603476647, 117, -1,
                 "Memcpy HtoD (Host -> Device)", 28},
              LaunchRec{597913u, 1739836029603438301, 1739836029603498505, 117u},
              LaunchRec{597913u, 1739836029612702707, 1739836029612770525, 137u},
              RangeRec{RangeSource::Annotation, "ProfilerStep#1", 597913u, 1739836029603187439,
                       1739836029612475730, 0u},
              RangeRec{RangeSource::Annotation, "ProfilerStep#2", 597913u, 1739836029612512740,
                       1739836029612561813, 0u}},
      Fixture{"kineto/hta_sampled_rank-0.json.gz",
              0,
              128,
              "",
              Counts{1144, 0, 10, 40, 10, 1204, 73, 0, 233, 50, 10, 6u},
              {0u},
              {{0u, 7u}, {0u, 23u}, {0u, 25u}, {0u, 84u}, {0u, 203u}},
              Op{GpuOpKind::Kernel, 0, 23u, 1682725898082228000, 1682725898082238000, 6935929, -1,
                 "void fbgemm_gpu::permute_2D_lengths_kernel<int>(", 87},
              Op{GpuOpKind::Memcpy, 0, 23u, 1682725899305073000, 1682725899305075000, 7195619, 80,
                 "Memcpy DtoH (Device -> Pageable)", 32},
              Op{GpuOpKind::P2P, 0, 84u, 1682725898094377000, 1682725898125046000, 6937369, -1,
                 "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclD", 82},
              Op{GpuOpKind::Memcpy, 0, 23u, 1682725898083829000, 1682725898083831000, 6936473, 1,
                 "Memcpy DtoH (Device -> Pageable)", 32},
              LaunchRec{4037u, 1682725898082212000, 1682725898082230000, 6935929u},
              LaunchRec{4037u, 1682725899304313000, 1682725899305090000, 7195619u},
              RangeRec{RangeSource::Annotation, "ProfilerStep#551", 4037u, 1682725898079292000,
                       1682725898686604000, 0u},
              RangeRec{RangeSource::Annotation, "## all2all_data:recat_values ##", 4037u,
                       1682725899303821000, 1682725899304122000, 4u}},
      Fixture{"kineto/hta_sampled_rank-1.json.gz",
              1,
              128,
              "",
              Counts{1094, 0, 10, 40, 10, 1154, 65, 0, 219, 50, 11, 6u},
              {1u},
              {{1u, 7u}, {1u, 23u}, {1u, 25u}, {1u, 84u}, {1u, 203u}},
              Op{GpuOpKind::Kernel, 1, 23u, 1682725898082381000, 1682725898082391000, 6904339, -1,
                 "void fbgemm_gpu::permute_2D_lengths_kernel<int>(", 87},
              Op{GpuOpKind::Memset, 1, 23u, 1682725899313566000, 1682725899313567000, 7162701, 40,
                 "Memset (Device)", 15},
              Op{GpuOpKind::P2P, 1, 84u, 1682725898129911000, 1682725898187835000, 6907311, -1,
                 "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclD", 82},
              Op{GpuOpKind::Memcpy, 1, 23u, 1682725898085308000, 1682725898085310000, 6905179, 1,
                 "Memcpy DtoH (Device -> Pageable)", 32},
              LaunchRec{4045u, 1682725898082364000, 1682725898082382000, 6904339u},
              LaunchRec{4045u, 1682725899312469000, 1682725899312482000, 7162701u},
              RangeRec{RangeSource::Annotation, "ProfilerStep#551", 4045u, 1682725898079484000,
                       1682725898687388000, 0u},
              RangeRec{RangeSource::Annotation, "## all2all_data:recat_values ##", 4045u,
                       1682725899312024000, 1682725899312338000, 4u}},
      Fixture{"kineto/hta_simple_add_kineto.json.gz",
              0,
              -1,
              "NVIDIA A100-PG509-200",
              Counts{4, 0, 0, 0, 0, 15, 8, 0, 7, 0, 1, 3u},
              {0u},
              {{0u, 7u}},
              Op{GpuOpKind::Kernel, 0, 7u, 1689360808083239000, 1689360808083244000, 22, -1,
                 "void at::native::(anonymous namespace)::distribu", 5123},
              Op{GpuOpKind::Kernel, 0, 7u, 1689360808192155000, 1689360808192158000, 72, -1,
                 "void at::native::vectorized_elementwise_kernel<4", 185},
              std::nullopt,
              std::nullopt,
              LaunchRec{563677u, 1689360788495798000, 1689360808075283000, 6u},
              LaunchRec{563677u, 1689360808307970000, 1689360808307984000, 83u},
              RangeRec{RangeSource::Annotation, "[param|cuda]", 563677u, 1689360788493697000,
                       1689360808307854000, 0u},
              RangeRec{RangeSource::Annotation, "[param|torch.add|0|0|0|measure|forward]", 563677u,
                       1689360808186180000, 1689360808192427000, 3u}},
      Fixture{"kineto/hta_v100_ns_resolution_rank-0.pt.trace.json.gz",
              0,
              1,
              "Tesla V100-SXM2-32GB",
              Counts{4350, 0, 0, 1600, 145, 15329, 70, 0, 92, 1745, 30, 3u},
              {0u},
              {{0u, 7u}},
              Op{GpuOpKind::Kernel, 0, 7u, 1712195495505582988, 1712195495505587916, 135071, -1,
                 "void at::native::(anonymous namespace)::CatArray", 429},
              Op{GpuOpKind::Kernel, 0, 7u, 1712195495985358440, 1712195495985612167, 211541, -1,
                 "void at::native::(anonymous namespace)::multi_te", 385},
              std::nullopt,
              Op{GpuOpKind::Memcpy, 0, 7u, 1712195495506161288, 1712195495506162568, 135139, 256,
                 "Memcpy DtoD (Device -> Device)", 30},
              LaunchRec{1102u, 1712195495505543140, 1712195495505584908, 135071u},
              LaunchRec{18446744073462087680ULL, 1712195495997093250, 1712195495997096942, 211614u},
              RangeRec{RangeSource::Annotation, "ProfilerStep#101", 1102u, 1712195495502094565,
                       1712195495537210434, 0u},
              RangeRec{RangeSource::Annotation, "Optimizer.step#SGD.step", 1102u,
                       1712195495895359503, 1712195495896360190, 2u}},
      Fixture{"kineto/tracelens_mi300x_ddp8_resnet_act_checkpoint_rank0.json.gz",
              0,
              8,
              "AMD Instinct MI300X",
              Counts{2978, 17, 0, 550, 108, 3100, 24, 34405, 527, 378, 514, 35u},
              {2u},
              {{2u, 0u}, {2u, 4u}},
              Op{GpuOpKind::Kernel, 2, 0u, 1770932723222894405, 1770932723222898084, 4066, -1,
                 "void at::native::vectorized_elementwise_kernel<8", 345},
              Op{GpuOpKind::Kernel, 2, 0u, 1770932723309433675, 1770932723309462113, 8277, -1,
                 "void at::native::(anonymous namespace)::multi_te", 401},
              Op{GpuOpKind::Collective, 2, 4u, 1770932723225136592, 1770932723233667381, 4079, -1,
                 "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4", 55},
              Op{GpuOpKind::Memcpy, 2, 0u, 1770932723225132752, 1770932723225136871, 4082, -1,
                 "Memcpy DtoD (Device -> Device)", 30},
              LaunchRec{542u, 1770932723223546042, 1770932723223552661, 5179u},
              LaunchRec{542u, 1770932723271613755, 1770932723309467886, 8278u},
              RangeRec{RangeSource::Python, "train_ddp.py(184): <module>", 542u,
                       1770932723222578748, 1770932723309479541, 0u},
              RangeRec{RangeSource::Python,
                       "<built-in method _disable_profiler of PyCapsule object at 0x7f468be78960>",
                       542u, 1770932723309474167, 1770932723309479541, 9u}},
  };
  return kFixtureList;
}

void expect_op(const KernelTrace& trace, const GpuOp& op, const Op& want) {
  const std::string& name = trace.names[op.name];
  EXPECT_EQ(name.substr(0, want.name_prefix.size()), want.name_prefix);
  EXPECT_EQ(name.size(), want.name_size) << name;
  EXPECT_EQ(op.kind, want.kind) << name;
  EXPECT_EQ(op.device, want.device) << name;
  EXPECT_EQ(op.stream, want.stream) << name;
  EXPECT_EQ(op.start, want.start) << name;
  EXPECT_EQ(op.end, want.end) << name;
  EXPECT_EQ(op.correlation, want.correlation) << name;
  EXPECT_EQ(op.bytes, want.bytes) << name;
}

void expect_launch(const Launch& launch, const LaunchRec& want) {
  EXPECT_EQ(launch.thread, want.thread);
  EXPECT_EQ(launch.start, want.start);
  EXPECT_EQ(launch.end, want.end);
  EXPECT_EQ(launch.correlation, want.correlation);
}

void expect_range(const KernelTrace& trace, const Range& range, const RangeRec& want) {
  EXPECT_EQ(trace.names[range.name], want.name);
  EXPECT_EQ(range.source, want.source);
  EXPECT_EQ(range.thread, want.thread);
  EXPECT_EQ(range.start, want.start);
  EXPECT_EQ(range.end, want.end);
  EXPECT_EQ(range.depth, want.depth);
}

class KinetoFixture : public testing::TestWithParam<Fixture> {};

TEST_P(KinetoFixture, MatchesIndependentlyComputedValues) {
  const Fixture& want = GetParam();
  const KernelTrace trace = read_profile(kFixtures / want.file);
  EXPECT_EQ(trace.format, "kineto");
  EXPECT_EQ(trace.path, (kFixtures / want.file).string());
  EXPECT_EQ(trace.rank, want.rank);
  EXPECT_EQ(trace.world_size, want.world_size);
  EXPECT_EQ(trace.device_name, want.device_name);

  Counts got{};
  std::set<std::uint32_t> devices;
  std::set<std::pair<std::uint32_t, std::uint64_t>> streams;
  const GpuOp* first_comm = nullptr;
  const GpuOp* first_memcpy = nullptr;
  for (const GpuOp& op : trace.ops) {
    devices.insert(op.device);
    streams.emplace(op.device, op.stream);
    if (op.bytes >= 0) ++got.ops_with_bytes;
    switch (op.kind) {
      case GpuOpKind::Kernel:
        ++got.kernels;
        break;
      case GpuOpKind::Collective:
        ++got.collectives;
        break;
      case GpuOpKind::P2P:
        ++got.p2p;
        break;
      case GpuOpKind::Memcpy:
        ++got.memcpys;
        break;
      case GpuOpKind::Memset:
        ++got.memsets;
        break;
    }
    const bool comm = op.kind == GpuOpKind::Collective || op.kind == GpuOpKind::P2P;
    if (comm && first_comm == nullptr) first_comm = &op;
    if (op.kind == GpuOpKind::Memcpy && first_memcpy == nullptr) first_memcpy = &op;
  }
  got.launches = trace.launches.size();
  for (const Range& range : trace.ranges) {
    ++(range.source == RangeSource::Python ? got.python : got.annotations);
    if (range.depth == 0) ++got.outermost_ranges;
    got.max_depth = std::max(got.max_depth, range.depth);
  }
  got.names = trace.names.size();
  EXPECT_EQ(got.kernels, want.counts.kernels);
  EXPECT_EQ(got.collectives, want.counts.collectives);
  EXPECT_EQ(got.p2p, want.counts.p2p);
  EXPECT_EQ(got.memcpys, want.counts.memcpys);
  EXPECT_EQ(got.memsets, want.counts.memsets);
  EXPECT_EQ(got.launches, want.counts.launches);
  EXPECT_EQ(got.annotations, want.counts.annotations);
  EXPECT_EQ(got.python, want.counts.python);
  EXPECT_EQ(got.names, want.counts.names);
  EXPECT_EQ(got.ops_with_bytes, want.counts.ops_with_bytes);
  EXPECT_EQ(got.outermost_ranges, want.counts.outermost_ranges);
  EXPECT_EQ(got.max_depth, want.counts.max_depth);
  EXPECT_EQ(std::vector<std::uint32_t>(devices.begin(), devices.end()), want.devices);
  EXPECT_EQ(StreamList(streams.begin(), streams.end()), want.streams);

  ASSERT_FALSE(trace.ops.empty());
  expect_op(trace, trace.ops.front(), want.first_op);
  expect_op(trace, trace.ops.back(), want.last_op);
  ASSERT_EQ(first_comm != nullptr, want.first_comm.has_value());
  if (first_comm != nullptr) expect_op(trace, *first_comm, *want.first_comm);
  ASSERT_EQ(first_memcpy != nullptr, want.first_memcpy.has_value());
  if (first_memcpy != nullptr) expect_op(trace, *first_memcpy, *want.first_memcpy);
  ASSERT_FALSE(trace.launches.empty());
  expect_launch(trace.launches.front(), want.first_launch);
  expect_launch(trace.launches.back(), want.last_launch);
  ASSERT_FALSE(trace.ranges.empty());
  expect_range(trace, trace.ranges.front(), want.first_range);
  expect_range(trace, trace.ranges.back(), want.last_range);
}

// The documented orders hold on every fixture.
TEST_P(KinetoFixture, VectorsAreSortedAsDocumented) {
  const KernelTrace trace = read_profile(kFixtures / GetParam().file);
  EXPECT_TRUE(
      std::is_sorted(trace.ops.begin(), trace.ops.end(), [](const GpuOp& a, const GpuOp& b) {
        return std::tie(a.start, a.end, a.device, a.stream) <
               std::tie(b.start, b.end, b.device, b.stream);
      }));
  EXPECT_TRUE(std::is_sorted(trace.launches.begin(), trace.launches.end(),
                             [](const Launch& a, const Launch& b) { return a.start < b.start; }));
  EXPECT_TRUE(
      std::is_sorted(trace.ranges.begin(), trace.ranges.end(), [](const Range& a, const Range& b) {
        return std::tie(a.start, a.depth) < std::tie(b.start, b.depth);
      }));
  for (const GpuOp& op : trace.ops) EXPECT_LE(op.start, op.end);
}

INSTANTIATE_TEST_SUITE_P(Kineto, KinetoFixture, testing::ValuesIn(fixtures()),
                         [](const testing::TestParamInfo<Fixture>& param) {
                           std::string name =
                               std::filesystem::path(param.param.file).stem().stem().string();
                           std::replace_if(
                               name.begin(), name.end(),
                               [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                               '_');
                           return name;
                         });

// ---------------------------------------------------------------------------------------
// Fixture-specific facts

// Chunk boundaries anywhere (down to one byte per read) give the same trace as 4 MiB reads.
TEST(KinetoReader, SmallChunksGiveTheSameTrace) {
  for (const char* file : {"kineto/hta_simple_add_kineto.json.gz",
                           "kineto/hta_mi250_minitoy_train_ROCm6_2_kineto.json.gz"}) {
    const std::string text = gunzip(kFixtures / file);
    const KernelTrace whole = read_text(text);
    for (const std::size_t chunk :
         {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{1000}}) {
      detail::MemorySource source(text, "trace.json");
      const KernelTrace chunked = detail::read_kineto(source, chunk);
      ASSERT_EQ(chunked.ops.size(), whole.ops.size()) << file << " " << chunk;
      for (std::size_t i = 0; i < whole.ops.size(); ++i) {
        EXPECT_EQ(chunked.ops[i].start, whole.ops[i].start);
        EXPECT_EQ(chunked.ops[i].end, whole.ops[i].end);
        EXPECT_EQ(chunked.names[chunked.ops[i].name], whole.names[whole.ops[i].name]);
      }
      EXPECT_EQ(chunked.launches.size(), whole.launches.size());
      EXPECT_EQ(chunked.ranges.size(), whole.ranges.size());
      EXPECT_EQ(chunked.device_name, whole.device_name);
    }
  }
}

TEST(KinetoReader, TimestampsAreExactWhereDoublesAreNot) {
  // ts 1712195495505582.988 us: through a double this becomes ...583104 ns.
  const KernelTrace trace =
      read_profile(kFixtures / "kineto/hta_v100_ns_resolution_rank-0.pt.trace.json.gz");
  EXPECT_EQ(trace.ops.front().start, 1712195495505582988);
  // Relative fractional ts plus baseTimeNanoseconds (1711964646000000000): ts
  // 4458676983543.183 us of a cudnn kernel, correlation 57541.
  const KernelTrace nccl = read_profile(kFixtures / "kineto/hta_a100_ddp2_nccl_data_rank0.json.gz");
  const auto it = std::find_if(nccl.ops.begin(), nccl.ops.end(),
                               [](const GpuOp& op) { return op.correlation == 57541; });
  ASSERT_NE(it, nccl.ops.end());
  EXPECT_EQ(it->start, 1716423322983543183);
  EXPECT_EQ(it->end, 1716423322983584590);
}

TEST(KinetoReader, TwoRanksOfOneJobPairByRank) {
  const KernelTrace rank0 = read_profile(kFixtures / "kineto/hta_sampled_rank-0.json.gz");
  const KernelTrace rank1 = read_profile(kFixtures / "kineto/hta_sampled_rank-1.json.gz");
  EXPECT_EQ(rank0.rank, 0);
  EXPECT_EQ(rank1.rank, 1);
  ASSERT_EQ(rank0.names[rank0.ranges.front().name], "ProfilerStep#551");
  ASSERT_EQ(rank1.names[rank1.ranges.front().name], "ProfilerStep#551");
  EXPECT_EQ(rank1.ranges.front().start - rank0.ranges.front().start, 192'000);  // 192 us skew
}

TEST(KinetoReader, NcclKernelsAreCommunication) {
  const KernelTrace trace =
      read_profile(kFixtures / "kineto/hta_a100_ddp2_nccl_data_rank0.json.gz");
  std::size_t on_stream_40 = 0;
  for (const GpuOp& op : trace.ops) {
    const bool nccl = trace.names[op.name].starts_with("ncclKernel_");
    EXPECT_EQ(op.kind == GpuOpKind::Collective, nccl) << trace.names[op.name];
    if (op.stream == 40) {
      ++on_stream_40;
      EXPECT_TRUE(nccl);
    }
  }
  EXPECT_EQ(on_stream_40, 21u);
}

TEST(KinetoReader, NcclKernelsCarryTheirMessageBytesAndGroup) {
  const KernelTrace trace =
      read_profile(kFixtures / "kineto/hta_a100_ddp2_nccl_data_rank0.json.gz");
  std::size_t all_reduces = 0;
  for (const GpuOp& op : trace.ops) {
    if (op.kind != GpuOpKind::Collective) {
      EXPECT_EQ(op.group_size, 0u);
      continue;
    }
    EXPECT_EQ(op.group_size, 2u);  // "Group size": 2 on every NCCL kernel
    EXPECT_GT(op.bytes, 0);
    // The all-reduce of dur 2636.669us: In msg nelems 6637568, dtype Float (4 bytes).
    if (trace.names[op.name].starts_with("ncclKernel_AllReduce") &&
        op.end - op.start == 2'636'669) {
      EXPECT_EQ(op.bytes, 6'637'568 * 4);
      ++all_reduces;
    }
  }
  EXPECT_EQ(all_reduces, 1u);
}

TEST(KinetoReader, MemoryEventsOfDevicesAreKept) {
  const KernelTrace trace = read_text(R"({"traceEvents": [
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
     "ts": 5, "args": {"Total Reserved": 0, "Total Allocated": 0, "Bytes": 512, "Addr": 9,
                       "Device Id": 0, "Device Type": 1}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
     "ts": 2, "args": {"Bytes": 64, "Device Id": -1, "Device Type": 0}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
     "ts": 3.5, "args": {"Bytes": -256, "Device Id": 1, "Device Type": 1}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[OutOfMemory]", "pid": 1,
     "tid": 1, "ts": 4, "args": {"Bytes": 1, "Device Type": 1}},
    {"ph": "X", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 4,
     "dur": 1, "args": {"Bytes": 1, "Device Type": 1}}
  ]})");
  ASSERT_EQ(trace.memory.size(), 2u);  // the host allocation and the others are left out
  EXPECT_EQ(trace.memory[0].time, 3'500);
  EXPECT_EQ(trace.memory[0].bytes, -256);
  EXPECT_EQ(trace.memory[0].device, 1);
  EXPECT_EQ(trace.memory[1].time, 5'000);
  EXPECT_EQ(trace.memory[1].bytes, 512);
  EXPECT_EQ(trace.memory[1].device, 0);
  EXPECT_TRUE(trace.ops.empty());
}

TEST(KinetoReader, ExecutionTraceIsNotKineto) {
  const auto path = kFixtures / "kineto/hta_simple_add_pytorch_et.json.gz";
  const std::string head = gunzip(path).substr(0, 64 * 1024);
  EXPECT_FALSE(detail::kineto_reader().accepts(FileSniff{path, head, true}));
  EXPECT_EQ(error_of_file(path),
            path.string() +
                ": expected a top-level \"traceEvents\" array (a PyTorch profiler trace), found "
                "only other members: schema, pid, time, start_ts, nodes, finish_ts");
}

TEST(KinetoReader, RocprofJsonIsNotKineto) {
  const auto path = kFixtures / "rocm/tracelens_rocprofv3_mi350x_908_results.json.gz";
  const std::string head = gunzip(path).substr(0, 64 * 1024);
  EXPECT_FALSE(detail::kineto_reader().accepts(FileSniff{path, head, true}));
}

// Of every profile fixture (any format), the Kineto reader claims exactly the Kineto traces.
TEST(KinetoReader, ClaimsOnlyKinetoFixtures) {
  std::size_t claimed = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kFixtures)) {
    const auto& path = entry.path();
    if (!entry.is_regular_file() || path.extension() == ".md") continue;
    std::string head = gunzip(path);
    head.resize(std::min<std::size_t>(head.size(), 64 * 1024));
    const bool kineto = path.parent_path().filename() == "kineto" &&
                        path.filename().string().find("pytorch_et") == std::string::npos;
    EXPECT_EQ(detail::kineto_reader().accepts(FileSniff{path, head, false}), kineto) << path;
    if (kineto) ++claimed;
  }
  EXPECT_EQ(claimed, 8u);
}

TEST(KinetoReader, AcceptsByContentNotByName) {
  const auto accepts = [](std::string_view head) {
    return detail::kineto_reader().accepts(FileSniff{"x.txt", head, false});
  };
  EXPECT_TRUE(accepts(R"({"traceEvents": [)"));
  EXPECT_TRUE(accepts("\xEF\xBB\xBF  {\n \"schemaVersion\": 1, \"deviceProperties\": ["));
  EXPECT_FALSE(accepts(R"([{"traceEvents": 1}])"));
  EXPECT_FALSE(accepts(R"({"rocprofiler-sdk-tool": [{"traceEvents": []}]})"));
  EXPECT_FALSE(accepts(R"({"schema": "1.0.1", "nodes": []})"));
  EXPECT_FALSE(accepts(""));
}

TEST(KinetoReader, PlainAndGzipGiveTheSameTrace) {
  const auto gz = kFixtures / "kineto/hta_a100_alexnet_benchmark_trace.json.gz";
  const auto plain = temp_file("alexnet.json", gunzip(gz));
  const KernelTrace a = read_profile(gz);
  const KernelTrace b = read_profile(plain);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    EXPECT_EQ(a.ops[i].start, b.ops[i].start);
    EXPECT_EQ(a.ops[i].correlation, b.ops[i].correlation);
  }
  EXPECT_EQ(a.launches.size(), b.launches.size());
  EXPECT_EQ(a.ranges.size(), b.ranges.size());
}

TEST(KinetoReader, SameInputSameOutput) {
  const auto path = kFixtures / "kineto/hta_mi250_minitoy_train_ROCm6_2_kineto.json.gz";
  const KernelTrace a = read_profile(path);
  const KernelTrace b = read_profile(path);
  ASSERT_EQ(a.names.size(), b.names.size());
  for (std::uint32_t i = 0; i < a.names.size(); ++i) EXPECT_EQ(a.names[i], b.names[i]);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    EXPECT_EQ(std::tie(a.ops[i].start, a.ops[i].end, a.ops[i].name, a.ops[i].correlation),
              std::tie(b.ops[i].start, b.ops[i].end, b.ops[i].name, b.ops[i].correlation));
  }
}

// ---------------------------------------------------------------------------------------
// Small inline traces: the rules one at a time

constexpr std::string_view kKernel =
    R"({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10.5, "dur": 2.25,)"
    R"( "args": {"device": 1, "stream": 9, "correlation": 42}})";

TEST(KinetoReader, KernelFields) {
  const KernelTrace trace =
      read_text(std::string(R"({"traceEvents": [)") + std::string(kKernel) + "]}");
  ASSERT_EQ(trace.ops.size(), 1u);
  const GpuOp& op = trace.ops[0];
  EXPECT_EQ(trace.names[op.name], "gemm");
  EXPECT_EQ(op.kind, GpuOpKind::Kernel);
  EXPECT_EQ(op.device, 1u);
  EXPECT_EQ(op.stream, 9u);
  EXPECT_EQ(op.start, 10'500);
  EXPECT_EQ(op.end, 12'750);
  EXPECT_EQ(op.correlation, 42u);
  EXPECT_EQ(op.bytes, -1);
  EXPECT_EQ(trace.rank, -1);
  EXPECT_EQ(trace.world_size, -1);
  EXPECT_EQ(trace.device_name, "");
}

TEST(KinetoReader, MetadataAfterTraceEventsStillApplies) {
  const KernelTrace trace = read_text(
      std::string(R"({"traceEvents": [)") + std::string(kKernel) +
      R"(], "displayTimeUnit": "ns", "baseTimeNanoseconds": 1000000000000,)"
      R"( "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 4},)"
      R"( "deviceProperties": [{"id": 0, "name": "GPU A"}, {"id": 1, "name": "GPU B"}]})");
  ASSERT_EQ(trace.ops.size(), 1u);
  EXPECT_EQ(trace.ops[0].start, 1'000'000'010'500);
  EXPECT_EQ(trace.ops[0].end, 1'000'000'012'750);
  EXPECT_EQ(trace.rank, 3);
  EXPECT_EQ(trace.world_size, 4);
  EXPECT_EQ(trace.device_name, "GPU A");
}

TEST(KinetoReader, GpuOpsFallBackToPidAndTid) {
  const KernelTrace trace = read_text(R"j({"traceEvents": [
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 3, "tid": 21, "ts": 1, "dur": 1,
     "args": {"bytes": 4096}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset", "pid": 3, "tid": 22, "ts": 2, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(x)", "pid": 3, "tid": 23, "ts": 3, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "rcclAllReduce", "pid": 3, "tid": 23, "ts": 4, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "gemm(ncclDevComm*)", "pid": 3, "tid": 23, "ts": 5, "dur": 1}
  ]})j");
  ASSERT_EQ(trace.ops.size(), 5u);
  EXPECT_EQ(trace.ops[0].kind, GpuOpKind::Memcpy);
  EXPECT_EQ(trace.ops[0].bytes, 4096);
  EXPECT_EQ(trace.ops[0].device, 3u);
  EXPECT_EQ(trace.ops[0].stream, 21u);
  EXPECT_EQ(trace.ops[0].correlation, kNoCorrelation);
  EXPECT_EQ(trace.ops[1].kind, GpuOpKind::Memset);
  EXPECT_EQ(trace.ops[2].kind, GpuOpKind::P2P);
  EXPECT_EQ(trace.ops[3].kind, GpuOpKind::Collective);
  EXPECT_EQ(trace.ops[4].kind, GpuOpKind::Kernel);  // only the function name counts
}

TEST(KinetoReader, LaunchesNeedACorrelation) {
  const KernelTrace trace = read_text(R"({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 5, "ts": 1, "dur": 2, "args": {"correlation": 7}},
    {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, "tid": -5, "ts": 3, "dur": 2, "args": {"correlation": 8, "stream": "0x0"}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaGetDevice", "pid": 1, "tid": 5, "ts": 4, "dur": 1, "args": {}}
  ]})");
  ASSERT_EQ(trace.launches.size(), 2u);
  EXPECT_EQ(trace.launches[0].thread, 5u);
  EXPECT_EQ(trace.launches[0].start, 1000);
  EXPECT_EQ(trace.launches[0].end, 3000);
  EXPECT_EQ(trace.launches[0].correlation, 7u);
  EXPECT_EQ(trace.launches[1].thread, static_cast<std::uint64_t>(-5));  // bits kept
  EXPECT_EQ(trace.launches[1].correlation, 8u);
}

TEST(KinetoReader, RangeDepthNestsPerThreadAndSource) {
  const KernelTrace trace = read_text(R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "A", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
    {"ph": "X", "cat": "user_annotation", "name": "B", "pid": 1, "tid": 1, "ts": 1, "dur": 4},
    {"ph": "X", "cat": "user_annotation", "name": "D", "pid": 1, "tid": 1, "ts": 2, "dur": 1},
    {"ph": "X", "cat": "user_annotation", "name": "C", "pid": 1, "tid": 1, "ts": 5, "dur": 4},
    {"ph": "X", "cat": "user_annotation", "name": "E", "pid": 1, "tid": 2, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "python_function", "name": "main.py(1): f", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "A", "pid": 0, "tid": 7, "ts": 0, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 1}
  ]})");
  std::vector<std::tuple<std::string, std::uint64_t, RangeSource, std::uint32_t>> got;
  for (const Range& r : trace.ranges)
    got.emplace_back(trace.names[r.name], r.thread, r.source, r.depth);
  const std::vector<std::tuple<std::string, std::uint64_t, RangeSource, std::uint32_t>> want = {
      {"A", 1, RangeSource::Annotation, 0},
      {"main.py(1): f", 1, RangeSource::Python, 0},  // Python frames nest apart
      {"E", 2, RangeSource::Annotation, 0},          // same start, end and depth: by thread
      {"B", 1, RangeSource::Annotation, 1},
      {"D", 1, RangeSource::Annotation, 2},
      {"C", 1, RangeSource::Annotation, 1},  // starts where B ends: B is closed
  };
  EXPECT_EQ(got, want);
}

TEST(KinetoReader, StringIdsAndQuotedNumbers) {
  const KernelTrace trace = read_text(R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "span", "pid": "Spans", "tid": "PyTorch Profiler", "ts": "12.5", "dur": "1"},
    {"ph": "X", "cat": "user_annotation", "name": "numeric", "pid": "7", "tid": "8", "ts": 1e1, "dur": 0},
    {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 5},
    {"name": "process_name", "ph": "M", "pid": "Traces", "tid": 0, "args": {"name": "x"}}
  ]})");
  ASSERT_EQ(trace.ranges.size(), 2u);
  EXPECT_EQ(trace.names[trace.ranges[0].name], "numeric");
  EXPECT_EQ(trace.ranges[0].thread, 8u);
  EXPECT_EQ(trace.ranges[0].start, 10'000);
  EXPECT_EQ(trace.names[trace.ranges[1].name], "span");
  EXPECT_EQ(trace.ranges[1].thread, 17943385331272468033ULL);  // FNV-1a of "PyTorch Profiler"
  EXPECT_EQ(trace.ranges[1].start, 12'500);
  EXPECT_EQ(trace.ranges[1].end, 13'500);
}

TEST(KinetoReader, NegativeDurationBecomesEmpty) {
  const KernelTrace trace = read_text(R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": -1}]})");
  ASSERT_EQ(trace.ops.size(), 1u);
  EXPECT_EQ(trace.ops[0].start, 5000);
  EXPECT_EQ(trace.ops[0].end, 5000);
}

TEST(KinetoReader, RankFromFileNameWhenDistributedInfoIsMissing) {
  const KernelTrace trace =
      read_text(R"({"traceEvents": []})", "/logs/torch_profile/rank-12.json.gz");
  EXPECT_EQ(trace.rank, 12);
  EXPECT_EQ(trace.world_size, -1);
  EXPECT_EQ(read_text(R"({"traceEvents": []})", "/logs/rank-12/trace.json").rank, -1);
}

TEST(KinetoReader, EmptyTraceEventsAndByteOrderMark) {
  const KernelTrace trace = read_text("\xEF\xBB\xBF{\"traceEvents\": [ ] }\n");
  EXPECT_TRUE(trace.ops.empty());
  EXPECT_TRUE(trace.launches.empty());
  EXPECT_TRUE(trace.ranges.empty());
}

// ---------------------------------------------------------------------------------------
// Decimal microseconds to nanoseconds

TEST(KinetoTime, DecimalMicrosecondsToNanoseconds) {
  using detail::DecimalStatus;
  const auto ns = [](std::string_view text) {
    TimeNs value = -12345;
    const DecimalStatus status = detail::microseconds_to_ns(text, value);
    return status == DecimalStatus::Ok ? std::optional<TimeNs>(value) : std::nullopt;
  };
  EXPECT_EQ(ns("4458677009853.422"), 4458677009853422);
  EXPECT_EQ(ns("1712195495505582.988"), 1712195495505582988);
  EXPECT_EQ(ns("1682725897226747"), 1682725897226747000);
  EXPECT_EQ(ns("12.5"), 12'500);
  EXPECT_EQ(ns("0"), 0);
  EXPECT_EQ(ns("-0.001"), -1);
  EXPECT_EQ(ns("007"), 7'000);
  EXPECT_EQ(ns("1.2345"), 1'235);  // half away from zero
  EXPECT_EQ(ns("1.2344999"), 1'234);
  EXPECT_EQ(ns("-1.0005"), -1'001);
  EXPECT_EQ(ns("0.0004"), 0);
  EXPECT_EQ(ns("1e3"), 1'000'000);
  EXPECT_EQ(ns("1.5E-3"), 2);
  EXPECT_EQ(ns("25e-1"), 2'500);
  EXPECT_EQ(ns("0e999999999999"), 0);
  EXPECT_EQ(ns("1e-999999999999"), 0);
  EXPECT_EQ(ns("9223372036854775.807"), 9223372036854775807);
  TimeNs value = 0;
  EXPECT_EQ(detail::microseconds_to_ns("9223372036854775.808", value), DecimalStatus::OutOfRange);
  EXPECT_EQ(detail::microseconds_to_ns("9223372036854775.8075", value), DecimalStatus::OutOfRange);
  EXPECT_EQ(detail::microseconds_to_ns("1e400", value), DecimalStatus::OutOfRange);
  EXPECT_EQ(detail::microseconds_to_ns("99999999999999999999999", value),
            DecimalStatus::OutOfRange);
  for (const std::string_view bad :
       {"", "-", "+1", ".5", "1.", "1e", "1e+", "1.2.3", "0x10", "1 ", "abc", "NaN"}) {
    EXPECT_EQ(detail::microseconds_to_ns(bad, value), DecimalStatus::NotANumber) << bad;
  }
}

// ---------------------------------------------------------------------------------------
// Damaged input: exact messages

TEST(KinetoErrors, TruncatedGzip) {
  const std::string gz = slurp(kFixtures / "kineto/hta_simple_add_kineto.json.gz");
  ASSERT_EQ(gz.size(), 3040u);
  // python3: zlib.decompressobj(31).decompress(gz[:1500]) gives 12272 bytes.
  const auto cut = temp_file("cut.json.gz", std::string_view(gz).substr(0, 1500));
  EXPECT_EQ(error_of_file(cut),
            cut.string() +
                ":byte 12272: expected the rest of the gzip stream, found a truncated file (the "
                "byte offset counts decompressed bytes)");
  // The same through read_profile: the head still sniffs as Kineto.
  try {
    (void)read_profile(cut);
    ADD_FAILURE() << "no error";
  } catch (const ProfileError& e) {
    EXPECT_EQ(e.location(), "byte 12272");
  }
  // All 34456 bytes of JSON decompress, but the gzip trailer is cut: still an error.
  const auto no_trailer = temp_file("no_trailer.json.gz", std::string_view(gz).substr(0, 3035));
  EXPECT_EQ(error_of_file(no_trailer),
            no_trailer.string() +
                ":byte 34456: expected the rest of the gzip stream, found a truncated file (the "
                "byte offset counts decompressed bytes)");
}

TEST(KinetoErrors, DamagedGzip) {
  std::string gz = slurp(kFixtures / "kineto/hta_simple_add_kineto.json.gz");
  gz[gz.size() - 8] = static_cast<char>(gz[gz.size() - 8] ^ 0x5a);  // the CRC-32
  const auto path = temp_file("bad_crc.json.gz", gz);
  // zlib checks the CRC after inflating the whole (small) member and drops that output.
  EXPECT_EQ(error_of_file(path),
            path.string() +
                ":byte 0: expected a valid gzip stream, found damaged data (incorrect data check; "
                "the byte offset counts decompressed bytes)");
}

TEST(KinetoErrors, EmptyFile) {
  const auto path = temp_file("empty.json", "");
  EXPECT_EQ(error_of_file(path),
            path.string() + ":byte 0: expected a JSON object ('{'), found the end of the file");
  EXPECT_EQ(error_of_text("  \n"),
            "trace.json:byte 3: expected a JSON object ('{'), found the end of the file");
}

TEST(KinetoErrors, NotJson) {
  EXPECT_EQ(error_of_text("hello, not a profile at all\n"),
            "trace.json:byte 0: expected a JSON object ('{'), found 'hello, not a profile at ...'");
  EXPECT_EQ(error_of_text("[1, 2]"),
            "trace.json:byte 0: expected a JSON object ('{'), found '[1, 2]'");
  EXPECT_EQ(error_of_text("{\"traceEvents\": []} x"),
            "trace.json:byte 20: expected the end of the file after the top-level object, found "
            "'x'");
  EXPECT_EQ(error_of_text("{traceEvents: []}"),
            "trace.json:byte 1: expected a member name of the top-level object, found "
            "'traceEvents: []}'");
  EXPECT_EQ(error_of_text("{\"traceEvents\" []}"),
            "trace.json:byte 15: /traceEvents: expected ':' after the member name, found '[]}'");
}

TEST(KinetoErrors, NoTraceEvents) {
  EXPECT_EQ(error_of_text(R"({"schemaVersion": 1, "deviceProperties": []})"),
            "trace.json: expected a top-level \"traceEvents\" array (a PyTorch profiler trace), "
            "found only other members: schemaVersion, deviceProperties");
  EXPECT_EQ(error_of_text("{}"),
            "trace.json: expected a top-level \"traceEvents\" array (a PyTorch profiler trace), "
            "found an empty object");
  EXPECT_EQ(error_of_text(R"({"traceEvents": {"a": 1}})"),
            "trace.json:byte 16: /traceEvents: expected an array ('['), found '{\"a\": 1}}'");
}

TEST(KinetoErrors, EventIsNotAnObject) {
  EXPECT_EQ(error_of_text(R"({"traceEvents": [{"ph": "M"}, 17]})"),
            "trace.json:byte 30: /traceEvents/1: expected an event object ('{'), found '17]}'");
}

TEST(KinetoErrors, TruncatedJson) {
  const std::string head = std::string(R"({"traceEvents": [)") + std::string(kKernel);
  EXPECT_EQ(error_of_text(head), "trace.json:byte " + std::to_string(head.size()) +
                                     ": /traceEvents: expected ',' or ']' after event 0, found "
                                     "the end of the file (is it truncated?)");
  const std::string cut = head + R"(, {"ph": "X", "cat": "ker)";
  EXPECT_EQ(error_of_text(cut),
            "trace.json:byte " + std::to_string(cut.size()) +
                ": /traceEvents/1: expected '\"' to close the value that starts at byte " +
                std::to_string(head.size() + 2) + ", found the end of the file (is it truncated?)");
  const std::string open = head + R"(, {"ph": "X", "args": {"a": [1, 2)";
  EXPECT_EQ(error_of_text(open),
            "trace.json:byte " + std::to_string(open.size()) +
                ": /traceEvents/1: expected ']' to close the value that starts at byte " +
                std::to_string(head.size() + 2) + ", found the end of the file (is it truncated?)");
  EXPECT_EQ(error_of_text(R"({"traceEvents": [{"ph": "X"]})"),
            "trace.json:byte 27: /traceEvents/0: expected '}' to close the value that starts at "
            "byte 17, found ']'");
  EXPECT_EQ(error_of_text(R"({"traceEvents": [], "INF)"),
            "trace.json:byte 24: expected '\"' to close the value that starts at byte 20, found "
            "the end of the file (is it truncated?)");
  EXPECT_EQ(error_of_text(R"({"traceEvents": [], "INFO": )"),
            "trace.json:byte 28: /INFO: expected a value, found the end of the file (is it "
            "truncated?)");
}

TEST(KinetoErrors, WrongTypes) {
  // Offsets point at the value: `{"traceEvents": [` is 17 bytes.
  EXPECT_EQ(
      error_of_text(
          R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "abc", "dur": 1}]})"),
      "trace.json:byte 65: /traceEvents/0/ts: expected a number (microseconds), found the "
      "string \"abc\"");
  EXPECT_EQ(
      error_of_text(
          R"({"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "r", "tid": 1, "ts": true, "dur": 1}]})"),
      "trace.json:byte 84: /traceEvents/0/ts: expected a number (microseconds), found true");
  EXPECT_EQ(
      error_of_text(
          R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e300, "dur": 1}]})"),
      "trace.json:byte 65: /traceEvents/0/ts: expected a time in microseconds within the "
      "int64 nanosecond range, found the number 1e300");
  EXPECT_EQ(
      error_of_text(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1}]})"),
      "trace.json:byte 17: /traceEvents/0: expected a \"dur\" member (microseconds), found "
      "none");
  EXPECT_EQ(error_of_text(
                R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": 5, "ts": 1, "dur": 1}]})"),
            "trace.json:byte 54: /traceEvents/0/name: expected a string, found the number 5");
  EXPECT_EQ(
      error_of_text(
          R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"stream": "s7"}}]})"),
      "trace.json:byte 97: /traceEvents/0/args/stream: expected an integer, found the "
      "string \"s7\"");
  EXPECT_EQ(
      error_of_text(
          R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"device": -1}}]})"),
      "trace.json:byte 97: /traceEvents/0/args/device: expected a device index, found -1");
  EXPECT_EQ(error_of_text(R"({"traceEvents": [], "distributedInfo": {"rank": "zero"}})"),
            "trace.json:/distributedInfo/rank: expected a non-negative integer, found the string "
            "\"zero\"");
  EXPECT_EQ(error_of_text(R"({"traceEvents": [], "baseTimeNanoseconds": 1.5})"),
            "trace.json:/baseTimeNanoseconds: expected a non-negative integer (ns), found 1.5");
}

TEST(KinetoErrors, ProblemsInEventsThatDoNotMatterAreIgnored) {
  // A cpu_op with a bad ts and a flow without dur are not read, so they cannot fail.
  const KernelTrace trace = read_text(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": "soon", "args": {"device": "x"}},
    {"args": {"stream": []}, "ph": "s", "cat": "ac2g", "id": 5, "ts": 1},
    {"ph": "X", "cat": "gpu_user_annotation", "name": 1, "ts": {}}
  ]})");
  EXPECT_TRUE(trace.ops.empty());
}

TEST(KinetoErrors, MalformedEventJson) {
  EXPECT_EQ(
      error_of_text(
          R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1,, "x": 1}]})"),
      "trace.json:byte 17: /traceEvents/0: expected a valid JSON object, found malformed "
      "JSON");
}

}  // namespace
}  // namespace perflow::reader
