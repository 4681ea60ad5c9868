#include "perflow/model/device_spec.hpp"

#include <algorithm>
#include <array>

namespace perflow::model {
namespace {

constexpr double kT = 1e12;  // FLOP/s
constexpr double kGB = 1e9;  // bytes, and bytes/s
constexpr double kMiB = 1024.0 * 1024.0;

// Memory is what the driver reports (NVML's memory.total, which PyTorch's allocator can
// fill), where a measurement is public: datasheets round "80 GB" GPUs down from 80 GiB.
// nvidia-smi, as tabled by Modal ("Why does an NVIDIA H100 80GB card offer 85.52 GB?",
// thundergolfer.com/blog/nvidia-gpu-memory-capacity): A100 40 GB 40,960 MiB, A100 80 GB
// 81,920 MiB, H100 SXM 81,559 MiB, H200 143,771 MiB. The others keep their datasheet figure.

// Scale-out: the NIC per GPU of the usual system (DGX A100: 200 Gb/s HDR; DGX H100, H200,
// B200, GB200 NVL72 and MI300X platforms: 400 Gb/s; B300 and GB300 NVL72: ConnectX-8,
// 800 Gb/s), as datasheets and S. Bekman's ml-engineering network notes give them.
// Host links per direction: PCIe Gen4 x16 32 GB/s (A100), Gen5 64 GB/s, Gen6 128 GB/s
// (B300); Frontier's MI250X reaches its CPU over Infinity Fabric, 36 GB/s a GCD; a Grace CPU's
// NVLink-C2C (900 GB/s both ways) serves two GPUs, 225 GB/s each way a GPU.
// NVLink domains: 8 GPUs on an HGX board (and an MI300X-MI355X platform's Infinity Fabric);
// an NVL72 rack's NVLink switches join its 18 trays of 4 into one of 72, which NCCL treats as
// one node (src/mnnvl.cc, its MNNVL clique), NVLink SHARP across it.
// MXFP8 and NVFP4 need Blackwell's (and MI355X's, MXFP8 only) block-scaled tensor cores:
// Transformer Engine lists neither on compute capability 9.0, CDNA3 has no MX instructions.
// SMs (AMD: compute units) and each generation's tile_half (Efficiency): the tensor
// multiply-adds an SM does per clock, datasheet peak / (2 x SMs x boost clock), over the
// 64 two-byte elements its shared memory (AMD: LDS) delivers per clock (128 bytes; fp8
// doubles both). A100: 312 TFLOPS / (2 x 108 x 1.41 GHz) = 1,024 -> 16. H100 and H200:
// 2,048 -> 32 (989.4 TFLOPS over 132 SMs at 1.83 GHz). B200, B300: 4,096 -> 64 (148 SMs;
// GB200, GB300: 152 at about 2 GHz; their two-SM tiles, which share operand loads, are not
// modelled). MI250X: 512 -> 8 (220 CUs at 1.7 GHz); MI300X, MI325X: 1,024 -> 16 (304 CUs at
// 2.1 GHz); MI355X: 2,048 -> 32 (256 CUs at 2.4 GHz).
// gemm_max, the one constant calibrated per GPU type (docs/model.md, "GEMM efficiency"),
// is Efficiency's default for every preset: 0.66 fits the step times of the 18 Megatron-LM
// A100 runs of docs/model_validation/results.md. On the cuBLAS benchmarks of
// docs/model_validation/gemm_measurements.json the A100 and the H100 both reach 0.75, so
// training keeps 0.88 of a benchmark's rate on the A100; no public H100 training run that
// is not held back calibrates the H100, which is taken to keep the same share: 0.66 too.

// Peak FLOP/s are the dense (not "with sparsity") tensor-core numbers of each datasheet.
constexpr std::array kPresets = {
    DevicePreset{"a100-40gb",
                 "NVIDIA A100 SXM4 40 GB",
                 "NVIDIA A100 Tensor Core GPU datasheet (2021): BF16/FP16 312 TFLOPS dense, "
                 "HBM2 1,555 GB/s, 40 GB, NVLink 600 GB/s (both directions)",
                 {.peak_bf16 = 312 * kT,
                  .peak_fp16 = 312 * kT,
                  .peak_fp8 = 0,
                  .memory_bandwidth = 1555 * kGB,
                  .memory_capacity = 40960 * kMiB,
                  .link_bandwidth = 300 * kGB,
                  .network_bandwidth = 25 * kGB,
                  .sms = 108,
                  .host_link_bandwidth = 32 * kGB,
                  .generation = GpuGeneration::Ampere,
                  .efficiency = {.tile_half = 16}}},
    DevicePreset{"a100-80gb",
                 "NVIDIA A100 SXM4 80 GB",
                 "NVIDIA A100 Tensor Core GPU datasheet (2021): BF16/FP16 312 TFLOPS dense, "
                 "HBM2e 2,039 GB/s, 80 GB, NVLink 600 GB/s (both directions)",
                 {.peak_bf16 = 312 * kT,
                  .peak_fp16 = 312 * kT,
                  .peak_fp8 = 0,
                  .memory_bandwidth = 2039 * kGB,
                  .memory_capacity = 81920 * kMiB,
                  .link_bandwidth = 300 * kGB,
                  .network_bandwidth = 25 * kGB,
                  .sms = 108,
                  .host_link_bandwidth = 32 * kGB,
                  .generation = GpuGeneration::Ampere,
                  .efficiency = {.tile_half = 16}}},
    DevicePreset{"h100-sxm",
                 "NVIDIA H100 SXM5 80 GB",
                 "NVIDIA H100 Tensor Core GPU datasheet: BF16/FP16 989 TFLOPS and FP8 1,979 "
                 "TFLOPS dense (half the sparsity figures), HBM3 3.35 TB/s, 80 GB, NVLink "
                 "900 GB/s (both directions)",
                 {.peak_bf16 = 989.4 * kT,
                  .peak_fp16 = 989.4 * kT,
                  .peak_fp8 = 1978.9 * kT,
                  .memory_bandwidth = 3350 * kGB,
                  .memory_capacity = 81559 * kMiB,
                  .link_bandwidth = 450 * kGB,
                  .network_bandwidth = 50 * kGB,
                  .sms = 132,
                  .host_link_bandwidth = 64 * kGB,
                  .generation = GpuGeneration::Hopper,
                  .nvls = true,
                  .efficiency = {.tile_half = 32}}},
    DevicePreset{"h100-pcie",
                 "NVIDIA H100 PCIe 80 GB",
                 "NVIDIA H100 Tensor Core GPU datasheet: BF16/FP16 756 TFLOPS and FP8 1,513 "
                 "TFLOPS dense, HBM2e 2 TB/s, 80 GB; PCIe Gen5 x16 (64 GB/s per direction) between "
                 "GPUs (an NVLink bridge joins pairs only); a 200 Gb/s NIC assumed",
                 {.peak_bf16 = 756.5 * kT,
                  .peak_fp16 = 756.5 * kT,
                  .peak_fp8 = 1513 * kT,
                  .memory_bandwidth = 2000 * kGB,
                  .memory_capacity = 80 * kGB,
                  .link_bandwidth = 64 * kGB,
                  .network_bandwidth = 25 * kGB,
                  .sms = 114,
                  .host_link_bandwidth = 64 * kGB,
                  .generation = GpuGeneration::Hopper,
                  .scale_up = ScaleUp::Pcie,
                  .efficiency = {.tile_half = 32}}},
    DevicePreset{"h200",
                 "NVIDIA H200 SXM 141 GB",
                 "NVIDIA H200 Tensor Core GPU datasheet: BF16/FP16 989 TFLOPS and FP8 1,979 "
                 "TFLOPS dense, HBM3e 4.8 TB/s, 141 GB, NVLink 900 GB/s (both directions)",
                 {.peak_bf16 = 989.4 * kT,
                  .peak_fp16 = 989.4 * kT,
                  .peak_fp8 = 1978.9 * kT,
                  .memory_bandwidth = 4800 * kGB,
                  .memory_capacity = 143771 * kMiB,
                  .link_bandwidth = 450 * kGB,
                  .network_bandwidth = 50 * kGB,
                  .sms = 132,
                  .host_link_bandwidth = 64 * kGB,
                  .generation = GpuGeneration::Hopper,
                  .nvls = true,
                  .efficiency = {.tile_half = 32}}},
    DevicePreset{"b200",
                 "NVIDIA B200 (HGX B200) 180 GB",
                 "NVIDIA HGX B200 specifications, per GPU (half the sparsity figures): BF16/FP16 "
                 "2.25 PFLOPS, FP8 and MXFP8 4.5, NVFP4 9 dense; HBM3e 7.7 TB/s (Blackwell "
                 "technical brief); 180 GB (MLPerf's B200-SXM-180GB); NVLink 5 1.8 TB/s (both "
                 "directions); ConnectX-7 400 Gb/s; PCIe Gen5 x16 to the host",
                 {.peak_bf16 = 2250 * kT,
                  .peak_fp16 = 2250 * kT,
                  .peak_fp8 = 4500 * kT,
                  .peak_mxfp8 = 4500 * kT,
                  .peak_nvfp4 = 9000 * kT,
                  .memory_bandwidth = 7700 * kGB,
                  .memory_capacity = 180 * kGB,
                  .link_bandwidth = 900 * kGB,
                  .network_bandwidth = 50 * kGB,
                  .sms = 148,
                  .host_link_bandwidth = 64 * kGB,
                  .generation = GpuGeneration::Blackwell,
                  .nvls = true,
                  .efficiency = {.tile_half = 64}}},
    DevicePreset{"b300",
                 "NVIDIA B300 (HGX B300, Blackwell Ultra) 270 GB",
                 "NVIDIA HGX B300 specifications, per GPU (half the sparsity figures): BF16/FP16 "
                 "2.25 PFLOPS, FP8 and MXFP8 4.5 (as B200), NVFP4 13.5 dense; HBM3e 7.7 TB/s; "
                 "270 GB usable (MLPerf's B300-SXM-270GB); NVLink 5 1.8 TB/s (both directions); "
                 "ConnectX-8 800 Gb/s; PCIe Gen6 x16 to the host",
                 {.peak_bf16 = 2250 * kT,
                  .peak_fp16 = 2250 * kT,
                  .peak_fp8 = 4500 * kT,
                  .peak_mxfp8 = 4500 * kT,
                  .peak_nvfp4 = 13500 * kT,
                  .memory_bandwidth = 7700 * kGB,
                  .memory_capacity = 270 * kGB,
                  .link_bandwidth = 900 * kGB,
                  .network_bandwidth = 100 * kGB,
                  .sms = 148,
                  .host_link_bandwidth = 128 * kGB,
                  .generation = GpuGeneration::Blackwell,
                  .nvls = true,
                  .efficiency = {.tile_half = 64}}},
    DevicePreset{"gb200",
                 "NVIDIA GB200 NVL72 (Grace Blackwell) 186 GB",
                 "NVIDIA GB200 NVL72 specifications over 72 GPUs (half the sparsity figures): "
                 "BF16/FP16 2.5 PFLOPS, FP8 and MXFP8 5, NVFP4 10 dense; HBM3e 13.4 TB and "
                 "576 TB/s (186 GB, 8 TB/s a GPU; MLPerf's GB200-186GB); NVLink 5 1.8 TB/s "
                 "(both directions) to all 72 GPUs of the rack over its NVLink switches, 4 GPUs "
                 "a compute tray; ConnectX-7 400 Gb/s; NVLink-C2C 900 GB/s (both directions) "
                 "from each Grace to its two GPUs",
                 {.peak_bf16 = 2500 * kT,
                  .peak_fp16 = 2500 * kT,
                  .peak_fp8 = 5000 * kT,
                  .peak_mxfp8 = 5000 * kT,
                  .peak_nvfp4 = 10000 * kT,
                  .memory_bandwidth = 8000 * kGB,
                  .memory_capacity = 186 * kGB,
                  .link_bandwidth = 900 * kGB,
                  .network_bandwidth = 50 * kGB,
                  .sms = 152,
                  .gpus_per_node = 4,
                  .nvlink_domain = 72,
                  .host_link_bandwidth = 225 * kGB,
                  .generation = GpuGeneration::Blackwell,
                  .nvls = true,
                  .efficiency = {.tile_half = 64}}},
    DevicePreset{"gb300",
                 "NVIDIA GB300 NVL72 (Grace Blackwell Ultra) 279 GB",
                 "NVIDIA GB300 NVL72 specifications over 72 GPUs (half the sparsity figures): "
                 "BF16/FP16 2.5 PFLOPS, FP8 and MXFP8 5, NVFP4 15 dense (Blackwell Ultra "
                 "datasheet: 20 | 15); 279 GB usable (288 GB HBM3e), 8 TB/s; NVLink 5 1.8 TB/s "
                 "(both directions) to all 72 GPUs of the rack, 4 GPUs a compute tray; "
                 "ConnectX-8 800 Gb/s; NVLink-C2C from each Grace to its two GPUs",
                 {.peak_bf16 = 2500 * kT,
                  .peak_fp16 = 2500 * kT,
                  .peak_fp8 = 5000 * kT,
                  .peak_mxfp8 = 5000 * kT,
                  .peak_nvfp4 = 15000 * kT,
                  .memory_bandwidth = 8000 * kGB,
                  .memory_capacity = 279 * kGB,
                  .link_bandwidth = 900 * kGB,
                  .network_bandwidth = 100 * kGB,
                  .sms = 152,
                  .gpus_per_node = 4,
                  .nvlink_domain = 72,
                  .host_link_bandwidth = 225 * kGB,
                  .generation = GpuGeneration::Blackwell,
                  .nvls = true,
                  .efficiency = {.tile_half = 64}}},
    DevicePreset{"mi250x",
                 "AMD Instinct MI250X (one package, two GCDs)",
                 "AMD Instinct MI250X data sheet: FP16/BF16 383 TFLOPS, HBM2e 3.2 TB/s, "
                 "128 GB per package; scale-up 350 GB/s per GCD (S. Bekman, ml-engineering, "
                 "network/README.md); Frontier: one 200 Gb/s Slingshot NIC per package",
                 {.peak_bf16 = 383 * kT,
                  .peak_fp16 = 383 * kT,
                  .peak_fp8 = 0,
                  .memory_bandwidth = 3277 * kGB,
                  .memory_capacity = 128 * kGB,
                  .link_bandwidth = 350 * kGB,
                  .network_bandwidth = 25 * kGB,
                  .sms = 220,
                  .gpus_per_node = 4,
                  .nvlink_domain = 4,
                  .host_link_bandwidth = 72 * kGB,
                  .generation = GpuGeneration::Ampere,
                  .efficiency = {.tile_half = 8}}},
    DevicePreset{"mi300x",
                 "AMD Instinct MI300X 192 GB",
                 "AMD Instinct MI300X data sheet: BF16/FP16 1,307 TFLOPS and FP8 2,615 TFLOPS "
                 "dense, HBM3 5.3 TB/s, 192 GB, Infinity Fabric 7 x 128 GB/s (both "
                 "directions)",
                 {.peak_bf16 = 1307.4 * kT,
                  .peak_fp16 = 1307.4 * kT,
                  .peak_fp8 = 2614.9 * kT,
                  .memory_bandwidth = 5300 * kGB,
                  .memory_capacity = 192 * kGB,
                  .link_bandwidth = 448 * kGB,
                  .network_bandwidth = 50 * kGB,
                  .sms = 304,
                  .host_link_bandwidth = 64 * kGB,
                  .generation = GpuGeneration::Ampere,
                  .efficiency = {.tile_half = 16}}},
    DevicePreset{"mi325x",
                 "AMD Instinct MI325X 256 GB",
                 "AMD Instinct MI325X data sheet: BF16/FP16 1,307 TFLOPS and FP8 2,615 TFLOPS "
                 "dense, HBM3e 6 TB/s, 256 GB, Infinity Fabric 7 x 128 GB/s (both "
                 "directions)",
                 {.peak_bf16 = 1307.4 * kT,
                  .peak_fp16 = 1307.4 * kT,
                  .peak_fp8 = 2614.9 * kT,
                  .memory_bandwidth = 6000 * kGB,
                  .memory_capacity = 256 * kGB,
                  .link_bandwidth = 448 * kGB,
                  .network_bandwidth = 50 * kGB,
                  .sms = 304,
                  .host_link_bandwidth = 64 * kGB,
                  .generation = GpuGeneration::Ampere,
                  .efficiency = {.tile_half = 16}}},
    DevicePreset{"mi355x",
                 "AMD Instinct MI355X 288 GB",
                 "AMD, \"Matrix Core Programming on CDNA3 and CDNA4\" (ROCm blog): 1,024 matrix "
                 "cores at 2.4 GHz, FP16/BF16 2.5 PFLOPS, FP8 and MXFP8 5.0 dense (MX "
                 "instructions at FP8's rate; MXFP4 10, no NVFP4); 256 CUs; HBM3e 8 TB/s, 288 "
                 "GB; Infinity Fabric 7 x 153.6 GB/s (both directions); a 400 Gb/s NIC; PCIe "
                 "Gen5 x16 to the host",
                 {.peak_bf16 = 2516.6 * kT,
                  .peak_fp16 = 2516.6 * kT,
                  .peak_fp8 = 5033.2 * kT,
                  .peak_mxfp8 = 5033.2 * kT,
                  .peak_nvfp4 = 0,
                  .memory_bandwidth = 8000 * kGB,
                  .memory_capacity = 288 * kGB,
                  .link_bandwidth = 537.6 * kGB,
                  .network_bandwidth = 50 * kGB,
                  .sms = 256,
                  .host_link_bandwidth = 64 * kGB,
                  .generation = GpuGeneration::Ampere,
                  .efficiency = {.tile_half = 32}}},
};

}  // namespace

std::string_view to_string(Precision precision) {
  return kPrecisionNames[static_cast<std::size_t>(precision)];
}

std::optional<Precision> parse_precision(std::string_view text) {
  for (const Precision p : kPrecisions) {
    if (to_string(p) == text) return p;
  }
  return std::nullopt;
}

double DeviceSpec::peak(Precision precision) const {
  switch (precision) {
    case Precision::Fp16:
      return peak_fp16;
    case Precision::Fp8:
      return peak_fp8;
    case Precision::Mxfp8:
      return peak_mxfp8;
    case Precision::Nvfp4:
      return peak_nvfp4;
    case Precision::Bf16:
      break;
  }
  return peak_bf16;
}

std::span<const DevicePreset> device_presets() { return kPresets; }

const DevicePreset* find_device_preset(std::string_view name) {
  const auto it = std::find_if(kPresets.begin(), kPresets.end(),
                               [name](const DevicePreset& p) { return p.name == name; });
  return it == kPresets.end() ? nullptr : &*it;
}

}  // namespace perflow::model
