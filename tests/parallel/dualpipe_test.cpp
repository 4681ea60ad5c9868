// DualPipe and DualPipeV (DeepSeek-V3 Technical Report; github.com/deepseek-ai/DualPipe,
// dualpipe/dualpipe.py and dualpipe/dualpipev.py). Program orders worked by hand from the
// reference's eight steps (see the comments at the top of src/parallel/schedules/dualpipe.cpp
// and dualpipev.cpp), timelines worked by hand at the smallest sizes, closed forms checked
// over grids, no deadlock over a grid of valid sizes with random costs, refused sizes with
// their exact error text.
//
// Notation: n = p/2 for DualPipe (each device is the r-th device of one half, r = min(d,
// p-1-d)), n = p for DualPipeV (r = d); each device runs every one of the m microbatches
// once (DualPipe) or twice, once per chunk (DualPipeV), so its busy time is m(F+B+W) or
// 2m(F+B+W).
#include <algorithm>
#include <random>
#include <string>
#include <vector>

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

Simulated run(const std::string& schedule, std::uint32_t p, std::uint32_t m, TaskCosts costs,
              TimeNs latency = 0, bool split = false) {
  PipelineSpec spec;
  spec.schedule = schedule;
  spec.stages = p;
  spec.microbatches = m;
  spec.chunks = 2;
  spec.split_backward = split;
  Simulated r{build_schedule(spec, CostTable(costs)), {}};
  simulator::SimulationOptions options;
  options.p2p_latency = latency;
  r.result = simulator::simulate(r.graph, options);
  return r;
}

std::vector<TimeNs> starts(const Simulated& r, std::uint32_t d) {
  std::vector<TimeNs> out;
  for (const TaskId t : r.result.trace.events(DeviceId{d}))
    out.push_back(r.result.trace.start_of(t));
  return out;
}

std::size_t count_kind(const Simulated& r, std::uint32_t d, TaskKind kind) {
  const auto events = r.result.trace.events(DeviceId{d});
  return static_cast<std::size_t>(std::count_if(events.begin(), events.end(),
                                                [&](TaskId t) { return r.graph.kind(t) == kind; }));
}

// F = B = W = 1 (1000 ns), one activation per F, B frees nothing (W or BW frees it all).
const TaskCosts kUnit{1000, 1000, 1000, 1.0, 0.0};

std::string refusal(const std::string& schedule, std::uint32_t p, std::uint32_t m,
                    std::uint32_t chunks, std::string* field) {
  PipelineSpec spec;
  spec.schedule = schedule;
  spec.stages = p;
  spec.microbatches = m;
  spec.chunks = chunks;
  try {
    (void)build_schedule(spec, CostTable(kUnit));
  } catch (const ScheduleError& e) {
    *field = e.field();
    return e.what();
  }
  return "(accepted)";
}

// p = 2, m = 4: n = 1, both devices have r = 0, so steps 1, 3, 5 and 7 are empty. Device 0's
// near direction is chunk 0 (microbatches 0, 1), its far one chunk 1 (2, 3):
//   step 2: F0.0 F2.1; step 4 (h-p+r+1 = 1 pair of pairs): F1.0 BW2.1, F3.1 BW0.0;
//   step 6 (r = 0 is even: deferral starts at the near backward): BW3.1 B1.0; step 8: W1.0.
// Device 1 is the mirror image. Timeline (F = B = W = 1, BW = 2): both devices run three
// forwards in [0, 3) (each F of the far direction waits 1 for its neighbour's); the last
// position's BWs (BW2.1 on 0, BW0.0 on 1) run in [3, 5); F3.1 / F1.0 in [5, 6); BW0.0
// (after device 1's) in [6, 8), BW3.1 in [8, 10); B1.0 then waits for BW1.0 on device 1
// (ends at 10): [10, 11), W1.0 [11, 12). Makespan 12 = m(F+B+W): no bubble at all for p = 2.
TEST(DualPipe, TwoStagesWorkedByHand) {
  const Simulated r = run("dualpipe", 2, 4, kUnit);
  EXPECT_EQ(order_string(r.graph, r.result.trace, 0),
            "F0.0 F2.1 F1.0 BW2.1 F3.1 BW0.0 BW3.1 B1.0 W1.0");
  EXPECT_EQ(order_string(r.graph, r.result.trace, 1),
            "F2.1 F0.0 F3.1 BW0.0 F1.0 BW2.1 BW1.0 B3.1 W3.1");
  EXPECT_EQ(starts(r, 0),
            (std::vector<TimeNs>{0, 1000, 2000, 3000, 5000, 6000, 8000, 10000, 11000}));
  EXPECT_EQ(r.result.metrics.makespan, 12000);
  for (std::uint32_t d = 0; d < 2; ++d) {
    EXPECT_EQ(r.result.metrics.devices[d].busy, 12000);
    EXPECT_EQ(r.result.metrics.devices[d].peak_memory, 3.0);  // p + 1
  }
}

