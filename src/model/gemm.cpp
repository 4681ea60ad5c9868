// GEMM time from the whole shape: tile and wave quantization, operand reuse per tile,
// stream-K, the memory floor and the kernel's latency (docs/model.md, "GEMM efficiency").
#include "perflow/model/gemm.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

namespace perflow::model {
namespace {

// cuBLAS's tensor-core tile sizes, "256x128 and 128x256 (most efficient)" down to "64x64
// (least efficient)" (NVIDIA Deep Learning Performance docs, Matrix Multiplication
// Background User's Guide, section "Tile Quantization").
constexpr std::array<GemmTile, 8> kTiles = {
    {{256, 128}, {128, 256}, {128, 128}, {256, 64}, {64, 256}, {128, 64}, {64, 128}, {64, 64}}};

// Stream-K (Osama et al., "Stream-K: Work-centric Parallel Decomposition for Dense
// Matrix-Matrix Multiplication on the GPU", PPoPP 2023; CUTLASS's GemmUniversal, cuBLAS's
// persistent kernels): the whole waves run tile by tile, the tiles of the last, partial wave
// are shared out over every SM along their reduction, each SM taking an equal share of its
// multiply-adds; each SM then writes its partial tile in fp32 and the tile's owner reads one
// back (the fix-up). CUTLASS example 47 on an A100: 2048^3 with 128 x 128 tiles, 2.37 waves,
// takes 94 us instead of 113.
constexpr double kPartialBytes = 4;

double reuse(GemmTile tile) {
  const double m = tile.m, n = tile.n;
  return m * n / (m + n);
}

GemmPlan plan_uncached(const GemmShape& shape, const DeviceSpec& device, Precision precision,
                       GemmOutput output) {
  GemmPlan best;
  const double flops = 2 * shape.m * shape.n * shape.k * shape.batch;
  const double peak = device.peak(precision);
  if (flops <= 0 || peak <= 0) return best;
  const Efficiency& e = device.efficiency;
  const double sms = device.sms > 0 ? device.sms : 1;
  const double input_bytes = element_bytes(precision);
  // tile_half is the bf16 tile's: a narrower type does `rate` times the multiply-adds per
  // clock on `2 / input_bytes` times the elements a load brings, so half the peak needs
  // rate x input_bytes / 2 times the reuse (fp8 on Hopper: 2 x 1/2, the same). The rate is
  // the ratio of the datasheet peaks, which round it: to the nearest quarter; where the
  // peaks are one number (a device type's peak_flops), the type's usual one (fp8 twice
  // bf16, fp4 four times).
  const double usual_rate = precision == Precision::Nvfp4 ? 4.0 : quantised(precision) ? 2.0 : 1.0;
  const double rate = device.peak_bf16 > 0 && peak != device.peak_bf16
                          ? std::max(1.0, std::round(4 * peak / device.peak_bf16) / 4)
                          : usual_rate;
  const double tile_half = e.tile_half * rate * input_bytes / 2;
  const double output_bytes = output == GemmOutput::AccumulatedGradient ? 8 : 2;
  const double bandwidth = device.memory_bandwidth;
  const double achievable = bandwidth * e.memory;
  // Every operand read once and the output written once: no kernel is faster.
  const double traffic =
      shape.batch *
      ((shape.m * shape.k + shape.k * shape.n) * input_bytes + shape.m * shape.n * output_bytes) /
      achievable;
  const double largest = reuse(kTiles.front());
  const double largest_efficiency = largest / (largest + tile_half);
  for (const GemmTile tile : kTiles) {
    const double tile_efficiency = reuse(tile) / (reuse(tile) + tile_half) / largest_efficiency;
    const double sm_rate = peak / sms * e.gemm_max * tile_efficiency;
    const double tiles = shape.batch * std::ceil(shape.m / tile.m) * std::ceil(shape.n / tile.n);
    const double area = double(tile.m) * tile.n;
    // One round: a tile's reduction at the SM's share of the arithmetic rate. Its output
    // goes out while other tiles compute: it counts in the traffic.
    const double round = 2 * area * shape.k / sm_rate;
    const double full_waves = std::floor(tiles / sms);
    const double rest = tiles - full_waves * sms;  // tiles in the partial wave
    for (const bool stream_k : {false, true}) {
      if (stream_k && rest == 0) continue;
      const double waves = stream_k ? full_waves + rest / sms : std::ceil(tiles / sms);
      const double fix_up = stream_k ? 2 * area * kPartialBytes / (bandwidth / sms) : 0;
      const double compute = waves * round + fix_up;
      const double seconds = std::max(compute, traffic) + e.gemm_latency;
      if (best.ns == 0 || seconds * 1e9 < best.ns) {
        const bool memory_bound = traffic >= compute;
        best = {.tile = tile,
                .stream_k = stream_k,
                .waves = waves,
                .memory_bound = memory_bound,
                .ns = seconds * 1e9,
                .arithmetic_ns = memory_bound ? 0 : waves * round * 1e9,
                .fraction_of_peak = flops / (seconds * peak)};
      }
    }
  }
  return best;
}

// Everything plan_uncached reads. A model's positions repeat the same few shapes on the same
// GPU (every layer, chunk and stage of a type; every plan of a search that shares a tensor
// degree and micro batch), so each thread remembers its recent answers.
struct PlanKey {
  std::array<double, 12> values{};
  std::uint8_t precision = 0;
  std::uint8_t output = 0;
  bool operator==(const PlanKey&) const = default;
};

// splitmix64's finalizer: the fields' low bits are mostly zero (whole numbers as doubles), so
// every bit of each must reach the slot index.
std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::size_t hash(const PlanKey& key) {
  std::uint64_t h = mix(key.precision * 4ULL + key.output);
  for (const double v : key.values) h = mix(h ^ std::bit_cast<std::uint64_t>(v));
  return static_cast<std::size_t>(h);
}

struct CachedPlan {
  bool filled = false;
  PlanKey key;
  GemmPlan plan;
};

}  // namespace

GemmPlan plan_gemm(const GemmShape& shape, const DeviceSpec& device, Precision precision,
                   GemmOutput output) {
  const Efficiency& e = device.efficiency;
  const PlanKey key{{shape.m, shape.n, shape.k, shape.batch, device.peak(precision),
                     device.peak_bf16, double(device.sms), device.memory_bandwidth, e.gemm_max,
                     e.tile_half, e.gemm_latency, e.memory},
                    static_cast<std::uint8_t>(precision),
                    static_cast<std::uint8_t>(output)};
  thread_local std::array<CachedPlan, 256> cache{};
  CachedPlan& slot = cache[hash(key) % cache.size()];
  if (slot.filled && slot.key == key) return slot.plan;
  slot = {true, key, plan_uncached(shape, device, precision, output)};
  return slot.plan;
}

}  // namespace perflow::model
