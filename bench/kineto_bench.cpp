// Reading speed of the Kineto reader on a large synthetic trace, plain and gzip: MB/s of
// JSON text (decompressed bytes) and the process's peak RSS after the read, which shows
// that the file is streamed rather than loaded. The trace mimics a CUDA DDP capture
// (cpu_op, cuda_runtime launch, ac2g flows, kernel, memcpy, user_annotation; fractional-µs
// ts relative to baseTimeNanoseconds). Size: PERFLOW_KINETO_BENCH_MB (default 300).
// Run: build/release/bench/perflow_kineto_bench
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "perflow/reader/profile_reader.hpp"

namespace {

namespace fs = std::filesystem;

std::uint64_t target_bytes() {
  const char* env = std::getenv("PERFLOW_KINETO_BENCH_MB");
  const std::uint64_t mb = env != nullptr ? std::strtoull(env, nullptr, 10) : 300;
  return (mb == 0 ? 300 : mb) << 20;
}

// "<us>.<3 digits>" as current Kineto prints times.
std::string us(std::int64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

// Writes the trace through `write` in pieces; returns the text size.
template <class Write>
std::uint64_t generate(std::uint64_t target, Write write) {
  std::uint64_t size = 0;
  const auto put = [&](const std::string& text) {
    write(text);
    size += text.size();
  };
  put(R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB",)"
      R"( "totalGlobalMem": 85097971712, "computeMajor": 8, "computeMinor": 0, "numSms": 108}],)"
      R"( "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8}, "traceEvents": [)"
      "\n");
  std::int64_t t = 4'458'676'983'543'183;  // ns since the base, as in the nccl fixture
  std::uint64_t correlation = 19'000;
  bool first = true;
  for (std::uint64_t group = 0; size < target; ++group) {
    std::string text;
    const std::int64_t cpu = t;
    const std::uint64_t c = correlation++;
    if (group % 1000 == 0) {
      text += fmt::format(
          R"({{"ph": "X", "cat": "user_annotation", "name": "## forward ##", "pid": 2910249,)"
          R"( "tid": 2910249, "ts": {}, "dur": {}, "args": {{"External id": {}}}}},)"
          "\n",
          us(cpu), us(900'000'000), c);
    }
    text += fmt::format(
        R"({{"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 2910249, "tid": 2910249,)"
        R"( "ts": {}, "dur": {}, "args": {{"External id": {}, "Record function id": 0,)"
        R"( "Ev Idx": {}, "Sequence number": {}, "Fwd thread id": 0}}}},)"
        "\n",
        us(cpu), us(21'337), c, group, group);
    text += fmt::format(
        R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 2910249,)"
        R"( "tid": 2910249, "ts": {}, "dur": {}, "args": {{"External id": {}, "cbid": 211,)"
        R"( "correlation": {}}}}},)"
        "\n",
        us(cpu + 4'113), us(9'391), c, c);
    text += fmt::format(
        R"({{"ph": "s", "id": {}, "pid": 2910249, "tid": 2910249, "ts": {}, "cat": "ac2g",)"
        R"( "name": "ac2g"}},)"
        "\n",
        c, us(cpu + 4'113));
    if (group % 10 == 7) {
      text += fmt::format(
          R"j({{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)",)j"
          R"j( "pid": 0, "tid": 7, "ts": {}, "dur": {}, "args": {{"External id": {}, "device": 0,)j"
          R"j( "context": 1, "stream": 7, "correlation": {}, "bytes": 4000,)j"
          R"j( "memory bandwidth (GB/s)": 0.786}}}},)j"
          "\n",
          us(cpu + 40'000), us(1'536), c, c);
    } else {
      text += fmt::format(
          R"j({{"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_)j"
          R"j(kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int,)j"
          R"j( at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)", "pid": 0,)j"
          R"j( "tid": 7, "ts": {}, "dur": {}, "args": {{"External id": {}, "queued": 0,)j"
          R"j( "device": 0, "context": 1, "stream": 7, "correlation": {},)j"
          R"j( "registers per thread": 32, "shared memory": 0, "blocks per SM": 1.185185,)j"
          R"j( "warps per SM": 4.740741, "grid": [128, 1, 1], "block": [128, 1, 1],)j"
          R"j( "est. achieved occupancy %": 7}}}},)j"
          "\n",
          us(cpu + 40'000), us(3'744), c, c);
    }
    text += fmt::format(
        R"({{"ph": "f", "id": {}, "pid": 0, "tid": 7, "ts": {}, "cat": "ac2g", "name": "ac2g",)"
        R"( "bp": "e"}})",
        c, us(cpu + 40'000));
    if (!first) text.insert(0, ",\n");
    first = false;
    put(text);
    t += 25'000;
  }
  put("\n], \"traceName\": \"synthetic\", \"displayTimeUnit\": \"ms\", "
      "\"baseTimeNanoseconds\": 1711964646000000000}\n");
  return size;
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

struct Files {
  fs::path plain;
  fs::path gz;
  std::uint64_t text_bytes = 0;
  std::uint64_t gz_bytes = 0;
  double rss_before_mb = 0;  // after writing the files, before any read

  Files() {
    const fs::path dir = fs::temp_directory_path();
    const std::string stem = fmt::format("perflow_kineto_bench_{}", ::getpid());
    plain = dir / (stem + ".json");
    gz = dir / (stem + ".json.gz");
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(plain.c_str(), "wb"),
                                                        &std::fclose);
    gzFile zout = gzopen(gz.c_str(), "wb6");
    if (!out || zout == nullptr) throw std::runtime_error("cannot write the benchmark traces");
    text_bytes = generate(target_bytes(), [&](const std::string& text) {
      std::fwrite(text.data(), 1, text.size(), out.get());
      gzwrite(zout, text.data(), static_cast<unsigned>(text.size()));
    });
    gzclose(zout);
    gz_bytes = fs::file_size(gz);
    rss_before_mb = peak_rss_mb();
  }
  ~Files() {
    std::error_code ec;
    fs::remove(plain, ec);
    fs::remove(gz, ec);
  }
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;
};

const Files& files() {
  static const Files kFiles;
  return kFiles;
}

void BM_ReadKineto(benchmark::State& state, bool gzip) {
  const Files& f = files();
  const fs::path& path = gzip ? f.gz : f.plain;
  std::size_t ops = 0;
  std::size_t launches = 0;
  for (auto _ : state) {
    const perflow::reader::KernelTrace trace = perflow::reader::read_profile(path);
    ops = trace.ops.size();
    launches = trace.launches.size();
    benchmark::DoNotOptimize(trace.ops.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(f.text_bytes) * state.iterations());
  state.counters["json_MB"] = static_cast<double>(f.text_bytes) / (1 << 20);
  state.counters["file_MB"] = static_cast<double>(gzip ? f.gz_bytes : f.text_bytes) / (1 << 20);
  state.counters["gpu_ops"] = static_cast<double>(ops);
  state.counters["launches"] = static_cast<double>(launches);
  state.counters["peak_rss_MB"] = peak_rss_mb();
  state.counters["rss_before_MB"] = f.rss_before_mb;
}

// Plain first: peak RSS is a high-water mark, so each later number includes the earlier ones.
BENCHMARK_CAPTURE(BM_ReadKineto, plain, false)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK_CAPTURE(BM_ReadKineto, gzip, true)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