// p = 4, m = 8, device 1 (r = 1, odd): steps 1, 3, 5, 7 are empty (n-r-1 = 0); step 2 runs
// two near/far forward pairs, step 4 two pairs of overlapped pairs (h-p+r+1 = 2); step 6
// runs BW6.1 BW2.0 and then, from i = (r+1)/2 = 1 on and starting at the far backward
// because r is odd, defers both weight gradients: B7.1 B3.0; step 8 runs them in order.
// Device 3 (r = 0): one far B with its W right after (step 3), a lone far BW in step 5 and
// a deferred near B in step 7. (These are the fixture's orders.)
TEST(DualPipe, FourStagesStepStructure) {
  const Simulated r = run("dualpipe", 4, 8, kUnit);
  EXPECT_EQ(order_string(r.graph, r.result.trace, 1),
            "F0.0 F4.1 F1.0 F5.1 F2.0 BW4.1 F6.1 BW0.0 F3.0 BW5.1 F7.1 BW1.0 BW6.1 BW2.0 B7.1 "
            "B3.0 W7.1 W3.0");
  EXPECT_EQ(order_string(r.graph, r.result.trace, 3),
            "F4.1 F5.1 F6.1 F0.0 B0.0 W0.0 F1.0 F7.1 BW1.0 F2.0 BW4.1 BW2.0 F3.0 BW5.1 BW3.0 "
            "B6.1 W6.1 B7.1 W7.1");
  // F = B = W: makespan m(F+B+W) + (n-1)(F+B-W) = 24 + 1.
  EXPECT_EQ(r.result.metrics.makespan, 25000);
}

// p = 1, m = 2: the V turns on device 0 itself. Step 2: F0.0 F0.1; step 4 (m-2p+d+1 = 1):
// F1.0 BW0.1, F1.1 BW0.0; step 6 (d = 0 even): BW1.1, then B1.0 deferred; step 8: W1.0.
// Nothing waits on another device, so the makespan is the busy time 2m(F+B+W) = 12.
TEST(DualPipeV, OneStageWorkedByHand) {
  const Simulated r = run("dualpipev", 1, 2, kUnit);
  EXPECT_EQ(order_string(r.graph, r.result.trace, 0),
            "F0.0 F0.1 F1.0 BW0.1 F1.1 BW0.0 BW1.1 B1.0 W1.0");
  EXPECT_EQ(r.result.metrics.makespan, 12000);
  EXPECT_EQ(r.result.metrics.devices[0].peak_memory, 3.0);  // 2p + 1
}

