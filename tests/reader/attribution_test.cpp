// attribute_ops: launch-time ownership across threads, the innermost rule, inclusive ends,
// the overlap fallback, and a seeded comparison with a brute-force oracle.
#include "perflow/reader/attribution.hpp"

#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "trace_builder.hpp"

namespace perflow::reader {
namespace {

using test::TraceBuilder;

std::uint32_t range_named(const KernelTrace& trace, std::string_view name) {
  for (std::size_t i = 0; i < trace.ranges.size(); ++i) {
    if (trace.names[trace.ranges[i].name] == name) return static_cast<std::uint32_t>(i);
  }
  ADD_FAILURE() << "no range " << name;
  return 0;
}

std::uint32_t op_with(const KernelTrace& trace, std::uint64_t correlation) {
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    if (trace.ops[i].correlation == correlation) return static_cast<std::uint32_t>(i);
  }
  ADD_FAILURE() << "no op " << correlation;
  return 0;
}

TEST(Attribution, LaunchOnAnotherThreadOfTheProcessCounts) {
  TraceBuilder b;
  b.range("## backward ##", /*thread=*/1, 100, 200);
  const auto autograd = b.kernel(/*thread=*/2, 150, 400, 500);  // autograd thread
  const auto later = b.kernel(1, 250, 500, 600);                // after the range
  const KernelTrace trace = b.finish();
  const std::vector<std::uint32_t> selected{range_named(trace, "## backward ##")};
  const Attribution a = attribute_ops(trace, selected);
  EXPECT_EQ(a.method, AttributionMethod::Launch);
  EXPECT_EQ(a.owner[op_with(trace, autograd)], selected[0]);
  EXPECT_EQ(a.owner[op_with(trace, later)], kNoRange);
  ASSERT_EQ(a.ops_of(0).size(), 1u);
  EXPECT_EQ(a.ops_of(0)[0], op_with(trace, autograd));
  EXPECT_EQ(a.ops_outside, 1u);
  EXPECT_EQ(a.ops_without_launch, 0u);
}

TEST(Attribution, InnermostSelectedRangeWinsAndEndsAreInclusive) {
  TraceBuilder b;
  b.range("outer", 1, 0, 1000);
  b.range("inner", 1, 100, 200);
  b.range("ignored", 1, 120, 180);  // not selected: takes nothing away
  const auto in_inner = b.kernel(1, 150, 10, 20);
  const auto at_inner_end = b.kernel(3, 200, 20, 30);
  const auto at_inner_start = b.kernel(3, 100, 30, 40);
  const auto before = b.kernel(1, 50, 40, 50);
  const auto after = b.kernel(1, 300, 50, 60);
  const auto at_outer_end = b.kernel(1, 1000, 60, 70);
  const KernelTrace trace = b.finish();
  const std::uint32_t outer = range_named(trace, "outer");
  const std::uint32_t inner = range_named(trace, "inner");
  const std::vector<std::uint32_t> selected{inner, outer};
  const Attribution a = attribute_ops(trace, selected);
  EXPECT_EQ(a.owner[op_with(trace, in_inner)], inner);
  EXPECT_EQ(a.owner[op_with(trace, at_inner_end)], inner);
  EXPECT_EQ(a.owner[op_with(trace, at_inner_start)], inner);
  EXPECT_EQ(a.owner[op_with(trace, before)], outer);
  EXPECT_EQ(a.owner[op_with(trace, after)], outer);
  EXPECT_EQ(a.owner[op_with(trace, at_outer_end)], outer);
  EXPECT_EQ(a.ops_of(0).size(), 3u);  // positions follow `selected`
  EXPECT_EQ(a.ops_of(1).size(), 3u);
}

TEST(Attribution, SameStartGoesToTheEarlierEnd) {
  TraceBuilder b;
  b.range("long", 1, 100, 900);
  b.range("short", 2, 100, 300);  // another thread, same start
  const auto early = b.kernel(1, 200, 0, 1);
  const auto late = b.kernel(1, 400, 1, 2);
  const KernelTrace trace = b.finish();
  const std::vector<std::uint32_t> selected{range_named(trace, "long"),
                                            range_named(trace, "short")};
  const Attribution a = attribute_ops(trace, selected);
  EXPECT_EQ(a.owner[op_with(trace, early)], range_named(trace, "short"));
  EXPECT_EQ(a.owner[op_with(trace, late)], range_named(trace, "long"));
}

TEST(Attribution, OpsWithoutALaunchAreCounted) {
  TraceBuilder b;
  b.range("r", 1, 0, 100);
  b.kernel(1, 50, 60, 70);
  GpuOp orphan;
  orphan.start = 10;
  orphan.end = 20;
  orphan.correlation = 999;  // no such launch
  b.trace.ops.push_back(orphan);
  GpuOp uncorrelated;
  uncorrelated.start = 30;
  uncorrelated.end = 40;
  b.trace.ops.push_back(uncorrelated);
  const KernelTrace trace = b.finish();
  const std::vector<std::uint32_t> selected{0};
  const Attribution a = attribute_ops(trace, selected);
  EXPECT_EQ(a.ops_without_launch, 2u);
  EXPECT_EQ(a.ops_of(0).size(), 1u);
}

TEST(Attribution, WithoutLaunchesTheMidpointDecides) {
  KernelTrace trace;
  trace.path = "kernels.csv";
  Range r;
  r.start = 100;
  r.end = 200;
  trace.ranges.push_back(r);
  for (const auto& [start, end] : {std::pair<TimeNs, TimeNs>{90, 110},  // midpoint 100: in
                                   {150, 260},                          // midpoint 205: out
                                   {0, 80}}) {
    GpuOp op;
    op.start = start;
    op.end = end;
    trace.ops.push_back(op);
  }
  const std::vector<std::uint32_t> selected{0};
  const Attribution a = attribute_ops(trace, selected);
  EXPECT_EQ(a.method, AttributionMethod::Overlap);
  EXPECT_EQ(a.owner, (std::vector<std::uint32_t>{0, kNoRange, kNoRange}));
  EXPECT_EQ(a.ops_outside, 2u);
  EXPECT_EQ(to_string(a.method), "time overlap");
}

// The documented rule, O(ops x ranges).
std::vector<std::uint32_t> brute_force(const KernelTrace& trace,
                                       const std::vector<std::uint32_t>& selected) {
  std::vector<std::uint32_t> owner(trace.ops.size(), kNoRange);
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    TimeNs t = 0;
    bool found = false;
    for (const Launch& launch : trace.launches) {
      if (launch.correlation == trace.ops[i].correlation && (!found || launch.start < t)) {
        t = launch.start;
        found = true;
      }
    }
    if (!found) continue;
    for (const std::uint32_t r : selected) {
      const Range& x = trace.ranges[r];
      if (x.start > t || t > x.end) continue;
      if (owner[i] == kNoRange) {
        owner[i] = r;
        continue;
      }
      const Range& y = trace.ranges[owner[i]];
      // inner: later start, then earlier end, then deeper, then lower index
      if (std::tuple(y.start, x.end, y.depth, r) < std::tuple(x.start, y.end, x.depth, owner[i])) {
        owner[i] = r;
      }
    }
  }
  return owner;
}

