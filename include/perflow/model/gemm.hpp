#pragma once

#include <cstdint>

#include "perflow/model/device_spec.hpp"

namespace perflow::model {

/// One matrix product as a GPU runs it: `batch` independent products, each writing an
/// m x n output and reducing over k (a grouped GEMM's experts, a batched GEMM's heads).
struct GemmShape {
  double m = 0;
  double n = 0;
  double k = 0;
  double batch = 1;
};

/// A thread block's output tile: the kernel covers the output with ceil(m / tile_m) x
/// ceil(n / tile_n) of them, one per SM at a time.
struct GemmTile {
  std::uint16_t m = 0;
  std::uint16_t n = 0;
};

/// What the output is written as: 2-byte activations, or fp32 weight gradients accumulated
/// into the main gradient (read and written: 8 bytes an element; Megatron-LM's
/// gradient_accumulation_fusion, on by default).
enum class GemmOutput : std::uint8_t { Activation, AccumulatedGradient };

/// How a GEMM runs: the kernel the model picks (the fastest tile, data-parallel or
/// stream-K) and what it costs.
struct GemmPlan {
  GemmTile tile;
  bool stream_k = false;      ///< the partial last wave shared out over every SM
  double waves = 0;           ///< tiles / SMs: rounded up, or with stream-K as they are
  bool memory_bound = false;  ///< its operands' traffic takes longer than its arithmetic
  double ns = 0;
  /// The part of ns that scales with 1 / gemm_max: the waves' arithmetic when it, not the
  /// traffic, bounds the GEMM (what `perflow calibrate` fits; not the latency or fix-up).
  double arithmetic_ns = 0;
  double fraction_of_peak = 0;  ///< its FLOPs over (ns x the precision's peak)
};

/// The time of one GEMM (docs/model.md, "GEMM efficiency"). Each candidate tile (m_t, n_t)
/// covers the output in ceil(batch ceil(m / m_t) ceil(n / n_t) / SMs) rounds (waves); a
/// round takes its reduction (k multiply-adds per output) at the SM's share of peak x
/// gemm_max x the tile's efficiency, then writes its tile at the SM's share of memory
/// bandwidth. A tile's efficiency is its operand reuse I = m_t n_t / (m_t + n_t)
/// (multiply-adds per element loaded) as I / (I + tile_half), relative to the largest
/// tile's. Stream-K shares the partial last wave's tiles out over every SM. The time is at
/// least the operands' and output's traffic at the achievable memory bandwidth. The fastest
/// candidate wins, as cuBLAS's heuristics aim to.
GemmPlan plan_gemm(const GemmShape& shape, const DeviceSpec& device, Precision precision,
                   GemmOutput output = GemmOutput::Activation);

}  // namespace perflow::model