// p = 2, m = 4. Device 0 (d = 0): step 1: F0.0 F1.0; step 2: F2.0 F0.1; step 3: B0.1 W0.1
// F1.1; step 4 (m-2p+1 = 1): F3.0 BW1.1, F2.1 BW0.0; step 5: BW2.1, F3.1 BW1.0; step 6:
// BW3.1 B2.0 (deferred); step 7: W2.0 B3.0; step 8: W3.0. Device 1 (d = 1, odd): step 2
// twice; step 4 twice; step 6: BW2.1 BW2.0, then B3.1 B3.0 deferred; step 8: W3.1 W3.0.
// F = B = W: makespan 2m(F+B+W) + (p-1)(F+B-W) = 24 + 1. Device 1 starts at 1 (after
// device 0's F0.0) and then never waits; device 0's one idle unit is [16, 17), where BW1.0
// waits for device 1's BW1.0 (it ends at 17).
TEST(DualPipeV, TwoStagesWorkedByHand) {
  const Simulated r = run("dualpipev", 2, 4, kUnit);
  EXPECT_EQ(order_string(r.graph, r.result.trace, 0),
            "F0.0 F1.0 F2.0 F0.1 B0.1 W0.1 F1.1 F3.0 BW1.1 F2.1 BW0.0 BW2.1 F3.1 BW1.0 BW3.1 "
            "B2.0 W2.0 B3.0 W3.0");
  EXPECT_EQ(order_string(r.graph, r.result.trace, 1),
            "F0.0 F0.1 F1.0 F1.1 F2.0 BW0.1 F2.1 BW0.0 F3.0 BW1.1 F3.1 BW1.0 BW2.1 BW2.0 B3.1 "
            "B3.0 W3.1 W3.0");
  EXPECT_EQ(starts(r, 0)[13], 17000);  // BW1.0
  EXPECT_EQ(starts(r, 1)[0], 1000);
  EXPECT_EQ(r.result.metrics.makespan, 25000);
  EXPECT_EQ(r.result.metrics.devices[0].span_bubble(), 1000);
  EXPECT_EQ(r.result.metrics.devices[1].span_bubble(), 0);
  EXPECT_EQ(r.result.metrics.devices[0].peak_memory, 5.0);  // 2p + 1
  EXPECT_EQ(r.result.metrics.devices[1].peak_memory, 5.0);
}

// Which backwards are split: a device defers (runs as B, later W) the far B's of step 3,
// the second half of step 6 and the near B's of step 7: 2(n-r-1) + (r+1) = 2n-r-1 W tasks;
// every other backward is a fused BW. For DualPipe that is p-1-r, for DualPipeV 2p-1-d.
TEST(DualPipeFamily, DeferredWeightGradientsPerDevice) {
  for (const std::uint32_t p : {2u, 4u, 6u, 8u}) {
    const Simulated r = run("dualpipe", p, 2 * p + 4, kUnit);
    for (std::uint32_t d = 0; d < p; ++d) {
      const std::uint32_t rank = std::min(d, p - 1 - d);
      EXPECT_EQ(count_kind(r, d, TaskKind::W), p - 1 - rank) << "dualpipe p=" << p << " d=" << d;
      EXPECT_EQ(count_kind(r, d, TaskKind::B), p - 1 - rank);
      EXPECT_EQ(count_kind(r, d, TaskKind::BW), 2 * p + 4 - (p - 1 - rank));
    }
  }
  for (std::uint32_t p = 1; p <= 6; ++p) {
    const Simulated r = run("dualpipev", p, 2 * p + 3, kUnit);
    for (std::uint32_t d = 0; d < p; ++d) {
      EXPECT_EQ(count_kind(r, d, TaskKind::W), 2 * p - 1 - d) << "dualpipev p=" << p << " d=" << d;
      EXPECT_EQ(count_kind(r, d, TaskKind::BW), 2 * (2 * p + 3) - (2 * p - 1 - d));
    }
  }
}

