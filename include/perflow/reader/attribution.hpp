#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "perflow/reader/kernel_trace.hpp"

namespace perflow::reader {

/// How GPU ops were tied to ranges.
enum class AttributionMethod : std::uint8_t {
  /// By the op's launch: the op's correlation id finds its launch in KernelTrace::launches,
  /// and the range that contains the launch's start owns the op.
  Launch,
  /// The trace has no launches at all (rocprof kernel CSV without the HIP API trace, nsys
  /// CSV): the range that contains the op's midpoint owns it. Launches are asynchronous, so
  /// this is only as good as the host and the GPU staying in step.
  Overlap,
};

/// "launch", "time overlap".
std::string_view to_string(AttributionMethod method);

inline constexpr std::uint32_t kNoRange = ~std::uint32_t{0};

/// Which GPU ops each selected range owns. Every op has at most one owner.
struct Attribution {
  AttributionMethod method = AttributionMethod::Launch;
  /// Per op (index into KernelTrace::ops): the owning range's index into
  /// KernelTrace::ranges, or kNoRange.
  std::vector<std::uint32_t> owner;
  /// Per selected range, in the order they were given: its ops (indices into
  /// KernelTrace::ops, ascending, so by start time) are ops[first[i] .. first[i + 1]).
  std::vector<std::uint32_t> first;
  std::vector<std::uint32_t> ops;
  /// Launch method: ops whose correlation id matches no launch (or that have none).
  std::size_t ops_without_launch = 0;
  /// Ops that have a launch (or, for Overlap, a midpoint) inside no selected range.
  std::size_t ops_outside = 0;

  [[nodiscard]] std::span<const std::uint32_t> ops_of(std::size_t selected) const {
    return std::span<const std::uint32_t>(ops).subspan(first[selected],
                                                       first[selected + 1] - first[selected]);
  }
};

/// Attributes the trace's GPU ops to the `selected` ranges (indices into trace.ranges, e.g.
/// the ones a marker classified).
///
/// Rule: an op belongs to a selected range when its launch starts within the range's
/// [start, end] (inclusive) on ANY thread of the trace (backward kernels are launched from
/// autograd threads, not the thread that opened the range; a KernelTrace is one process,
/// so this is "the same process"). When several selected ranges contain the point, the
/// innermost wins: the latest start, then the earliest end, then the greater depth, then
/// the lower range index. Ranges that are not selected (ProfilerStep#, cpu ops) never
/// take ops away. Without any launch in the trace, the op's midpoint is the point instead
/// (method Overlap).
///
/// One sort and one sweep: O((ops + launches + ranges) log), no ops x ranges loop.
Attribution attribute_ops(const KernelTrace& trace, std::span<const std::uint32_t> selected);

}  // namespace perflow::reader
