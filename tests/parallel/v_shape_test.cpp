// V-shape schedules of Qi et al., "Pipeline Parallelism with Controllable Memory" (NeurIPS
// 2024): 1F1B-V (fused backward), V-Half and V-Min (split backward). Orders below were
// checked against the reference generators (sail-sg/zero-bubble-pipeline-parallelism,
// v1f1b.py and zbv_greedy.py) for every p <= 8, m <= 3p+2; the peaks are the simulated ones.
#include <algorithm>
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

PipelineSpec spec_of(const std::string& schedule, std::uint32_t p, std::uint32_t m,
                     std::uint32_t chunks = 2) {
  PipelineSpec spec;
  spec.schedule = schedule;
  spec.stages = p;
  spec.microbatches = m;
  spec.chunks = chunks;
  return spec;
}

Simulated run(const PipelineSpec& spec, TaskCosts costs) {
  Simulated r{build_schedule(spec, CostTable(costs)), {}};
  r.result = simulator::simulate(r.graph);
  return r;
}

Simulated run(const std::string& schedule, std::uint32_t p, std::uint32_t m,
              TaskCosts costs = TaskCosts{1000, 1000, 1000, 1.0, 0.0}) {
  return run(spec_of(schedule, p, m, schedule == "1f1b" ? 1 : 2), costs);
}

double max_peak(const Simulated& r) {
  double peak = 0;
  for (const auto& d : r.result.metrics.devices) peak = std::max(peak, d.peak_memory);
  return peak;
}

// p = 2: the block puts (mod 6) F0, F1, B1, W1, B0, W0 at slots 1, 4, 5, 0, 2, 3 on device 0
// and 2, 3, 4, 5, 0, 1 on device 1. The first copies walk the V from slot 6: device 0 F0 at
// 7, device 1 F0 at 8, F1 at 9, device 0 F1 at 10, B1 at 11 (W1 12), device 1 B1 at 16 (W1
// 17), B0 at 18 (W0 19), device 0 B0 at 20 (W0 21); the sweep then pulls device 0's F0's 1
// and 2 into the warm-up (its peak is 4) and each backward to the first two free slots.
TEST(OneFOneBV, SmallOrdersByHand) {
  const Simulated r = run("1f1b-v", 2, 4);
  EXPECT_EQ(order_string(r.graph, r.result.trace, 0),
            "F0.0 F1.0 F2.0 F0.1 BW0.1 F1.1 BW1.1 F3.0 BW0.0 F2.1 BW2.1 BW1.0 F3.1 BW3.1 BW2.0 "
            "BW3.0");
  EXPECT_EQ(order_string(r.graph, r.result.trace, 1),
            "F0.0 F0.1 F1.0 F1.1 BW0.1 BW0.0 F2.0 F2.1 BW1.1 BW1.0 F3.0 F3.1 BW2.1 BW2.0 BW3.1 "
            "BW3.0");
  const Simulated q = run("1f1b-v", 3, 3);
  EXPECT_EQ(order_string(q.graph, q.result.trace, 0),
            "F0.0 F1.0 F2.0 F0.1 BW0.1 F1.1 BW1.1 F2.1 BW2.1 BW0.0 BW1.0 BW2.0");
  EXPECT_EQ(order_string(q.graph, q.result.trace, 1),
            "F0.0 F1.0 F2.0 F0.1 F1.1 BW0.1 F2.1 BW1.1 BW0.0 BW2.1 BW1.0 BW2.0");
  EXPECT_EQ(order_string(q.graph, q.result.trace, 2),
            "F0.0 F0.1 F1.0 F1.1 F2.0 F2.1 BW0.1 BW0.0 BW1.1 BW1.0 BW2.1 BW2.0");
}

// The last device alternates the two chunks in pairs: F i.0 F i.1, then BW j.1 BW j.0.
TEST(OneFOneBV, LastDeviceRunsPairs) {
  const Simulated r = run("1f1b-v", 4, 8);
  EXPECT_EQ(order_string(r.graph, r.result.trace, 3),
            "F0.0 F0.1 F1.0 F1.1 F2.0 F2.1 BW0.1 BW0.0 F3.0 F3.1 BW1.1 BW1.0 F4.0 F4.1 BW2.1 "
            "BW2.0 F5.0 F5.1 BW3.1 BW3.0 F6.0 F6.1 BW4.1 BW4.0 F7.0 F7.1 BW5.1 BW5.0 BW6.1 BW6.0 "
            "BW7.1 BW7.0");
  EXPECT_EQ(r.result.metrics.makespan, 63000);  // the fixture's 63 at F = B = W = 1
}

