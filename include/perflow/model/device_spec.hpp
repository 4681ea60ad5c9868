#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "perflow/core/hardware.hpp"

namespace perflow::model {

/// The arithmetic a run trains in (tensor-core inputs).
enum class Precision : std::uint8_t { Bf16, Fp16, Fp8 };

std::string_view to_string(Precision precision);
std::optional<Precision> parse_precision(std::string_view text);

/// How close to peak a kernel runs. A GEMM of smallest dimension x reaches
/// gemm_max * x / (x + gemm_half): small or skinny GEMMs run far below peak (tile and wave
/// quantization, too little work per SM), large square ones approach gemm_max. Attention
/// (a fused, FlashAttention-style kernel) and memory-bound kernels have flat fractions.
/// One calibration for every preset: gemm_max 0.70 brings the predicted step times of 18
/// published Megatron-LM runs on A100s within 7% on average (docs/model_validation.md);
/// the attention fractions are FlashAttention-2's reported A100 forward/backward shares,
/// the memory fraction what streaming kernels reach of the datasheet bandwidth.
struct Efficiency {
  double gemm_max = 0.70;
  double gemm_half = 96;  ///< the smallest dimension at which a GEMM reaches half of gemm_max
  double attention_forward = 0.55;
  double attention_backward = 0.40;
  double memory = 0.80;  ///< fraction of memory bandwidth element-wise kernels reach

  /// The fraction of peak FLOP/s a GEMM whose smallest dimension is `smallest` reaches.
  [[nodiscard]] double gemm(double smallest) const {
    return gemm_max * smallest / (smallest + gemm_half);
  }
};

/// A GPU as the cost model sees it. Rates are per second, sizes in bytes.
struct DeviceSpec {
  double peak_bf16 = 0;  ///< dense FLOP/s (0: not supported)
  double peak_fp16 = 0;
  double peak_fp8 = 0;
  double memory_bandwidth = 0;
  double memory_capacity = 0;
  double link_bandwidth = 0;     ///< scale-up link (NVLink, Infinity Fabric), per direction
  double network_bandwidth = 0;  ///< scale-out network (the usual NIC) per GPU
  /// What NCCL's collectives need to know of the GPU and its node (parallel::NcclNetwork).
  GpuGeneration generation = GpuGeneration::Ampere;
  ScaleUp scale_up = ScaleUp::NvLink;
  bool nvls = false;  ///< the node's NVSwitches reduce in the switch (NVLink SHARP)
  Efficiency efficiency;
  /// Host seconds to issue one kernel in eager PyTorch (the op's Python call, the dispatcher
  /// and the launch): the median over the Kineto traces of tests/data, to the microsecond
  /// (docs/model.md, "The host floor"; docs/model_validation/host_launch.py).
  double kernel_launch = 24e-6;

  /// Peak dense FLOP/s in `precision`; 0 when the device has none.
  [[nodiscard]] double peak(Precision precision) const;
};

/// A named device with the public sources of its numbers.
struct DevicePreset {
  std::string_view name;
  std::string_view description;
  std::string_view source;
  DeviceSpec spec;
};

std::span<const DevicePreset> device_presets();
/// nullptr if no preset has that name.
const DevicePreset* find_device_preset(std::string_view name);

}  // namespace perflow::model
