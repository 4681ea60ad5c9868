// The GEMM model (docs/model.md, "GEMM efficiency"): hand-worked cases on a small GPU and
// properties over shapes.
#include "perflow/model/gemm.hpp"

#include <gtest/gtest.h>

#include "perflow/model/device_spec.hpp"

namespace perflow::model {
namespace {

// Four SMs of 1 TFLOP/s each, gemm_max 1, no latency, memory so fast that no GEMM below is
// memory-bound (except where a test says so); an A100's tile_half.
DeviceSpec small_gpu() {
  DeviceSpec d;
  d.peak_bf16 = 4e12;
  d.memory_bandwidth = 1e18;
  d.sms = 4;
  d.efficiency.gemm_max = 1;
  d.efficiency.tile_half = 16;
  d.efficiency.gemm_latency = 0;
  d.efficiency.memory = 1;
  return d;
}

// A tile's efficiency relative to 256 x 128's: reuse I = m n / (m + n) as I / (I + 16).
double relative(double m, double n) {
  const double i = m * n / (m + n);
  const double largest = 256.0 * 128 / 384;
  return (i / (i + 16)) / (largest / (largest + 16));
}

TEST(Gemm, OneFullWaveOfTheLargestTile) {
  // 1024 x 128: four 256 x 128 tiles, one per SM, one wave of 2 x 256 x 128 x 64 FLOPs at
  // 1 TFLOP/s each.
  const GemmPlan plan = plan_gemm({.m = 1024, .n = 128, .k = 64}, small_gpu(), Precision::Bf16);
  EXPECT_EQ(plan.tile.m, 256);
  EXPECT_EQ(plan.tile.n, 128);
  EXPECT_FALSE(plan.stream_k);
  EXPECT_EQ(plan.waves, 1);
  EXPECT_NEAR(plan.ns, 2.0 * 256 * 128 * 64 / 1e12 * 1e9, 1e-9);
  EXPECT_NEAR(plan.fraction_of_peak, 1.0, 1e-12);
}

TEST(Gemm, OneRowMoreCostsAWaveOrASmallerTile) {
  // 1025 x 128 x 64. Each candidate's waves x its round (2 m_t n_t 64 / (1e12 x relative)),
  // data-parallel (whole waves) or stream-K (the partial wave's tiles shared out over the 4
  // SMs; the fix-up is free with this memory):
  //   256x128  5 tiles: 2 or 1.25 waves x 4.194 us     = 5.243 us
  //   128x256  9 tiles: 3 or 2.25 waves x 4.194 us     = 9.437 us
  //   128x128  9 tiles: 3 or 2.25 waves x 2.208 us     = 4.967 us, the fastest
  //   256x64  10 tiles: 3 or 2.5 waves x 2.318 us      = 5.795 us
  //   64x256  17 tiles: 5 or 4.25 waves x 2.318 us     = 9.851 us
  //   128x64  18 tiles: 5 or 4.5 waves x 1.214 us      = 5.464 us
  //   64x128  17 tiles: 5 or 4.25 waves x 1.214 us     = 5.160 us
  //   64x64   34 tiles: 9 or 8.5 waves x 0.662 us      = 5.629 us
  const GemmPlan plan = plan_gemm({.m = 1025, .n = 128, .k = 64}, small_gpu(), Precision::Bf16);
  EXPECT_EQ(plan.tile.m, 128);
  EXPECT_EQ(plan.tile.n, 128);
  EXPECT_TRUE(plan.stream_k);
  EXPECT_EQ(plan.waves, 2.25);
  const double fix_up = 2.0 * 128 * 128 * 4 / (1e18 / 4);
  EXPECT_NEAR(plan.ns, (2.25 * 2.0 * 128 * 128 * 64 / (1e12 * relative(128, 128)) + fix_up) * 1e9,
              1e-9);
  const GemmPlan full = plan_gemm({.m = 1024, .n = 128, .k = 64}, small_gpu(), Precision::Bf16);
  EXPECT_GT(plan.ns, 1.18 * full.ns);
}

TEST(Gemm, StreamKSharesThePartialWave) {
  // 640 x 128 x 4096: 128 x 128 makes 5 tiles, a full wave and one tile over. Stream-K
  // shares that tile's 4096-deep reduction out over the 4 SMs: 1.25 waves of
  // 2 x 128 x 128 x 4096 / (1e12 x 0.95) = 141.3 us, 176.6 us in all, against 2 waves
  // (282.6 us) without it. The fix-up (a 64 KiB fp32 partial tile written and read per SM)
  // adds 2 x 128 x 128 x 4 bytes / (1e18 / 4) bytes/s.
  DeviceSpec gpu = small_gpu();
  const GemmPlan plan = plan_gemm({.m = 640, .n = 128, .k = 4096}, gpu, Precision::Bf16);
  EXPECT_EQ(plan.tile.m, 128);
  EXPECT_EQ(plan.tile.n, 128);
  EXPECT_TRUE(plan.stream_k);
  EXPECT_EQ(plan.waves, 1.25);
  const double round = 2.0 * 128 * 128 * 4096 / (1e12 * relative(128, 128));
  const double fix_up = 2.0 * 128 * 128 * 4 / (1e18 / 4);
  EXPECT_NEAR(plan.ns, (1.25 * round + fix_up) * 1e9, 1e-6);
}

TEST(Gemm, SkinnyGemmsStreamTheirWeights) {
  // One token through a 4096 x 4096 bf16 layer on an A100: nothing to reuse. Its weights,
  // input and output (33,570,816 bytes) at 80% of 2,039 GB/s, plus the kernel's latency.
  const DeviceSpec& a100 = find_device_preset("a100-80gb")->spec;
  const GemmPlan plan = plan_gemm({.m = 1, .n = 4096, .k = 4096}, a100, Precision::Bf16);
  EXPECT_TRUE(plan.memory_bound);
  const double bytes = (4096.0 + 4096.0 * 4096 + 4096) * 2;
  EXPECT_EQ(bytes, 33570816);
  EXPECT_NEAR(plan.ns, (4e-6 + bytes / (2039e9 * 0.8)) * 1e9, 1e-6);
  // In fp8 the operands are one byte (the output stays 16-bit) and the peak doubles.
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const GemmPlan fp8 = plan_gemm({.m = 1, .n = 4096, .k = 4096}, h100, Precision::Fp8);
  EXPECT_NEAR(fp8.ns, (4e-6 + (4096.0 + 4096.0 * 4096 + 2 * 4096) / (3350e9 * 0.8)) * 1e9, 1e-6);
}

TEST(Gemm, WeightGradientsAccumulateIntoFp32) {
  // The output read and written in fp32 (8 bytes an element): memory-bound when the
  // reduction is short.
  DeviceSpec gpu = small_gpu();
  gpu.memory_bandwidth = 1e9;  // 1 GB/s: every GEMM below is memory-bound
  const GemmShape shape{.m = 64, .n = 64, .k = 16};
  const GemmPlan activation = plan_gemm(shape, gpu, Precision::Bf16);
  const GemmPlan gradient = plan_gemm(shape, gpu, Precision::Bf16, GemmOutput::AccumulatedGradient);
  EXPECT_NEAR(activation.ns, (64.0 * 16 * 2 * 2 + 64.0 * 64 * 2) / 1e9 * 1e9, 1e-6);
  EXPECT_NEAR(gradient.ns, (64.0 * 16 * 2 * 2 + 64.0 * 64 * 8) / 1e9 * 1e9, 1e-6);
}

// More of any dimension never takes less time: each candidate's time grows with the shape,
// and so does the fastest's.
TEST(Gemm, TimeNeverFallsAsTheShapeGrows) {
  for (const char* name : {"a100-80gb", "h100-sxm", "b200", "mi300x"}) {
    const DeviceSpec& device = find_device_preset(name)->spec;
    for (const Precision precision : {Precision::Bf16, Precision::Fp8}) {
      if (device.peak(precision) <= 0) continue;
      for (double k : {64.0, 1000.0, 8192.0}) {
        for (double n : {128.0, 1280.0, 7168.0}) {
          double previous = 0;
          for (double m = 1; m <= 20000; m = m < 64 ? m + 7 : m * 1.37 + 1) {
            const double ns = plan_gemm({.m = m, .n = n, .k = k}, device, precision).ns;
            EXPECT_GE(ns, previous) << name << " " << m << "x" << n << "x" << k;
            previous = ns;
          }
        }
      }
    }
  }
}

// Wave quantization is what makes the micro batch matter: on an H100 a layer's GEMM at
// 8 x 4,096 tokens runs closer to peak than at 1 x 4,096 (more tiles per wave), and a
// large GEMM reaches the calibrated gemm_max on the largest tile.
TEST(Gemm, LargerGemmsRunCloserToPeak) {
  const DeviceSpec& h100 = find_device_preset("h100-sxm")->spec;
  const GemmPlan one = plan_gemm({.m = 4096, .n = 1280, .k = 8192}, h100, Precision::Bf16);
  const GemmPlan eight = plan_gemm({.m = 8 * 4096, .n = 1280, .k = 8192}, h100, Precision::Bf16);
  EXPECT_LT(one.fraction_of_peak, eight.fraction_of_peak);
  const GemmPlan huge = plan_gemm({.m = 65536, .n = 65536, .k = 65536}, h100, Precision::Bf16);
  EXPECT_LE(huge.fraction_of_peak, h100.efficiency.gemm_max);
  EXPECT_GT(huge.fraction_of_peak, 0.99 * h100.efficiency.gemm_max);
}

}  // namespace
}  // namespace perflow::model