TEST(VHalf, SmallOrders) {
  const Simulated r = run("v-half", 3, 3);
  EXPECT_EQ(order_string(r.graph, r.result.trace, 0),
            "F0.0 F1.0 F2.0 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 B0.0 W0.0 F2.1 B2.1 B1.0 W2.1 W1.0 B2.0 "
            "W2.0");
  EXPECT_EQ(order_string(r.graph, r.result.trace, 1),
            "F0.0 F1.0 F0.1 F1.1 B0.1 W0.1 F2.0 B1.1 B0.0 W1.1 W0.0 F2.1 B1.0 B2.1 W2.1 W1.0 B2.0 "
            "W2.0");
  EXPECT_EQ(order_string(r.graph, r.result.trace, 2),
            "F0.0 F0.1 F1.0 F1.1 B0.1 W0.1 B0.0 W0.0 F2.0 F2.1 B1.1 B1.0 W1.1 W1.0 B2.1 B2.0 W2.1 "
            "W2.0");
  // p = 2 has a gap of 3 in its block (even p): device 1 runs B and W of both chunks in pairs.
  const Simulated q = run("v-half", 2, 4);
  EXPECT_EQ(order_string(q.graph, q.result.trace, 1),
            "F0.0 F0.1 F1.0 F1.1 B0.1 W0.1 B0.0 W0.0 F2.0 F2.1 B1.1 B1.0 W1.1 F3.0 W1.0 F3.1 B2.1 "
            "B2.0 B3.1 B3.0 W2.1 W3.1 W2.0 W3.0");
}

TEST(VMin, SmallOrders) {
  const Simulated r = run("v-min", 2, 4);
  EXPECT_EQ(order_string(r.graph, r.result.trace, 0),
            "F0.0 F1.0 F0.1 B0.1 W0.1 B0.0 W0.0 F1.1 B1.1 W1.1 F2.0 B1.0 W1.0 F2.1 B2.1 W2.1 F3.0 "
            "B2.0 W2.0 F3.1 B3.1 W3.1 B3.0 W3.0");
  EXPECT_EQ(order_string(r.graph, r.result.trace, 1),
            "F0.0 F0.1 B0.1 B0.0 F1.0 F1.1 W0.1 W0.0 B1.1 B1.0 F2.0 F2.1 W1.1 W1.0 B2.1 B2.0 F3.0 "
            "F3.1 W2.1 W2.0 B3.1 B3.0 W3.1 W3.0");
}

// The fixture sizes: the reference generator's makespans (53 and 59 at F = B = W = 1) and
// peaks (6 and 4 chunk activations) at p = 4, m = 8.
TEST(VShape, FixtureMakespansAndPeaks) {
  const Simulated half = run("v-half", 4, 8);
  EXPECT_EQ(half.result.metrics.makespan, 53000);
  const Simulated vmin = run("v-min", 4, 8);
  EXPECT_EQ(vmin.result.metrics.makespan, 59000);
  for (std::uint32_t d = 0; d < 4; ++d) {
    EXPECT_EQ(half.result.metrics.devices[d].peak_memory, 6.0);
    EXPECT_EQ(vmin.result.metrics.devices[d].peak_memory, 4.0);
    EXPECT_EQ(half.result.metrics.devices[d].busy, 48000);
  }
}

// Peak activations against 1F1B at the same (p, m). A V-shape F holds one chunk (half a
// stage), a 1F1B F a whole stage, so the V peaks are halved before comparing. Simulated
// closed forms (m = 4p, also reached at m = p), in chunk activations:
//   1F1B-V  2(p - floor((p-1)/3))  -> p - floor((p-1)/3) stages, about 2/3 of 1F1B's p
//   V-Half  2 floor(p/2) + 2       -> floor(p/2) + 1 stages, the paper's 1/2
//   V-Min   2 floor((p+1)/3) + 2   -> floor((p+1)/3) + 1 stages, the paper's 1/3
// (The paper's "1F1B-V" memory is not stated as a formula; the simulation is what is pinned.)
TEST(VShape, PeakMemoryAgainstOneFOneB) {
  for (std::uint32_t p = 1; p <= 12; ++p) {
    for (const std::uint32_t m : {p, 4 * p}) {
      SCOPED_TRACE(fmt::format("p={} m={}", p, m));
      const double one_f_one_b = max_peak(run("1f1b", p, m));
      EXPECT_EQ(one_f_one_b, p);
      const double v = max_peak(run("1f1b-v", p, m));
      const double half = max_peak(run("v-half", p, m));
      const double vmin = max_peak(run("v-min", p, m));
      EXPECT_EQ(v, 2.0 * (p - (p - 1) / 3));
      EXPECT_EQ(half, 2.0 * (p / 2) + 2);
      EXPECT_EQ(vmin, 2.0 * ((p + 1) / 3) + 2);
      // In stages: V-Half within 1F1B/2 + 1, V-Min within (1F1B + 1)/3 + 1.
      EXPECT_LE(half / 2, one_f_one_b / 2 + 1);
      EXPECT_LE(vmin / 2, (one_f_one_b + 1) / 3 + 1);
      EXPECT_LE(vmin, half);
      EXPECT_LE(half, v);
    }
  }
  // Large p: the ratios approach 1/2 and 1/3 (p = 24: 13 and 9 stages against 24).
  EXPECT_EQ(max_peak(run("v-half", 24, 48)), 26.0);
  EXPECT_EQ(max_peak(run("v-min", 24, 48)), 18.0);
}