// The overlapped pairs the plan marks (the reference's _forward_backward_chunk calls, see
// docs/notes/moe_dualpipe_research.md): 2h - 3n + r + 1 per device, one fewer on the middle
// ranks (r = n - 1), whose first main-step pair the reference runs in sequence. Each is an F
// right before a BW of the other chunk, and every such adjacency is one but that first one.
// With split_backward a pair's backward is its B, right before its W.
TEST(DualPipeFamily, OverlappedPairsAreTheReferencesForwardBackwardCalls) {
  std::size_t checked = 0;
  for (const char* schedule : {"dualpipe", "dualpipev"}) {
    const bool dual = std::string(schedule) == "dualpipe";
    for (std::uint32_t p = 1; p <= 10; ++p) {
      if (dual && p % 2 != 0) continue;
      for (std::uint32_t m = 2 * p; m <= 2 * p + 8; ++m) {
        if (dual && m % 2 != 0) continue;
        SCOPED_TRACE(fmt::format("{} p={} m={}", schedule, p, m));
        PipelineSpec spec = testing::pipeline_spec(schedule, p, m, 2);
        const PipelinePlan plan = plan_schedule(spec, CostTable({1000, 1000, 1000}));
        ASSERT_EQ(plan.overlapped_pairs.size(), p);
        const std::uint32_t n = dual ? p / 2 : p;
        const std::uint32_t h = dual ? m / 2 : m;
        for (std::uint32_t d = 0; d < p; ++d) {
          const std::uint32_t r = dual ? std::min(d, p - 1 - d) : d;
          const auto& pairs = plan.overlapped_pairs[d];
          const auto& program = plan.programs[d];
          EXPECT_EQ(pairs.size(), 2 * h + r + 1 - 3 * n - (r + 1 == n ? 1u : 0u)) << d;
          std::vector<std::uint32_t> adjacent;
          for (std::uint32_t i = 0; i + 1 < program.size(); ++i) {
            if (program[i].kind == TaskKind::F && program[i + 1].kind == TaskKind::BW &&
                program[i].chunk != program[i + 1].chunk) {
              adjacent.push_back(i);
            }
          }
          if (r + 1 == n) adjacent.erase(adjacent.begin());
          EXPECT_EQ(pairs, adjacent) << d;
          ++checked;
        }
        spec.split_backward = true;
        const PipelinePlan split = plan_schedule(spec, CostTable({1000, 1000, 1000}));
        for (std::uint32_t d = 0; d < p; ++d) {
          const auto& program = split.programs[d];
          ASSERT_EQ(split.overlapped_pairs[d].size(), plan.overlapped_pairs[d].size());
          for (std::size_t k = 0; k < split.overlapped_pairs[d].size(); ++k) {
            const std::uint32_t i = split.overlapped_pairs[d][k];
            const Step& f = plan.programs[d][plan.overlapped_pairs[d][k]];
            const Step& bw = plan.programs[d][plan.overlapped_pairs[d][k] + 1];
            ASSERT_LT(i + 2, program.size());
            EXPECT_EQ(program[i], f);
            EXPECT_EQ(program[i + 1], (Step{TaskKind::B, bw.microbatch, bw.chunk}));
            EXPECT_EQ(program[i + 2], (Step{TaskKind::W, bw.microbatch, bw.chunk}));
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 200u);
  // Other schedules mark none.
  EXPECT_TRUE(plan_schedule(testing::pipeline_spec("1f1b", 4, 8), CostTable({1, 1, 1}))
                  .overlapped_pairs.empty());
}

// Closed forms of this model (free communication, F = B >= W, any m the reference accepts):
//   makespan = v m (F+B+W) + (n-1)(F+B-W)   (v = 1 DualPipe, v = 2 DualPipeV),
//   span bubble of a device = (n-1-r)(F+B-W),
//   peak = (p+1) activations for DualPipe, (2p+1) for DualPipeV, on every device.
// The peaks are the report's "PP+1" (DualPipeV's chunks are half as deep, so 2p+1 of them).
// The report's bubble (PP/2-1)(F&B+B-3W), read with F&B = F+B (without anything to overlap
// the two halves of a pair run in sequence; with a measured F&B the pairs are units, see
// OverlappedPairs.PublishedBubbleAndMemory) and B the input-gradient time, equals
// (n-1)(F+B-W) only when F = B = 2W; at F = B = W it predicts 0 where the simulation
// gives (n-1)F, and with B != F no closed form of this kind holds (see below). The
// simulation is the reference here.
TEST(DualPipeFamily, ClosedFormsWhenForwardEqualsBackward) {
  for (const char* schedule : {"dualpipe", "dualpipev"}) {
    const bool dual = std::string(schedule) == "dualpipe";
    for (std::uint32_t p = 1; p <= 8; ++p) {
      if (dual && p % 2 != 0) continue;
      for (std::uint32_t m = 2 * p; m <= 2 * p + 7; ++m) {
        if (dual && m % 2 != 0) continue;
        for (const TimeNs w : {TimeNs{250}, TimeNs{500}, TimeNs{1000}}) {
          const TaskCosts c{1000, 1000, w, 2.0, 0.0};
          SCOPED_TRACE(fmt::format("{} p={} m={} W={}", schedule, p, m, w));
          const Simulated r = run(schedule, p, m, c);
          const std::uint32_t n = dual ? p / 2 : p;
          const TimeNs per_mb = c.forward + c.backward + c.weight;
          const TimeNs gap = c.forward + c.backward - c.weight;
          EXPECT_EQ(r.result.metrics.makespan, (dual ? 1 : 2) * TimeNs{m} * per_mb + (n - 1) * gap);
          for (std::uint32_t d = 0; d < p; ++d) {
            const std::uint32_t rank = dual ? std::min(d, p - 1 - d) : d;
            const auto& dm = r.result.metrics.devices[d];
            EXPECT_EQ(dm.busy, (dual ? 1 : 2) * TimeNs{m} * per_mb);
            EXPECT_EQ(dm.span_bubble(), (n - 1 - rank) * gap) << "device " << d;
            EXPECT_EQ(dm.peak_memory, 2.0 * (dual ? p + 1 : 2 * p + 1)) << "device " << d;
          }
        }
      }
    }
  }
}

// Sizes where the closed form above does not apply, simulated: with B = 2F the far
// direction's gradients arrive later than the forwards they pair with. DualPipe p = 6,
// m = 12, F1 B2 W1: busy 48, makespan 53 (the F = B formula would say 48 + 2 x 2 = 52);
// span bubbles 5, 3, 1 (mirrored). DualPipeV p = 4, m = 10, F1 B2 W1 (the fixture's case):
// 88 = 80 + 8, bubbles 8, 6, 4, 2. F = B = W at p = 8, m = 16: 51 = 48 + 3, where the
// report's formula gives a zero bubble.
TEST(DualPipeFamily, SimulatedMakespansAtOtherCosts) {
  const TaskCosts slow_b{1000, 2000, 1000, 1.0, 0.0};
  {
    const Simulated r = run("dualpipe", 6, 12, slow_b);
    EXPECT_EQ(r.result.metrics.makespan, 53000);
    const std::vector<TimeNs> bubbles{5000, 3000, 1000, 1000, 3000, 5000};
    for (std::uint32_t d = 0; d < 6; ++d) {
      EXPECT_EQ(r.result.metrics.devices[d].busy, 48000);
      EXPECT_EQ(r.result.metrics.devices[d].span_bubble(), bubbles[d]) << "device " << d;
      EXPECT_EQ(r.result.metrics.devices[d].peak_memory, 7.0);
    }
  }
  {
    const Simulated r = run("dualpipev", 4, 10, slow_b);
    EXPECT_EQ(r.result.metrics.makespan, 88000);
    for (std::uint32_t d = 0; d < 4; ++d) {
      EXPECT_EQ(r.result.metrics.devices[d].span_bubble(), TimeNs{8000 - 2000 * d});
      EXPECT_EQ(r.result.metrics.devices[d].peak_memory, 9.0);
    }
  }
  EXPECT_EQ(run("dualpipe", 8, 16, kUnit).result.metrics.makespan, 51000);
}

// Every valid size on a grid, with seeded random costs, latency and B's share of the
// memory: the plan builds (no deadlock: build_pipeline_graph throws CycleError otherwise),
// every device runs all its work, peaks stay within p+1 (2p+1) activations, and
// split_backward (every remaining BW as B then W) builds too.
TEST(DualPipeFamily, NoDeadlockOverAGridOfValidSizes) {
  const std::uint32_t seed = 20261122;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<TimeNs> cost(1, 5000);
  std::uniform_int_distribution<TimeNs> latency(0, 2000);
  std::uniform_int_distribution<int> tenths(0, 10);
  for (const char* schedule : {"dualpipe", "dualpipev"}) {
    const bool dual = std::string(schedule) == "dualpipe";
    for (std::uint32_t p = 1; p <= 12; ++p) {
      if (dual && p % 2 != 0) continue;
      for (std::uint32_t m = 2 * p; m <= 2 * p + 12; m += dual ? 2 : 1) {
        const TaskCosts c{cost(rng), cost(rng), cost(rng), 1.0, tenths(rng) / 10.0};
        const TimeNs lat = latency(rng);
        const bool split = tenths(rng) < 3;
        SCOPED_TRACE(fmt::format("seed={} {} p={} m={} F={} B={} W={} C={} b_free={} split={}",
                                 seed, schedule, p, m, c.forward, c.backward, c.weight, lat,
                                 c.backward_frees, split));
        Simulated r;
        ASSERT_NO_THROW(r = run(schedule, p, m, c, lat, split));
        const std::size_t per_device = dual ? m : 2 * std::size_t{m};
        const double limit = dual ? p + 1 : 2 * p + 1;
        for (std::uint32_t d = 0; d < p; ++d) {
          EXPECT_EQ(count_kind(r, d, TaskKind::F), per_device);
          EXPECT_EQ(count_kind(r, d, TaskKind::B) + count_kind(r, d, TaskKind::BW), per_device);
          if (split) {
            EXPECT_EQ(count_kind(r, d, TaskKind::BW), 0u);
          }
          EXPECT_EQ(r.result.metrics.devices[d].busy,
                    static_cast<TimeNs>(per_device) * (c.forward + c.backward + c.weight));
          EXPECT_LE(r.result.metrics.devices[d].peak_memory, limit + 1e-9);
        }
        EXPECT_GE(r.result.metrics.makespan, r.result.metrics.dependency_bound);
      }
    }
  }
}

TEST(DualPipeFamily, RefusedSizesNameTheFieldAndRule) {
  std::string field;
  EXPECT_EQ(refusal("dualpipe", 4, 8, 1, &field),
            "dualpipe needs exactly 2 chunks per stage, got 1");
  EXPECT_EQ(field, "chunks");
  EXPECT_EQ(refusal("dualpipe", 3, 8, 2, &field), "dualpipe needs an even number of stages, got 3");
  EXPECT_EQ(field, "stages");
  EXPECT_EQ(refusal("dualpipe", 1, 2, 2, &field), "dualpipe needs an even number of stages, got 1");
  EXPECT_EQ(field, "stages");
  EXPECT_EQ(refusal("dualpipe", 4, 9, 2, &field),
            "dualpipe needs an even number of microbatches (half run each way), got 9");
  EXPECT_EQ(field, "microbatches");
  EXPECT_EQ(refusal("dualpipe", 4, 6, 2, &field),
            "dualpipe needs at least 2 x stages = 8 microbatches, got 6");
  EXPECT_EQ(field, "microbatches");
  EXPECT_EQ(refusal("dualpipe", 4, 0, 2, &field), "dualpipe needs at least 1 microbatch, got 0");
  EXPECT_EQ(field, "microbatches");
  EXPECT_EQ(refusal("dualpipe", 4, 8, 2, &field), "(accepted)");  // m = 2p is the minimum

  EXPECT_EQ(refusal("dualpipev", 3, 9, 3, &field),
            "dualpipev needs exactly 2 chunks per stage, got 3");
  EXPECT_EQ(field, "chunks");
  EXPECT_EQ(refusal("dualpipev", 4, 7, 2, &field),
            "dualpipev needs at least 2 x stages = 8 microbatches, got 7");
  EXPECT_EQ(field, "microbatches");
  EXPECT_EQ(refusal("dualpipev", 3, 7, 2, &field), "(accepted)");  // odd sizes are fine
}

}  // namespace
}  // namespace perflow::parallel
