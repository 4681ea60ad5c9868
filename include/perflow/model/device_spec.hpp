#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "perflow/core/hardware.hpp"

namespace perflow::model {

/// The arithmetic a run's GEMMs train in (tensor-core inputs). Fp8 is per-tensor scaled
/// (its recipe says how, model::Fp8Recipe); Mxfp8 scales each 32 elements by a power of two
/// (OCP Microscaling); Nvfp4 is 4-bit E2M1 with an E4M3 scale per 16 elements and one per
/// tensor. The block-scaled ones need Blackwell's tensor cores.
enum class Precision : std::uint8_t { Bf16, Fp16, Fp8, Mxfp8, Nvfp4 };
inline constexpr Precision kPrecisions[] = {Precision::Bf16, Precision::Fp16, Precision::Fp8,
                                            Precision::Mxfp8, Precision::Nvfp4};
/// Their names in configs, flags and outputs, in the enum's order.
inline constexpr std::string_view kPrecisionNames[] = {"bf16", "fp16", "fp8", "mxfp8", "nvfp4"};

std::string_view to_string(Precision precision);
std::optional<Precision> parse_precision(std::string_view text);
/// Whether GEMMs in `precision` run Transformer Engine's quantised path: inputs cast before
/// each GEMM, weights cached in the low precision, the ops it does not quantise in bf16.
constexpr bool quantised(Precision precision) {
  return precision == Precision::Fp8 || precision == Precision::Mxfp8 ||
         precision == Precision::Nvfp4;
}
/// Bytes of one GEMM input element in `precision`, its block scales included: 2 in 16 bits,
/// 1 in fp8 (one scale a tensor), 1 + 1/32 in MXFP8 (an E8M0 byte per 32), 1/2 + 1/16 in
/// NVFP4 (an E4M3 byte per 16).
constexpr double element_bytes(Precision precision) {
  switch (precision) {
    case Precision::Fp8:
      return 1.0;
    case Precision::Mxfp8:
      return 1.0 + 1.0 / 32;
    case Precision::Nvfp4:
      return 0.5 + 1.0 / 16;
    case Precision::Bf16:
    case Precision::Fp16:
      break;
  }
  return 2.0;
}

/// How close to peak a kernel runs. GEMMs: gemm_max is what the largest tile reaches on a
/// large GEMM; the shape's tiles, waves, split-K and memory traffic take it from there
/// (model::plan_gemm, docs/model.md "GEMM efficiency"). Attention (a fused,
/// FlashAttention-style kernel) and memory-bound kernels have flat fractions.
/// gemm_max is the one constant calibrated per GPU type (docs/model_validation): on the A100
/// the step times of 18 published Megatron-LM runs; the attention fractions are
/// FlashAttention-2's reported A100 forward/backward shares, the memory fraction what
/// streaming kernels reach of the datasheet bandwidth.
struct Efficiency {
  double gemm_max = 0.66;
  /// The operand reuse (multiply-adds per element a tile loads into shared memory) at which a
  /// tile reaches half its arithmetic peak: the SM's tensor multiply-adds per clock over the
  /// elements its shared memory delivers per clock (128 bytes). Hopper: 2,048 bf16
  /// multiply-adds a clock over 64 two-byte elements = 32 (fp8: twice both).
  double tile_half = 32;
  /// Seconds a GEMM kernel takes beyond its arithmetic or its traffic: its first wave's
  /// operands arriving and its last wave's tiles draining. The smallest GEMMs of
  /// docs/model_validation/gemm_measurements.json take 5-10 us where their traffic needs 1-3.
  double gemm_latency = 4e-6;
  double attention_forward = 0.55;
  double attention_backward = 0.40;
  double memory = 0.80;  ///< fraction of memory bandwidth element-wise kernels reach
};

/// A GPU as the cost model sees it. Rates are per second, sizes in bytes.
struct DeviceSpec {
  double peak_bf16 = 0;  ///< dense FLOP/s (0: not supported)
  double peak_fp16 = 0;
  double peak_fp8 = 0;
  double peak_mxfp8 = 0;  ///< block-scaled fp8 (Blackwell, MI355X)
  double peak_nvfp4 = 0;  ///< NVIDIA's block-scaled 4-bit (Blackwell)
  double memory_bandwidth = 0;
  double memory_capacity = 0;
  double link_bandwidth = 0;     ///< scale-up link (NVLink, Infinity Fabric), per direction
  double network_bandwidth = 0;  ///< scale-out network (the usual NIC) per GPU
  /// Streaming multiprocessors (AMD: compute units): a GEMM runs its tiles in waves of this
  /// many.
  std::uint32_t sms = 132;
  /// GPUs of one node (a GB200/GB300 compute tray holds 4) and GPUs that reach each other
  /// over the scale-up link: 8 on an HGX board, 72 in an NVL72 rack, whose NVLink switches
  /// join 18 trays. A collective whose ranks lie in one domain stays on that link.
  std::uint32_t gpus_per_node = 8;
  std::uint32_t nvlink_domain = 8;
  /// The GPU's link to host memory per direction: PCIe, or NVLink-C2C to a Grace CPU.
  double host_link_bandwidth = 0;
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
