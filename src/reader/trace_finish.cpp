#include "detail/trace_finish.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

namespace perflow::reader::detail {

void assign_nesting_depths(std::span<Range> ranges) {
  std::vector<std::size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Range& x = ranges[a];
    const Range& y = ranges[b];
    return std::tuple(x.thread, x.start, y.end) < std::tuple(y.thread, y.start, x.end);
  });
  std::vector<TimeNs> open_ends;
  for (std::size_t i = 0; i < order.size(); ++i) {
    Range& range = ranges[order[i]];
    if (i > 0 && ranges[order[i - 1]].thread != range.thread) open_ends.clear();
    while (!open_ends.empty() && open_ends.back() <= range.start) open_ends.pop_back();
    range.depth = static_cast<std::uint32_t>(open_ends.size());
    open_ends.push_back(range.end);
  }
}

void finish_trace(KernelTrace& trace) {
  std::stable_sort(trace.ops.begin(), trace.ops.end(), [](const GpuOp& a, const GpuOp& b) {
    return std::tuple(a.start, a.end, a.device, a.stream, a.correlation, a.name, a.kind) <
           std::tuple(b.start, b.end, b.device, b.stream, b.correlation, b.name, b.kind);
  });
  std::stable_sort(trace.launches.begin(), trace.launches.end(),
                   [](const Launch& a, const Launch& b) {
                     return std::tuple(a.start, a.end, a.thread, a.correlation) <
                            std::tuple(b.start, b.end, b.thread, b.correlation);
                   });
  std::stable_sort(
      trace.memory.begin(), trace.memory.end(), [](const MemoryEvent& a, const MemoryEvent& b) {
        return std::tuple(a.time, a.device, a.bytes) < std::tuple(b.time, b.device, b.bytes);
      });
  std::stable_sort(trace.ranges.begin(), trace.ranges.end(), [](const Range& a, const Range& b) {
    return std::tuple(a.start, a.depth, b.end, a.thread, a.name) <
           std::tuple(b.start, b.depth, a.end, b.thread, b.name);
  });
}

}  // namespace perflow::reader::detail
