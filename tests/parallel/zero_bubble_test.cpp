// Zero Bubble schedules (Qi et al., ICLR 2024): zb-h1, zb-h2 and the automatic "zb".
// Closed forms are checked on the ordered simulation with free communication; where the
// paper's formula and the simulation disagree the simulated value is asserted and the
// comment says so.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::parallel {
namespace {

using perflow::testing::order_string;

constexpr TimeNs kUs = 1000;

using perflow::testing::Simulated;

/// F, B, W in microseconds; activation 1, B frees `b_frees` of it.
TaskCosts costs(TimeNs f, TimeNs b, TimeNs w, double b_frees = 0.0) {
  return TaskCosts{f * kUs, b * kUs, w * kUs, 1.0, b_frees};
}

Simulated run(const std::string& schedule, std::uint32_t p, std::uint32_t m, const CostTable& table,
              double memory_limit = 0, TimeNs latency = 0) {
  PipelineSpec spec;
  spec.schedule = schedule;
  spec.stages = p;
  spec.microbatches = m;
  spec.memory_limit = memory_limit;
  Simulated r{build_schedule(spec, table), {}};
  simulator::SimulationOptions options;
  options.p2p_latency = latency;
  r.result = simulator::simulate(r.graph, options);
  return r;
}

Simulated run(const std::string& schedule, std::uint32_t p, std::uint32_t m, TaskCosts c,
              double memory_limit = 0, TimeNs latency = 0) {
  return run(schedule, p, m, CostTable(c), memory_limit, latency);
}

std::string refusal(const PipelineSpec& spec, std::string* field) {
  try {
    (void)plan_schedule(spec, CostTable(costs(1, 1, 1)));
  } catch (const ScheduleError& e) {
    *field = e.field();
    return e.what();
  }
  return "";
}

struct Size {
  std::uint32_t p;
  std::uint32_t m;
};

// ---------------------------------------------------------------------------------- ZB-H1

// Worked by hand from the paper's figure 3: device d warms up with p-d forwards, then runs
// B_i, W_{i-d}, F_{i+p-d}; the d deferred W's end the program.
TEST(ZbH1, ProgramOrderAtFourStages) {
  const Simulated r = run("zb-h1", 4, 6, costs(1, 1, 1));
  EXPECT_EQ(r.order(0),
            "F0.0 F1.0 F2.0 F3.0 B0.0 W0.0 F4.0 B1.0 W1.0 F5.0 B2.0 W2.0 B3.0 W3.0 B4.0 W4.0 "
            "B5.0 W5.0");
  EXPECT_EQ(r.order(1),
            "F0.0 F1.0 F2.0 B0.0 F3.0 B1.0 W0.0 F4.0 B2.0 W1.0 F5.0 B3.0 W2.0 B4.0 W3.0 B5.0 "
            "W4.0 W5.0");
  EXPECT_EQ(r.order(3),
            "F0.0 B0.0 F1.0 B1.0 F2.0 B2.0 F3.0 B3.0 W0.0 F4.0 B4.0 W1.0 F5.0 B5.0 W2.0 W3.0 "
            "W4.0 W5.0");
}

TEST(ZbH1, FewerMicrobatchesThanStages) {
  const Simulated r = run("zb-h1", 4, 2, costs(1, 1, 1));
  EXPECT_EQ(r.order(0), "F0.0 F1.0 B0.0 W0.0 B1.0 W1.0");
  EXPECT_EQ(r.order(2), "F0.0 F1.0 B0.0 B1.0 W0.0 W1.0");
  EXPECT_EQ(r.order(3), "F0.0 B0.0 F1.0 B1.0 W0.0 W1.0");
  for (const auto& d : r.metrics().devices) EXPECT_DOUBLE_EQ(d.peak_memory, 2.0);
}

// Span bubble (p-1-d)(F+B-W) on device d when W <= F (the paper's (p-1)(F+B-W) is device
// 0's). Device 0 ends at m(F+B+W) + (p-1)(F+B-W) and the last device, which starts p-1
// forwards late and has no span bubble, at m(F+B+W) + (p-1)F; the makespan is the later of
// the two (the last device's when B < W, e.g. F=3 B=1 W=2). Peak p activations on every
// device once m >= p (1F1B's device 0).
TEST(ZbH1, ClosedFormWhenWeightGradientIsNotLongerThanForward) {
  const std::array<std::array<TimeNs, 3>, 4> all_costs{
      {{1, 1, 1}, {2, 3, 1}, {2, 2, 2}, {3, 1, 2}}};
  for (const auto& [f, b, w] : all_costs) {
    for (const Size s :
         {Size{2, 4}, Size{4, 4}, Size{4, 8}, Size{5, 12}, Size{8, 16}, Size{8, 40}}) {
      SCOPED_TRACE(::testing::Message()
                   << "p=" << s.p << " m=" << s.m << " F=" << f << " B=" << b << " W=" << w);
      const Simulated r = run("zb-h1", s.p, s.m, costs(f, b, w));
      const simulator::Metrics& mt = r.metrics();
      EXPECT_EQ(mt.makespan, (s.m * (f + b + w) + (s.p - 1) * std::max(f, f + b - w)) * kUs);
      for (std::uint32_t d = 0; d < s.p; ++d) {
        EXPECT_EQ(mt.devices[d].busy, s.m * (f + b + w) * kUs);
        EXPECT_EQ(mt.devices[d].span_bubble(), (s.p - 1 - d) * (f + b - w) * kUs);
        EXPECT_DOUBLE_EQ(mt.devices[d].peak_memory, static_cast<double>(s.p));
      }
    }
  }
}

// The paper's (p-1)(F+B-W) assumes W <= F. When W > F the simulation gives
// (p-1-d) * max(F+B-W, B) on device d: the deferred W's no longer hide the cool-down, and
// e.g. F=B=1, W=2 leaves (p-1) units of bubble on device 0 where the formula says 0.
TEST(ZbH1, SimulatedBubbleWhenWeightGradientIsLongerThanForward) {
  const std::array<std::array<TimeNs, 3>, 5> all_costs{
      {{1, 1, 2}, {2, 1, 3}, {1, 3, 2}, {1, 2, 4}, {3, 1, 4}}};
  for (const auto& [f, b, w] : all_costs) {
    for (const Size s : {Size{4, 8}, Size{5, 12}, Size{6, 6}}) {
      SCOPED_TRACE(::testing::Message()
                   << "p=" << s.p << " m=" << s.m << " F=" << f << " B=" << b << " W=" << w);
      const Simulated r = run("zb-h1", s.p, s.m, costs(f, b, w));
      for (std::uint32_t d = 0; d < s.p; ++d) {
        EXPECT_EQ(r.metrics().devices[d].span_bubble(),
                  (s.p - 1 - d) * std::max(f + b - w, b) * kUs);
      }
    }
  }
  // The fixture's case: p=6, m=6, F=B=1, W=2 -> 5 on device 0, the formula's 0 is not met.
  EXPECT_EQ(run("zb-h1", 6, 6, costs(1, 1, 2)).metrics().devices[0].span_bubble(), 5 * kUs);
}

// At F=B=W, 1F1B idles (p-1)(F+B+W) = 3(p-1) per device between 0 and the makespan, ZB-H1
// (p-1)(F+B-W) = p-1: exactly a third, on every device. The span bubbles are a third too,
// device by device: 1F1B's device d has 3(p-1-d), ZB-H1's p-1-d.
TEST(ZbH1, BubbleIsAThirdOfOneFOneBAtEqualCosts) {
  for (const Size s : {Size{2, 4}, Size{4, 8}, Size{6, 12}, Size{8, 32}}) {
    SCOPED_TRACE(::testing::Message() << "p=" << s.p << " m=" << s.m);
    const Simulated zb = run("zb-h1", s.p, s.m, costs(1, 1, 1));
    const Simulated base = run("1f1b", s.p, s.m, costs(1, 1, 1));
    for (std::uint32_t d = 0; d < s.p; ++d) {
      const TimeNs zb_idle = zb.metrics().makespan - zb.metrics().devices[d].busy;
      const TimeNs base_idle = base.metrics().makespan - base.metrics().devices[d].busy;
      EXPECT_EQ(zb_idle, (s.p - 1) * kUs);
      EXPECT_EQ(base_idle, 3 * zb_idle);
      EXPECT_EQ(base.metrics().devices[d].span_bubble(), 3 * (s.p - 1 - d) * kUs);
      EXPECT_EQ(zb.metrics().devices[d].span_bubble(), (s.p - 1 - d) * kUs);
    }
  }
}

// ---------------------------------------------------------------------------------- ZB-H2

TEST(ZbH2, ProgramOrderAtThreeStages) {
  const Simulated r = run("zb-h2", 3, 6, costs(1, 1, 1));
  EXPECT_EQ(r.order(0),
            "F0.0 F1.0 F2.0 F3.0 F4.0 B0.0 W0.0 F5.0 B1.0 W1.0 B2.0 W2.0 B3.0 W3.0 B4.0 W4.0 "
            "B5.0 W5.0");
  EXPECT_EQ(r.order(1),
            "F0.0 F1.0 F2.0 B0.0 F3.0 B1.0 F4.0 B2.0 W0.0 F5.0 B3.0 W1.0 B4.0 W2.0 B5.0 W3.0 "
            "W4.0 W5.0");
  EXPECT_EQ(r.order(2),
            "F0.0 B0.0 F1.0 B1.0 F2.0 B2.0 F3.0 B3.0 F4.0 B4.0 W0.0 F5.0 B5.0 W1.0 W2.0 W3.0 "
            "W4.0 W5.0");
}

// (p-1-d)(F+B-2W) on device d when W <= F, 2W <= F+B and m >= 2p-1; peak 2p-1 everywhere.
TEST(ZbH2, ClosedForm) {
  const std::array<std::array<TimeNs, 3>, 4> all_costs{
      {{1, 1, 1}, {2, 3, 1}, {2, 2, 1}, {3, 1, 2}}};
  for (const auto& [f, b, w] : all_costs) {
    for (const Size s :
         {Size{2, 3}, Size{3, 5}, Size{4, 7}, Size{4, 12}, Size{6, 11}, Size{8, 32}}) {
      SCOPED_TRACE(::testing::Message()
                   << "p=" << s.p << " m=" << s.m << " F=" << f << " B=" << b << " W=" << w);
      const Simulated r = run("zb-h2", s.p, s.m, costs(f, b, w));
      for (std::uint32_t d = 0; d < s.p; ++d) {
        EXPECT_EQ(r.metrics().devices[d].busy, s.m * (f + b + w) * kUs);
        EXPECT_EQ(r.metrics().devices[d].span_bubble(), (s.p - 1 - d) * (f + b - 2 * w) * kUs);
        EXPECT_DOUBLE_EQ(r.metrics().devices[d].peak_memory, 2.0 * s.p - 1);
      }
    }
  }
}

// At F=B=W the span bubble is 0 on every device from m = 2p-1 on (the brief's "once
// m >= 2p" holds a microbatch earlier); the makespan is then 3m + (p-1): device d still
// starts d forwards late.
TEST(ZbH2, NoSpanBubbleAtEqualCosts) {
  for (const Size s : {Size{2, 3}, Size{4, 7}, Size{4, 8}, Size{5, 9}, Size{8, 15}, Size{8, 64}}) {
    SCOPED_TRACE(::testing::Message() << "p=" << s.p << " m=" << s.m);
    const Simulated r = run("zb-h2", s.p, s.m, costs(1, 1, 1));
    EXPECT_EQ(r.metrics().makespan, (3 * s.m + s.p - 1) * kUs);
    for (const auto& d : r.metrics().devices) EXPECT_EQ(d.span_bubble(), 0);
  }
}

// Fewer than 2p-1 microbatches are not refused (the reference runtime reaches ZB-H2 through
// its automatic scheduler at twice 1F1B's memory, which takes any m): the warm-up is cut to
// m forwards and a bubble remains. Simulated values at p=4, F=B=W.
TEST(ZbH2, FewMicrobatchesDegrade) {
  const Simulated r4 = run("zb-h2", 4, 4, costs(1, 1, 1));
  EXPECT_EQ(r4.metrics().makespan, 16 * kUs);
  const std::array<TimeNs, 4> bubble4{3, 3, 2, 0};
  const std::array<double, 4> peak4{4, 4, 4, 4};
  for (std::uint32_t d = 0; d < 4; ++d) {
    EXPECT_EQ(r4.metrics().devices[d].span_bubble(), bubble4[d] * kUs);
    EXPECT_DOUBLE_EQ(r4.metrics().devices[d].peak_memory, peak4[d]);
  }
  EXPECT_EQ(r4.order(3), "F0.0 B0.0 F1.0 B1.0 F2.0 B2.0 F3.0 B3.0 W0.0 W1.0 W2.0 W3.0");
  const Simulated r6 = run("zb-h2", 4, 6, costs(1, 1, 1));
  EXPECT_EQ(r6.metrics().makespan, 21 * kUs);
  const std::array<TimeNs, 4> bubble6{1, 1, 1, 0};
  for (std::uint32_t d = 0; d < 4; ++d) {
    EXPECT_EQ(r6.metrics().devices[d].span_bubble(), bubble6[d] * kUs);
  }
}

// ------------------------------------------------------------------------- automatic (zb)

// The heuristic is the reference repository's; with free communication it reproduces the
// reference's own orders (the fixture's zb2p p=4 m=12 F=2 B=3 W=1 case, worked by it).
TEST(ZbAuto, ReproducesTheReferenceOrderAtTwiceOneFOneBMemory) {
  const Simulated r = run("zb", 4, 12, costs(2, 3, 1), 8);
  EXPECT_EQ(r.order(0),
            "F0.0 F1.0 F2.0 F3.0 F4.0 F5.0 F6.0 F7.0 B0.0 W0.0 F8.0 B1.0 W1.0 F9.0 B2.0 W2.0 "
            "B3.0 W3.0 B4.0 F10.0 B5.0 F11.0 W4.0 W5.0 B6.0 W6.0 B7.0 W7.0 B8.0 W8.0 B9.0 W9.0 "
            "B10.0 W10.0 B11.0 W11.0");
  EXPECT_EQ(r.order(2),
            "F0.0 F1.0 F2.0 B0.0 F3.0 B1.0 F4.0 B2.0 F5.0 B3.0 F6.0 B4.0 F7.0 B5.0 W0.0 F8.0 "
            "B6.0 W1.0 F9.0 B7.0 W2.0 B8.0 F10.0 W3.0 B9.0 F11.0 W4.0 B10.0 W5.0 W6.0 W7.0 "
            "B11.0 W8.0 W9.0 W10.0 W11.0");
  EXPECT_EQ(r.metrics().makespan, 80 * kUs);
}

// At the default limit (p, 1F1B's memory) and F=B=W the heuristic finds ZB-H1.
TEST(ZbAuto, DefaultLimitIsOneFOneBMemory) {
  const Simulated a = run("zb", 4, 8, costs(1, 1, 1));
  const Simulated h = run("zb-h1", 4, 8, costs(1, 1, 1));
  for (std::uint32_t d = 0; d < 4; ++d) EXPECT_EQ(a.order(d), h.order(d));
}

// Over a grid of sizes, costs, B's freed fraction and limits, every device stays within
// the limit (in F activations) and the schedule is valid (it simulates: no deadlock).
TEST(ZbAuto, RespectsTheMemoryLimit) {
  const std::array<std::array<TimeNs, 3>, 5> all_costs{
      {{1, 1, 1}, {2, 3, 1}, {1, 2, 1}, {3, 2, 1}, {1, 1, 3}}};
  for (const std::uint32_t p : {1u, 2u, 3u, 4u, 7u}) {
    for (const std::uint32_t m : {1u, 2u, 5u, 9u, 20u}) {
      for (const auto& [f, b, w] : all_costs) {
        for (const double b_frees : {0.0, 0.5}) {
          for (const double limit : {1.0, 1.5, 2.0, static_cast<double>(p), 2.0 * p, 3.0 * p}) {
            SCOPED_TRACE(::testing::Message()
                         << "p=" << p << " m=" << m << " F=" << f << " B=" << b << " W=" << w
                         << " b_frees=" << b_frees << " limit=" << limit);
            const Simulated r = run("zb", p, m, costs(f, b, w, b_frees), limit);
            for (const auto& d : r.metrics().devices) {
              EXPECT_LE(d.peak_memory, limit + 1e-9);
              EXPECT_EQ(d.busy, m * (f + b + w) * kUs);
            }
          }
        }
      }
    }
  }
}

// Different costs per stage (a heavier last stage, as with the output layer).
TEST(ZbAuto, PerStageCostsStayWithinTheLimit) {
  CostTable table(costs(1, 1, 1));
  table.set(StageId{3}, 0, costs(2, 4, 2));
  table.set(StageId{0}, 0, costs(2, 1, 1));
  for (const double limit : {1.0, 2.0, 4.0, 8.0}) {
    const Simulated r = run("zb", 4, 16, table, limit);
    for (const auto& d : r.metrics().devices) EXPECT_LE(d.peak_memory, limit);
  }
}

// At the same memory (limit p) the heuristic never finishes after ZB-H1 on this grid of
// uniform costs and free communication. It is not a theorem: the heuristic's choice among
// its eight variants is what makes it hold here (one of them rebuilds ZB-H1's orders when
// W <= F); it is asserted for the grid tested, nothing more.
TEST(ZbAuto, NeverLosesToZbH1AtTheSameMemory) {
  const std::array<std::array<TimeNs, 3>, 7> all_costs{
      {{1, 1, 1}, {2, 3, 1}, {1, 2, 1}, {3, 2, 1}, {1, 1, 2}, {2, 1, 3}, {3, 3, 2}}};
  for (const std::uint32_t p : {1u, 2u, 3u, 4u, 6u, 8u}) {
    for (const std::uint32_t m : {1u, 2u, 3u, 5u, 8u, 13u, 24u}) {
      for (const auto& [f, b, w] : all_costs) {
        SCOPED_TRACE(::testing::Message()
                     << "p=" << p << " m=" << m << " F=" << f << " B=" << b << " W=" << w);
        const TimeNs h1 = run("zb-h1", p, m, costs(f, b, w)).metrics().makespan;
        EXPECT_LE(run("zb", p, m, costs(f, b, w), p).metrics().makespan, h1);
      }
    }
  }
}

// With twice 1F1B's memory at F=B=W it reaches ZB-H2's zero span bubble.
TEST(ZbAuto, TwiceOneFOneBMemoryHasNoSpanBubbleAtEqualCosts) {
  for (const Size s : {Size{3, 6}, Size{4, 8}, Size{4, 16}, Size{6, 24}}) {
    SCOPED_TRACE(::testing::Message() << "p=" << s.p << " m=" << s.m);
    const Simulated r = run("zb", s.p, s.m, costs(1, 1, 1), 2.0 * s.p);
    EXPECT_EQ(r.metrics().makespan, (3 * s.m + s.p - 1) * kUs);
    for (const auto& d : r.metrics().devices) EXPECT_EQ(d.span_bubble(), 0);
  }
}

// ------------------------------------------------------------------------------- refusals

TEST(ZeroBubble, RefusedSizes) {
  std::string field;
  PipelineSpec spec;
  spec.stages = 4;
  spec.microbatches = 8;
  spec.chunks = 2;
  for (const char* name : {"zb-h1", "zb-h2", "zb"}) {
    spec.schedule = name;
    EXPECT_EQ(refusal(spec, &field), std::string(name) + " needs exactly 1 chunk per stage, got 2");
    EXPECT_EQ(field, "chunks");
  }
  spec.chunks = 1;
  spec.schedule = "zb";
  spec.memory_limit = 0.5;
  EXPECT_EQ(refusal(spec, &field),
            "zb needs memory_limit >= 1 (one forward's activation), got 0.5");
  EXPECT_EQ(field, "memory_limit");
  spec.schedule = "zb-h1";
  EXPECT_EQ(refusal(spec, &field),
            "zb-h1 does not take memory_limit (schedules that do: zb, zbv-auto, v-half, v-min)");
  EXPECT_EQ(field, "memory_limit");
}

}  // namespace
}  // namespace perflow::parallel
