#pragma once
// Hand-built KernelTraces for the attribution and cost-extraction tests: ranges, kernels and
// their launches, sorted and nested as a reader leaves them.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "detail/trace_finish.hpp"
#include "perflow/reader/kernel_trace.hpp"

namespace perflow::reader::test {

struct TraceBuilder {
  KernelTrace trace;
  std::uint64_t next_correlation = 1;

  explicit TraceBuilder(std::string path = "test.json", std::int64_t rank = -1) {
    trace.path = std::move(path);
    trace.format = "test";
    trace.rank = rank;
  }

  void range(std::string_view name, std::uint64_t thread, TimeNs start, TimeNs end) {
    Range r;
    r.name = trace.names.intern(name);
    r.thread = thread;
    r.start = start;
    r.end = end;
    trace.ranges.push_back(r);
  }
  /// A GPU op over [start, end] launched on `thread` at `launch`; returns its correlation.
  std::uint64_t kernel(std::uint64_t thread, TimeNs launch, TimeNs start, TimeNs end,
                       std::string_view name = "gemm", std::uint64_t stream = 7,
                       GpuOpKind kind = GpuOpKind::Kernel) {
    const std::uint64_t correlation = next_correlation++;
    trace.launches.push_back(Launch{thread, launch, launch + 1, correlation});
    GpuOp op;
    op.kind = kind;
    op.stream = stream;
    op.start = start;
    op.end = end;
    op.correlation = correlation;
    op.name = trace.names.intern(name);
    trace.ops.push_back(op);
    return correlation;
  }
  KernelTrace finish() {
    detail::assign_nesting_depths(trace.ranges);
    detail::finish_trace(trace);
    return trace;
  }
};

}  // namespace perflow::reader::test
