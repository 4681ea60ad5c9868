#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "perflow/core/time.hpp"

namespace perflow::reader {

/// What a GPU operation is. Collectives and point-to-point transfers are kernels that a
/// communication library (NCCL, RCCL) launched; readers classify them by name or by the
/// profiler's own fields.
enum class GpuOpKind : std::uint8_t { Kernel, Memcpy, Memset, Collective, P2P };

std::string_view to_string(GpuOpKind kind);

/// Interned names: every name in a trace is stored once and referred to by index.
class NameTable {
 public:
  std::uint32_t intern(std::string_view name);
  [[nodiscard]] const std::string& operator[](std::uint32_t id) const { return names_[id]; }
  [[nodiscard]] std::size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> index_;
};

inline constexpr std::uint64_t kNoCorrelation = ~std::uint64_t{0};

/// One operation on a GPU. Times are integer nanoseconds on the trace's clock (absolute
/// epoch ns where the format says so, otherwise the profiler's session clock).
struct GpuOp {
  GpuOpKind kind = GpuOpKind::Kernel;
  std::uint32_t device = 0;  ///< the profiler's device index, as written in the file
  std::uint64_t stream = 0;  ///< stream (CUDA) or queue (ROCm) id
  TimeNs start = 0;
  TimeNs end = 0;
  std::uint32_t name = 0;                      ///< into KernelTrace::names
  std::uint64_t correlation = kNoCorrelation;  ///< links the op to its launch
  std::int64_t bytes = -1;                     ///< -1: unknown
  /// Communication kernels: the ranks of its process group (Kineto's `Group size`); 0:
  /// unknown. For NCCL kernels `bytes` is the message (`In msg nelems` x the dtype's size).
  std::uint32_t group_size = 0;
};

/// An allocation (bytes > 0) or a free (bytes < 0) of device memory, as the PyTorch
/// profiler records with profile_memory=True (Kineto `[memory]` instant events). Host
/// (CPU) allocations are not kept. `time` is when the host made it (trace clock).
struct MemoryEvent {
  TimeNs time = 0;
  std::int64_t bytes = 0;
  std::int64_t device = -1;  ///< the profiler's device index; -1: not given
};

/// A host-side launch of a GPU op (cudaLaunchKernel, hipLaunchKernel, ...): where and when
/// the CPU asked for it. Ranges own GPU ops through their launches.
struct Launch {
  std::uint64_t thread = 0;
  TimeNs start = 0;
  TimeNs end = 0;
  std::uint64_t correlation = kNoCorrelation;
};

/// Where a range came from.
enum class RangeSource : std::uint8_t { Annotation, Nvtx, Roctx, Python };

std::string_view to_string(RangeSource source);

/// A named host-side interval: a PyTorch record_function, an NVTX or ROCTx range, a Python
/// call. `depth` is its nesting level on its thread (0: outermost).
struct Range {
  RangeSource source = RangeSource::Annotation;
  std::uint32_t name = 0;  ///< into KernelTrace::names
  std::uint64_t thread = 0;
  TimeNs start = 0;
  TimeNs end = 0;
  std::uint32_t depth = 0;
};

/// The normalized profile of one rank, whatever format it came from.
struct KernelTrace {
  std::string path;        ///< the file it was read from
  std::string format;      ///< the reader's name, e.g. "kineto", "nsys-sqlite", "rocprofv3-csv"
  std::int64_t rank = -1;  ///< -1: the file does not say
  std::int64_t world_size = -1;
  std::string device_name;  ///< e.g. "NVIDIA A100-SXM4-80GB"; empty if unknown
  NameTable names;
  std::vector<GpuOp> ops;           ///< sorted by (start, end, device, stream)
  std::vector<Launch> launches;     ///< sorted by start
  std::vector<Range> ranges;        ///< sorted by (start, depth)
  std::vector<MemoryEvent> memory;  ///< device memory events, sorted by time; often none
};

}  // namespace perflow::reader
