// Interleaved-family schedules: Megatron's interleaved 1F1B (interleaved-1f1b), eager 1F1B
// (eager-1f1b) and PyTorch's looped breadth-first schedule (looped-bfs). Orders at small sizes
// are worked by hand from the rules in each schedule's source file; closed forms are checked
// over grids with seeded random costs (the seed is printed on failure); refused sizes pin
// their error text and field; grids of sizes check that no program deadlocks.
#include <algorithm>
#include <optional>
#include <random>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::parallel {
namespace {

using perflow::testing::order_string;

using perflow::testing::Simulated;

struct Sizes {
  std::uint32_t p = 4;
  std::uint32_t m = 8;
  std::uint32_t v = 1;
  std::uint32_t group = 0;
  bool split = false;
};

PipelineSpec spec_of(const std::string& schedule, Sizes s) {
  PipelineSpec spec;
  spec.schedule = schedule;
  spec.stages = s.p;
  spec.microbatches = s.m;
  spec.chunks = s.v;
  spec.microbatch_group_size = s.group;
  spec.split_backward = s.split;
  return spec;
}

Simulated run(const std::string& schedule, Sizes s, TaskCosts costs, TimeNs latency = 0) {
  Simulated r{build_schedule(spec_of(schedule, s), CostTable(costs)), {}};
  simulator::SimulationOptions options;
  options.p2p_latency = latency;
  r.result = simulator::simulate(r.graph, options);
  return r;
}

/// F = B = W = 1us, one unit of activation per F, freed by the backward.
constexpr TaskCosts kUnit{1000, 1000, 1000, 1.0, 0.0};

/// The ScheduleError a spec is refused with, or nullopt if it builds.
std::optional<ScheduleError> refusal(const std::string& schedule, Sizes s) {
  try {
    (void)plan_schedule(spec_of(schedule, s), CostTable(kUnit));
  } catch (const ScheduleError& e) {
    return e;
  }
  return std::nullopt;
}

void expect_refused(const std::string& schedule, Sizes s, const std::string& field,
                    const std::string& message) {
  const std::optional<ScheduleError> e = refusal(schedule, s);
  ASSERT_TRUE(e.has_value()) << schedule << " accepted p=" << s.p << " m=" << s.m;
  EXPECT_EQ(e->field(), field);
  EXPECT_EQ(std::string(e->what()), message);
}

// ---------------------------------------------------------------------------------------
// interleaved-1f1b

// p=2, m=4, v=2, group 2. Visit table (microbatch.chunk): 0.0 1.0 0.1 1.1 2.0 3.0 2.1 3.1;
// backward k mirrors the chunk of entry k. Device 0 warms up 2(p-1) + (v-1)*2 = 4 forwards,
// device 1 warms up 2.
TEST(Interleaved1F1B, MegatronProgramOrderByHand) {
  const Simulated r = run("interleaved-1f1b", {.p = 2, .m = 4, .v = 2}, kUnit);
  EXPECT_EQ(r.order(0),
            "F0.0 F1.0 F0.1 F1.1 F2.0 BW0.1 F3.0 BW1.1 F2.1 BW0.0 F3.1 BW1.0 BW2.1 BW3.1 BW2.0 "
            "BW3.0");
  EXPECT_EQ(r.order(1),
            "F0.0 F1.0 F0.1 BW0.1 F1.1 BW1.1 F2.0 BW0.0 F3.0 BW1.0 F2.1 BW2.1 F3.1 BW3.1 BW2.0 "
            "BW3.0");
  // Closed form (m*v + p - 1)(F+B+W) = 9 * 3us; peaks 5 and 3 (warm-up + 1).
  EXPECT_EQ(r.makespan(), 27'000);
  EXPECT_EQ(r.peak(0), 5.0);
  EXPECT_EQ(r.peak(1), 3.0);
}

// p=2, m=5, v=2, group 3: groups {0,1,2} and {3,4} (remainder 2 >= p). Table: 0.0 1.0 2.0
// 0.1 1.1 2.1 3.0 4.0 3.1 4.1. Warm-ups: 2 + 3 = 5 on device 0, 3 on device 1.
TEST(Interleaved1F1B, MicrobatchGroupsByHand) {
  const Simulated r = run("interleaved-1f1b", {.p = 2, .m = 5, .v = 2, .group = 3}, kUnit);
  EXPECT_EQ(r.order(0),
            "F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 BW0.1 F3.0 BW1.1 F4.0 BW2.1 F3.1 BW0.0 F4.1 BW1.0 "
            "BW2.0 BW3.1 BW4.1 BW3.0 BW4.0");
  EXPECT_EQ(r.order(1),
            "F0.0 F1.0 F2.0 F0.1 BW0.1 F1.1 BW1.1 F2.1 BW2.1 F3.0 BW0.0 F4.0 BW1.0 F3.1 BW2.0 "
            "F4.1 BW3.1 BW4.1 BW3.0 BW4.0");
  EXPECT_EQ(r.peak(0), 6.0);
  EXPECT_EQ(r.peak(1), 4.0);
}

// All microbatches fit in the warm-up (p=3, m=3, v=2: device 0 wants 4 + 3 = 7 > 6): the
// device runs every forward, then every backward, and holds all m*v activations.
TEST(Interleaved1F1B, WarmUpCappedAtAllForwards) {
  const Simulated r = run("interleaved-1f1b", {.p = 3, .m = 3, .v = 2}, kUnit);
  EXPECT_EQ(r.order(0), "F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 BW0.1 BW1.1 BW2.1 BW0.0 BW1.0 BW2.0");
  EXPECT_EQ(r.peak(0), 6.0);
  EXPECT_EQ(r.peak(1), 6.0);  // 2 + 3 = 5 warm-up forwards, then one more before a backward
  EXPECT_EQ(r.peak(2), 4.0);
}

TEST(Interleaved1F1B, SplitBackwardRunsBThenW) {
  const Simulated r = run("interleaved-1f1b", {.p = 2, .m = 2, .v = 2, .split = true}, kUnit);
  EXPECT_EQ(r.order(1), "F0.0 F1.0 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 B0.0 W0.0 B1.0 W1.0");
}

// Closed form from the fixture README (no latency, group p, m a multiple of p, fused BW):
// makespan (m*v + p - 1)(F+B+W) with per-chunk costs; device d peaks at
// min(2(p-d-1) + (v-1)p + 1, m*v) activations and is busy m*v*(F+B+W).
TEST(Interleaved1F1B, ClosedFormOverAGrid) {
  const std::uint32_t seed = 20261122;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<TimeNs> cost(1, 5000);
  for (std::uint32_t p = 1; p <= 6; ++p) {
    for (std::uint32_t v = 2; v <= 4; ++v) {
      for (std::uint32_t k = 1; k <= 4; ++k) {
        const std::uint32_t m = k * p;
        const TaskCosts c{cost(rng), cost(rng), cost(rng), 2.0, 0.0};
        SCOPED_TRACE(fmt::format("seed={} p={} m={} v={} F={} B={} W={}", seed, p, m, v, c.forward,
                                 c.backward, c.weight));
        const Simulated r = run("interleaved-1f1b", {.p = p, .m = m, .v = v}, c);
        const TimeNs per_step = c.forward + c.backward + c.weight;
        EXPECT_EQ(r.makespan(), (m * v + p - 1) * per_step);
        for (std::uint32_t d = 0; d < p; ++d) {
          const std::uint32_t held = std::min(2 * (p - d - 1) + (v - 1) * p + 1, m * v);
          EXPECT_EQ(r.peak(d), 2.0 * held) << "device " << d;
          EXPECT_EQ(r.result.metrics.devices[d].busy, m * v * per_step) << "device " << d;
        }
      }
    }
  }
}

TEST(Interleaved1F1B, RefusedSizesNameTheFieldAndRule) {
  const std::string s = "interleaved-1f1b";
  expect_refused(s, {.p = 4, .m = 8, .v = 1}, "chunks",
                 "interleaved-1f1b needs at least 2 chunks per stage, got 1");
  // Megatron: the group size must lie in [p, m].
  expect_refused(s, {.p = 4, .m = 8, .v = 2, .group = 3}, "microbatch_group_size",
                 "interleaved-1f1b needs microbatch_group_size >= stages (4), got 3");
  expect_refused(s, {.p = 4, .m = 8, .v = 2, .group = 9}, "microbatch_group_size",
                 "interleaved-1f1b needs microbatch_group_size <= microbatches (8), got 9");
  // With the default group (p), fewer microbatches than stages is that same rule.
  expect_refused(s, {.p = 4, .m = 3, .v = 2}, "microbatches",
                 "interleaved-1f1b needs at least as many microbatches as stages (4), got 3");
  // Megatron: the last group may not be a partial group of fewer than p microbatches.
  expect_refused(s, {.p = 4, .m = 10, .v = 2}, "microbatches",
                 "interleaved-1f1b needs microbatches to be a multiple of stages (4), the "
                 "default microbatch_group_size, got 10");
  expect_refused(s, {.p = 3, .m = 7, .v = 2, .group = 5}, "microbatches",
                 "interleaved-1f1b needs microbatches to be a multiple of "
                 "microbatch_group_size (5) or to leave a remainder of at least stages (3), "
                 "got 7 (remainder 2)");
  // ... and the sizes next to those are accepted.
  EXPECT_FALSE(refusal(s, {.p = 3, .m = 7, .v = 2, .group = 4}).has_value());  // remainder 3
  EXPECT_FALSE(refusal(s, {.p = 4, .m = 4, .v = 2}).has_value());
  EXPECT_FALSE(refusal(s, {.p = 4, .m = 8, .v = 2, .group = 8}).has_value());
}

// Every accepted (p, m, v, group) builds without deadlock (build_pipeline_graph throws
// CycleError otherwise), runs each task once, and peaks at warm-up + 1; every refused one is
// refused exactly by Megatron's two rules.
TEST(Interleaved1F1B, NoDeadlockOverAGrid) {
  for (std::uint32_t p = 1; p <= 6; ++p) {
    for (std::uint32_t v = 2; v <= 4; ++v) {
      for (std::uint32_t m = 1; m <= 13; ++m) {
        for (std::uint32_t group = 0; group <= m + 1; ++group) {
          SCOPED_TRACE(fmt::format("p={} m={} v={} group={}", p, m, v, group));
          const Sizes sizes{.p = p, .m = m, .v = v, .group = group};
          const std::uint32_t g = group == 0 ? p : group;
          const bool megatron_accepts = g >= p && g <= m && (m % g == 0 || m % g >= p);
          if (!megatron_accepts) {
            EXPECT_TRUE(refusal("interleaved-1f1b", sizes).has_value());
            continue;
          }
          const Simulated r = run("interleaved-1f1b", sizes, kUnit, 300);
          for (std::uint32_t d = 0; d < p; ++d) {
            EXPECT_EQ(r.result.metrics.devices[d].tasks, std::size_t{m} * v * 2);
            const std::uint32_t held = std::min(2 * (p - d - 1) + (v - 1) * g + 1, m * v);
            EXPECT_EQ(r.peak(d), static_cast<double>(held)) << "device " << d;
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// eager-1f1b

// p=3, m=6: device d runs 2(p-d-1) warm-up forwards (4, 2, 0), then forward/backward pairs,
// then the remaining backwards; device 2 is plain 1F1B.
TEST(Eager1F1B, ProgramOrderByHand) {
  const Simulated r = run("eager-1f1b", {.p = 3, .m = 6}, kUnit);
  EXPECT_EQ(r.order(0), "F0.0 F1.0 F2.0 F3.0 F4.0 BW0.0 F5.0 BW1.0 BW2.0 BW3.0 BW4.0 BW5.0");
  EXPECT_EQ(r.order(1), "F0.0 F1.0 F2.0 BW0.0 F3.0 BW1.0 F4.0 BW2.0 F5.0 BW3.0 BW4.0 BW5.0");
  EXPECT_EQ(r.order(2), "F0.0 BW0.0 F1.0 BW1.0 F2.0 BW2.0 F3.0 BW3.0 F4.0 BW4.0 F5.0 BW5.0");
  // Peak activations min(2(p-d)-1, m): 5, 3, 1 (1F1B: 3, 2, 1).
  EXPECT_EQ(r.peak(0), 5.0);
  EXPECT_EQ(r.peak(1), 3.0);
  EXPECT_EQ(r.peak(2), 1.0);
}

TEST(Eager1F1B, WarmUpCappedByMicrobatches) {
  const Simulated r = run("eager-1f1b", {.p = 3, .m = 2}, kUnit);
  EXPECT_EQ(r.order(0), "F0.0 F1.0 BW0.0 BW1.0");
  EXPECT_EQ(r.order(1), "F0.0 F1.0 BW0.0 BW1.0");
  EXPECT_EQ(r.order(2), "F0.0 BW0.0 F1.0 BW1.0");
  EXPECT_EQ(r.peak(0), 2.0);
}

// With point-to-point latency the eager warm-up pays off. p=2, m=4, F=B=W=1, C=1, by hand:
// 1F1B   dev0 F0[0,1] F1[1,2] BW0[6,8] F2[8,9] BW1[9,11] F3[11,12] BW2[14,16] BW3[17,19]
//        dev1 F0[2,3] BW0[3,5] F1[5,6] BW1[6,8] F2[10,11] BW2[11,13] F3[13,14] BW3[14,16]
// eager  dev0 F0[0,1] F1[1,2] F2[2,3] BW0[6,8] F3[8,9] BW1[9,11] BW2[12,14] BW3[15,17]
//        dev1 F0[2,3] BW0[3,5] F1[5,6] BW1[6,8] F2[8,9] BW2[9,11] F3[11,12] BW3[12,14]
TEST(Eager1F1B, OverlapsLatencyBetterThan1F1B) {
  const Simulated eager = run("eager-1f1b", {.p = 2, .m = 4}, kUnit, 1000);
  const Simulated plain = run("1f1b", {.p = 2, .m = 4}, kUnit, 1000);
  EXPECT_EQ(eager.makespan(), 17'000);
  EXPECT_EQ(plain.makespan(), 19'000);
  // Without latency both take (m + p - 1)(F+B+W).
  EXPECT_EQ(run("eager-1f1b", {.p = 2, .m = 4}, kUnit).makespan(), 15'000);
}

TEST(Eager1F1B, RefusesChunks) {
  expect_refused("eager-1f1b", {.p = 4, .m = 8, .v = 2}, "chunks",
                 "eager-1f1b needs exactly 1 chunk per stage, got 2");
  expect_refused("eager-1f1b", {.p = 4, .m = 0}, "microbatches",
                 "eager-1f1b needs at least 1 microbatch, got 0");
}

// Over a grid with seeded random costs and no latency: no deadlock, the 1F1B makespan
// (m + p - 1)(F+B+W), and device d peaks at min(2(p-d)-1, m) activations.
TEST(Eager1F1B, ClosedFormAndNoDeadlockOverAGrid) {
  const std::uint32_t seed = 7;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<TimeNs> cost(1, 5000);
  for (std::uint32_t p = 1; p <= 8; ++p) {
    for (std::uint32_t m = 1; m <= 20; ++m) {
      const TaskCosts c{cost(rng), cost(rng), cost(rng), 1.0, 0.0};
      SCOPED_TRACE(fmt::format("seed={} p={} m={} F={} B={} W={}", seed, p, m, c.forward,
                               c.backward, c.weight));
      const Simulated r = run("eager-1f1b", {.p = p, .m = m}, c);
      EXPECT_EQ(r.makespan(), (m + p - 1) * (c.forward + c.backward + c.weight));
      for (std::uint32_t d = 0; d < p; ++d) {
        EXPECT_EQ(r.peak(d), static_cast<double>(std::min(2 * (p - d) - 1, m))) << "device " << d;
      }
      // With latency it still runs (the graph would throw CycleError on a deadlock).
      EXPECT_NO_THROW((void)run("eager-1f1b", {.p = p, .m = m, .split = m % 2 == 0}, c, 700));
    }
  }
}

// ---------------------------------------------------------------------------------------
// looped-bfs

// p=2, m=2, v=2 (positions: chunk c on device d is 2c+d), F=B=W=1, by hand:
// dev0 F0.0[0,1] F1.0[1,2] F0.1[2,3] F1.1[3,4] BW1.1[7,9] BW0.1[9,11] BW1.0[11,13] BW0.0[13,15]
// dev1 F0.0[1,2] F1.0[2,3] F0.1[3,4] F1.1[4,5] BW1.1[5,7] BW0.1[7,9] BW1.0[9,11] BW0.0[11,13]
TEST(LoopedBFS, ProgramOrderAndTimelineByHand) {
  const Simulated r = run("looped-bfs", {.p = 2, .m = 2, .v = 2}, kUnit);
  for (std::uint32_t d = 0; d < 2; ++d) {
    EXPECT_EQ(r.order(d), "F0.0 F1.0 F0.1 F1.1 BW1.1 BW0.1 BW1.0 BW0.0");
    EXPECT_EQ(r.peak(d), 4.0);
  }
  EXPECT_EQ(r.makespan(), 15'000);
  EXPECT_EQ(r.result.metrics.devices[0].first_start, 0);
  EXPECT_EQ(r.result.metrics.devices[1].last_finish, 13'000);
}

TEST(LoopedBFS, OneChunkIsGPipeWithBackwardsReversed) {
  const Simulated r = run("looped-bfs", {.p = 3, .m = 3, .v = 1}, kUnit);
  EXPECT_EQ(r.order(0), "F0.0 F1.0 F2.0 BW2.0 BW1.0 BW0.0");
  EXPECT_EQ(r.makespan(), (3 + 3 - 1) * 3000);
}

TEST(LoopedBFS, RefusesZeroChunks) {
  expect_refused("looped-bfs", {.p = 4, .m = 8, .v = 0}, "chunks",
                 "looped-bfs needs at least 1 chunk, got 0");
  expect_refused("looped-bfs", {.p = 4, .m = 8, .v = 2, .group = 4}, "microbatch_group_size",
                 "looped-bfs does not take microbatch_group_size (schedules that do: "
                 "interleaved-1f1b)");
}

// Over a grid with seeded random costs and no latency: no deadlock; every device holds all
// m*v activations; makespan (v*max(m,p) + min(m,p) - 1)(F + B + W): a microbatch crosses
// the p devices once per chunk, and with m < p device 0 waits for microbatch 0 to come back
// round before starting the next chunk (the same in the backward phase).
TEST(LoopedBFS, ClosedFormAndNoDeadlockOverAGrid) {
  const std::uint32_t seed = 11;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<TimeNs> cost(1, 5000);
  for (std::uint32_t p = 1; p <= 6; ++p) {
    for (std::uint32_t v = 1; v <= 4; ++v) {
      for (std::uint32_t m = 1; m <= 9; ++m) {
        const TaskCosts c{cost(rng), cost(rng), cost(rng), 1.0, 0.0};
        SCOPED_TRACE(fmt::format("seed={} p={} m={} v={} F={} B={} W={}", seed, p, m, v, c.forward,
                                 c.backward, c.weight));
        const Simulated r = run("looped-bfs", {.p = p, .m = m, .v = v}, c);
        const TimeNs steps = v * std::max(m, p) + std::min(m, p) - 1;
        EXPECT_EQ(r.makespan(), steps * (c.forward + c.backward + c.weight));
        for (std::uint32_t d = 0; d < p; ++d) {
          EXPECT_EQ(r.peak(d), static_cast<double>(m * v)) << "device " << d;
        }
        EXPECT_NO_THROW((void)run("looped-bfs", {.p = p, .m = m, .v = v, .split = true}, c, 700));
      }
    }
  }
}

}  // namespace
}  // namespace perflow::parallel
