// GPU ops to ranges by launch time (FORMATS.md sections 1.3 and 5): sort the query points,
// then sweep them against the ranges in start order with a heap of the open ranges.
#include "perflow/reader/attribution.hpp"

#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>
#include <utility>

#include "perflow/core/error.hpp"

namespace perflow::reader {

std::string_view to_string(AttributionMethod method) {
  return method == AttributionMethod::Launch ? "launch" : "time overlap";
}

namespace {

constexpr TimeNs kNoPoint = std::numeric_limits<TimeNs>::min();

// Per op, the time that decides its range: its launch's start, or its midpoint.
std::vector<TimeNs> query_points(const KernelTrace& trace, AttributionMethod method,
                                 std::size_t& without_launch) {
  std::vector<TimeNs> points(trace.ops.size(), kNoPoint);
  if (method == AttributionMethod::Overlap) {
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
      const GpuOp& op = trace.ops[i];
      points[i] = op.start + (op.end - op.start) / 2;
    }
    return points;
  }
  // (correlation, start), the first launch of a correlation id kept.
  std::vector<std::pair<std::uint64_t, TimeNs>> by_correlation;
  by_correlation.reserve(trace.launches.size());
  for (const Launch& launch : trace.launches) {
    if (launch.correlation != kNoCorrelation) {
      by_correlation.emplace_back(launch.correlation, launch.start);
    }
  }
  std::sort(by_correlation.begin(), by_correlation.end());
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const std::uint64_t correlation = trace.ops[i].correlation;
    const auto it = std::lower_bound(by_correlation.begin(), by_correlation.end(), correlation,
                                     [](const std::pair<std::uint64_t, TimeNs>& entry,
                                        std::uint64_t c) { return entry.first < c; });
    if (correlation == kNoCorrelation || it == by_correlation.end() || it->first != correlation) {
      ++without_launch;
      continue;
    }
    points[i] = it->second;
  }
  return points;
}

}  // namespace

Attribution attribute_ops(const KernelTrace& trace, std::span<const std::uint32_t> selected) {
  if (trace.ops.size() >= kNoRange || trace.ranges.size() >= kNoRange) {
    throw Error(trace.path + ": more than 2^32 GPU ops or ranges in one trace");
  }
  Attribution out;
  out.method = trace.launches.empty() ? AttributionMethod::Overlap : AttributionMethod::Launch;
  const std::vector<TimeNs> points = query_points(trace, out.method, out.ops_without_launch);

  std::vector<std::uint32_t> queries;  // ops with a point, by (point, op)
  queries.reserve(trace.ops.size());
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    if (points[i] != kNoPoint) queries.push_back(static_cast<std::uint32_t>(i));
  }
  std::sort(queries.begin(), queries.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(points[a], a) < std::tie(points[b], b);
  });

  // Selected ranges by start; the heap's top is the innermost open range.
  std::vector<std::uint32_t> by_start(selected.begin(), selected.end());
  std::sort(by_start.begin(), by_start.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(trace.ranges[a].start, a) < std::tie(trace.ranges[b].start, b);
  });
  const auto outer = [&](std::uint32_t a, std::uint32_t b) {  // true if a is less inner
    const Range& x = trace.ranges[a];
    const Range& y = trace.ranges[b];
    return std::tuple(x.start, y.end, x.depth, b) < std::tuple(y.start, x.end, y.depth, a);
  };
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, decltype(outer)> open(outer);

  out.owner.assign(trace.ops.size(), kNoRange);
  std::size_t next = 0;
  for (const std::uint32_t op : queries) {
    const TimeNs t = points[op];
    while (next < by_start.size() && trace.ranges[by_start[next]].start <= t) {
      open.push(by_start[next++]);
    }
    // Queries come in time order, so a range that ended before t is done for good; one
    // that ended but is not on top is dropped when it gets there.
    while (!open.empty() && trace.ranges[open.top()].end < t) open.pop();
    if (open.empty()) {
      ++out.ops_outside;
    } else {
      out.owner[op] = open.top();
    }
  }

  // Group the ops by their selected range (counting sort keeps op order within a range).
  std::vector<std::uint32_t> position(trace.ranges.size(), kNoRange);
  for (std::size_t i = 0; i < selected.size(); ++i) {
    position[selected[i]] = static_cast<std::uint32_t>(i);
  }
  out.first.assign(selected.size() + 1, 0);
  for (const std::uint32_t owner : out.owner) {
    if (owner != kNoRange) ++out.first[position[owner] + 1];
  }
  for (std::size_t i = 0; i < selected.size(); ++i) out.first[i + 1] += out.first[i];
  out.ops.resize(out.first.back());
  std::vector<std::uint32_t> fill(out.first.begin(), out.first.end() - 1);
  for (std::size_t op = 0; op < out.owner.size(); ++op) {
    if (out.owner[op] != kNoRange) {
      out.ops[fill[position[out.owner[op]]]++] = static_cast<std::uint32_t>(op);
    }
  }
  return out;
}

}  // namespace perflow::reader