// Every size runs to completion (build_pipeline_graph throws on a missing task or deadlock),
// each device is busy exactly m * 2 * (F + B + W), and the peak stays at most the closed form.
TEST(VShape, NoDeadlockOverAGrid) {
  const TaskCosts costs{2000, 3000, 1000, 1.0, 0.0};
  for (std::uint32_t p = 1; p <= 9; ++p) {
    for (std::uint32_t m = 1; m <= 3 * p + 2; m += (m <= p + 1 ? 1 : p)) {
      for (const char* schedule : {"1f1b-v", "v-half", "v-min"}) {
        SCOPED_TRACE(fmt::format("{} p={} m={}", schedule, p, m));
        for (const bool split : {false, true}) {
          PipelineSpec spec = spec_of(schedule, p, m);
          spec.split_backward = split;
          Simulated r;
          ASSERT_NO_THROW(r = run(spec, costs));
          for (std::uint32_t d = 0; d < p; ++d) {
            EXPECT_EQ(r.result.metrics.devices[d].busy, TimeNs{m} * 2 * 6000);
          }
        }
        const double peak = max_peak(run(spec_of(schedule, p, m), costs));
        const std::string s = schedule;
        const double bound = s == "1f1b-v"   ? 2.0 * (p - (p - 1) / 3)
                             : s == "v-half" ? 2.0 * (p / 2) + 2
                                             : 2.0 * ((p + 1) / 3) + 2;
        EXPECT_LE(peak, bound);
      }
    }
  }
}

// memory_limit: 0 or anything at or above the peak gives the same plan; below it, refused.
TEST(VShape, MemoryLimitHonouredOrRefused) {
  const CostTable costs(TaskCosts{1000, 1000, 1000, 1.0, 0.0});
  for (const char* schedule : {"v-half", "v-min"}) {
    PipelineSpec spec = spec_of(schedule, 4, 8);
    const PipelinePlan base = plan_schedule(spec, costs);
    spec.memory_limit = std::string(schedule) == "v-half" ? 6 : 4;
    EXPECT_EQ(plan_schedule(spec, costs).programs, base.programs);
    spec.memory_limit = 100;
    EXPECT_EQ(plan_schedule(spec, costs).programs, base.programs);
  }
  PipelineSpec spec = spec_of("v-half", 4, 8);
  spec.memory_limit = 5;
  try {
    (void)plan_schedule(spec, costs);
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.field(), "memory_limit");
    EXPECT_EQ(std::string(e.what()),
              "v-half needs memory_limit >= 6 (its peak activations per device at 4 stages and 8 "
              "microbatches), got 5");
  }
  spec = spec_of("v-min", 8, 16);
  spec.memory_limit = 7.5;
  try {
    (void)plan_schedule(spec, costs);
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.field(), "memory_limit");
    EXPECT_EQ(std::string(e.what()),
              "v-min needs memory_limit >= 8 (its peak activations per device at 8 stages and 16 "
              "microbatches), got 7.5");
  }
}

TEST(VShape, RefusedSizes) {
  const CostTable costs(TaskCosts{1, 1, 1, 1, 0});
  for (const char* schedule : {"1f1b-v", "v-half", "v-min"}) {
    for (const std::uint32_t chunks : {1U, 3U}) {
      try {
        (void)plan_schedule(spec_of(schedule, 4, 8, chunks), costs);
        FAIL() << schedule;
      } catch (const ScheduleError& e) {
        EXPECT_EQ(e.field(), "chunks");
        EXPECT_EQ(std::string(e.what()),
                  fmt::format("{} needs exactly 2 chunks per stage, got {}", schedule, chunks));
      }
    }
    try {
      (void)plan_schedule(spec_of(schedule, 4, 0), costs);
      FAIL() << schedule;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.field(), "microbatches");
      EXPECT_EQ(std::string(e.what()),
                fmt::format("{} needs at least 1 microbatch, got 0", schedule));
    }
    try {
      (void)plan_schedule(spec_of(schedule, 0, 4), costs);
      FAIL() << schedule;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.field(), "stages");
      EXPECT_EQ(std::string(e.what()), fmt::format("{} needs at least 1 stage, got 0", schedule));
    }
  }
  // 1F1B-V takes no memory_limit (the registry refuses the option).
  PipelineSpec spec = spec_of("1f1b-v", 4, 8);
  spec.memory_limit = 6;
  EXPECT_THROW((void)plan_schedule(spec, costs), ScheduleError);
}

}  // namespace
}  // namespace perflow::parallel