TEST(Attribution, MatchesBruteForceOnRandomTraces) {
  const unsigned seed = 20261122;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 40; ++round) {
    TraceBuilder b;
    std::uniform_int_distribution<TimeNs> time(0, 2000);
    std::uniform_int_distribution<TimeNs> length(0, 400);
    std::uniform_int_distribution<std::uint64_t> thread(1, 3);
    for (int r = 0; r < 30; ++r) {
      const TimeNs start = time(rng);
      b.range("r" + std::to_string(r), thread(rng), start, start + length(rng));
    }
    for (int k = 0; k < 200; ++k) {
      const TimeNs at = time(rng);
      b.kernel(thread(rng), at, at + 10, at + 20);
    }
    const KernelTrace trace = b.finish();
    std::vector<std::uint32_t> selected;
    for (std::uint32_t r = 0; r < trace.ranges.size(); ++r) {
      if (rng() % 3 != 0) selected.push_back(r);
    }
    const Attribution a = attribute_ops(trace, selected);
    ASSERT_EQ(a.owner, brute_force(trace, selected)) << "round " << round;
    std::size_t grouped = 0;
    for (std::size_t s = 0; s < selected.size(); ++s) {
      for (const std::uint32_t op : a.ops_of(s)) {
        EXPECT_EQ(a.owner[op], selected[s]);
        ++grouped;
      }
    }
    EXPECT_EQ(grouped + a.ops_outside + a.ops_without_launch, trace.ops.size());
  }
}

}  // namespace
}  // namespace perflow::reader
