#include "perflow/parallel/recompute.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::parallel {
namespace {

using testing::order_string;
using testing::pipeline_spec;

using Span = std::pair<TimeNs, TimeNs>;

Span span_of(const simulator::SimulationResult& r, TaskId t) {
  return {r.trace.start_of(t), r.trace.finish_of(t)};
}

// The task of `kind`, microbatch and chunk on device `d`'s compute lane (it must exist).
TaskId find_task(const EventGraph& g, std::uint32_t d, TaskKind kind, std::uint32_t mb,
                 std::uint32_t chunk = 0) {
  for (const TaskId t : g.program(DeviceId{d})) {
    if (g.kind(t) == kind && g.microbatch(t) == mb && g.chunk(t) == chunk) return t;
  }
  ADD_FAILURE() << "no " << to_string(kind) << mb << "." << chunk << " on device " << d;
  return TaskId{0};
}

// An order string without the R tasks.
std::string without_r(const EventGraph& g, const Trace& trace, std::uint32_t d) {
  std::string out;
  for (const TaskId t : trace.events(DeviceId{d})) {
    if (g.kind(t) == TaskKind::R) continue;
    if (!out.empty()) out += ' ';
    out += g.label(t);
  }
  return out;
}

TaskCosts recomputing(TaskCosts c, TimeNs recompute_forward, double recompute_activation) {
  c.recompute = true;
  c.recompute_forward = recompute_forward;
  c.recompute_activation = recompute_activation;
  return c;
}

// 1F1B, 2 stages x 2 microbatches, F = 1000, BW = 2000 (B 2000, W 0, fused), R = 500,
// activation 10 of which F keeps 2 (R rebuilds the other 8). Programs: device 0 F0 F1 BW0
// BW1, device 1 F0 BW0 F1 BW1, each BW preceded by its R.
//
// Hand simulation (ns):
//   d0 F0 [0,1000] F1 [1000,2000]
//   d1 F0 [1000,2000] (F0 of d0)            R0 [2000,2500] (its own F0)
//      BW0 [2500,4500] (R0)                  F1 [4500,5500] (program, after BW0)
//      R1 [5500,6000]                        BW1 [6000,8000]
//   d0 R0 [4500,5000]: the gradient BW0 of d1 ends at 4500 (d0 is idle from 2000)
//      BW0 [5000,7000]
//      R1 [8000,8500]: waits for BW1 of d1 (8000)       BW1 [8500,10500]
// Makespan 10500 (without recomputation: 9000, each R adds 500 on d0's critical chain
// R0 BW0 and R1 BW1, and d1's R0 delays everything after it by 500).
// Peak memory, running sum in program order:
//   d0: F0 +2 -> 2, F1 +2 -> 4, R0 +8 -> 12, BW0 -10 -> 2, R1 +8 -> 10, BW1 -10 -> 0: 12
//   d1: F0 +2 -> 2, R0 +8 -> 10, BW0 -10 -> 0, F1 -> 2, R1 -> 10, BW1 -> 0: 10
// Without recomputation d0 holds both F's 10 each: 20; d1 10.
TEST(Recompute, OneFOneBTwoStagesHandSimulated) {
  TaskCosts c{.forward = 1000, .backward = 2000, .weight = 0, .activation = 10};
  const CostTable plain(c);
  const CostTable costs(recomputing(c, 500, 2));
  const EventGraph original = build_schedule(pipeline_spec("1f1b", 2, 2), costs);
  const EventGraph g = add_recompute(original, costs);
  ASSERT_EQ(g.task_count(), original.task_count() + 4);
  // Original tasks keep their ids.
  for (std::uint32_t t = 0; t < original.task_count(); ++t) {
    EXPECT_EQ(g.label(TaskId{t}), original.label(TaskId{t}));
  }

  const simulator::SimulationResult r = simulator::simulate(g);
  EXPECT_EQ(order_string(g, r.trace, 0), "F0.0 F1.0 R0.0 BW0.0 R1.0 BW1.0");
  EXPECT_EQ(order_string(g, r.trace, 1), "F0.0 R0.0 BW0.0 F1.0 R1.0 BW1.0");

  const auto at = [&](std::uint32_t d, TaskKind k, std::uint32_t mb) {
    return span_of(r, find_task(g, d, k, mb));
  };
  EXPECT_EQ(at(0, TaskKind::F, 0), (Span{0, 1000}));
  EXPECT_EQ(at(0, TaskKind::F, 1), (Span{1000, 2000}));
  EXPECT_EQ(at(1, TaskKind::F, 0), (Span{1000, 2000}));
  EXPECT_EQ(at(1, TaskKind::R, 0), (Span{2000, 2500}));
  EXPECT_EQ(at(1, TaskKind::BW, 0), (Span{2500, 4500}));
  EXPECT_EQ(at(1, TaskKind::F, 1), (Span{4500, 5500}));
  EXPECT_EQ(at(1, TaskKind::R, 1), (Span{5500, 6000}));
  EXPECT_EQ(at(1, TaskKind::BW, 1), (Span{6000, 8000}));
  EXPECT_EQ(at(0, TaskKind::R, 0), (Span{4500, 5000}));
  EXPECT_EQ(at(0, TaskKind::BW, 0), (Span{5000, 7000}));
  EXPECT_EQ(at(0, TaskKind::R, 1), (Span{8000, 8500}));
  EXPECT_EQ(at(0, TaskKind::BW, 1), (Span{8500, 10500}));
  EXPECT_EQ(r.metrics.makespan, 10500);

  // Each BW starts exactly when its R ends; R on device 0 starts exactly when the gradient
  // from device 1 (its BW) arrives, not when device 0 becomes free.
  for (std::uint32_t d = 0; d < 2; ++d) {
    for (std::uint32_t mb = 0; mb < 2; ++mb) {
      EXPECT_EQ(at(d, TaskKind::BW, mb).first, at(d, TaskKind::R, mb).second);
      EXPECT_EQ(g.duration(find_task(g, d, TaskKind::R, mb)), 500);
    }
  }
  for (std::uint32_t mb = 0; mb < 2; ++mb) {
    EXPECT_EQ(at(0, TaskKind::R, mb).first, at(1, TaskKind::BW, mb).second);
  }
  // R holds the data dependences (its F, the next stage's gradient); BW only waits for R.
  const TaskId bw0 = find_task(g, 0, TaskKind::BW, 0);
  const TaskId r0 = find_task(g, 0, TaskKind::R, 0);
  std::vector<TaskId> data_into_bw;
  for (const Adjacent& p : g.predecessors(bw0)) {
    if (p.kind() == EdgeKind::Data) data_into_bw.push_back(p.task());
  }
  EXPECT_EQ(data_into_bw, std::vector<TaskId>{r0});
  std::vector<TaskId> data_into_r;
  for (const Adjacent& p : g.predecessors(r0)) {
    if (p.kind() == EdgeKind::Data) data_into_r.push_back(p.task());
  }
  std::sort(data_into_r.begin(), data_into_r.end());
  std::vector<TaskId> expected{find_task(g, 0, TaskKind::F, 0), find_task(g, 1, TaskKind::BW, 0)};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(data_into_r, expected);

  EXPECT_EQ(r.metrics.devices[0].peak_memory, 12.0);
  EXPECT_EQ(r.metrics.devices[1].peak_memory, 10.0);
  EXPECT_EQ(r.metrics.devices[0].recompute, 1000);
  EXPECT_EQ(r.metrics.devices[1].recompute, 1000);
  EXPECT_EQ(r.metrics.devices[0].busy, 2 * 1000 + 2 * 2000 + 2 * 500);
  EXPECT_EQ(g.memory_delta(find_task(g, 0, TaskKind::F, 0)), 2.0);
  EXPECT_EQ(g.memory_delta(r0), 8.0);
  EXPECT_EQ(g.memory_delta(bw0), -10.0);

  // The same schedule without recomputation: 9000, peaks 20 and 10.
  const simulator::SimulationResult base =
      simulator::simulate(build_schedule(pipeline_spec("1f1b", 2, 2), plain));
  EXPECT_EQ(base.metrics.makespan, 9000);
  EXPECT_EQ(base.metrics.devices[0].peak_memory, 20.0);
  EXPECT_EQ(base.metrics.devices[1].peak_memory, 10.0);
  EXPECT_EQ(base.metrics.devices[0].recompute, 0);
}

// Split backward (ZB-H1, 2 stages x 2 microbatches): activation 12, B frees a quarter (3;
// W needs the other 9), F keeps 2, R rebuilds 10 (default: the rest). With recomputation:
// F +2, R +10, B -(12 - 9) = -3, W -9. With recompute_rebuilt 4 and B freeing 3/4: F +2,
// R +4, B -(6 - 3) = -3, W -3. Each microbatch's deltas sum to 0, and so does each device.
TEST(Recompute, SplitBackwardMemoryDeltasFollowTheFormulas) {
  TaskCosts c{
      .forward = 1000, .backward = 1000, .weight = 1000, .activation = 12, .backward_frees = 0.25};
  c = recomputing(c, 700, 2);
  EXPECT_EQ(c.kept_activation(), 2.0);
  EXPECT_EQ(c.rebuilt_activation(), 10.0);
  struct Expected {
    TaskCosts costs;
    double f, r, b, w;
  };
  TaskCosts finer = c;
  finer.recompute_rebuilt = 4.0;
  finer.backward_frees = 0.75;
  for (const Expected& e : {Expected{c, 2, 10, -3, -9}, Expected{finer, 2, 4, -3, -3}}) {
    const CostTable costs(e.costs);
    const EventGraph g = add_recompute(build_schedule(pipeline_spec("zb-h1", 2, 2), costs), costs);
    const simulator::SimulationResult r = simulator::simulate(g);
    std::size_t rs = 0;
    for (std::uint32_t t = 0; t < g.task_count(); ++t) {
      const TaskId id{t};
      const double delta = g.memory_delta(id);
      switch (g.kind(id)) {
        case TaskKind::F:
          EXPECT_EQ(delta, e.f);
          break;
        case TaskKind::R:
          ++rs;
          EXPECT_EQ(delta, e.r);
          EXPECT_EQ(g.duration(id), 700);
          break;
        case TaskKind::B:
          EXPECT_EQ(delta, e.b);
          break;
        case TaskKind::W:
          EXPECT_EQ(delta, e.w);
          break;
        default:
          ADD_FAILURE() << g.label(id);
      }
    }
    EXPECT_EQ(rs, 4u);  // one per B, none per W
    for (std::uint32_t d = 0; d < 2; ++d) {
      double sum = 0;
      for (const TaskId t : r.trace.events(DeviceId{d})) {
        sum += g.memory_delta(t);
        EXPECT_GE(sum, 0.0) << g.label(t);
        if (g.kind(t) == TaskKind::B) {
          // R right before B, of the same microbatch.
          const auto events = r.trace.events(DeviceId{d});
          const auto it = std::find(events.begin(), events.end(), t);
          ASSERT_NE(it, events.begin());
          EXPECT_EQ(g.kind(*(it - 1)), TaskKind::R);
          EXPECT_EQ(g.microbatch(*(it - 1)), g.microbatch(t));
        }
      }
      EXPECT_EQ(sum, 0.0);
    }
  }
  // Device 1 of ZB-H1 p=2 m=2 runs F0 R0 B0 F1 R1 B1 W0 W1 (the W's fill the cool-down).
  // Default rebuild: F0 2, R0 12, B0 9, F1 11, R1 21, B1 18, W0 9, W1 0: peak 21, as without
  // recomputation (F0 12, B0 9, F1 21): both microbatches' W inputs are held together either
  // way. Finer rebuild (4, B frees 3/4): F0 2, R0 6, B0 3, F1 5, R1 9, B1 6, W0 3, W1 0:
  // peak 9 (without: F0 12, B0 3, F1 15).
  const auto peak1 = [](const TaskCosts& costs, bool recompute) {
    const CostTable table(costs);
    EventGraph g = build_schedule(pipeline_spec("zb-h1", 2, 2), table);
    if (recompute) g = add_recompute(g, table);
    const simulator::SimulationResult r = simulator::simulate(g);
    EXPECT_EQ(without_r(g, r.trace, 1), "F0.0 B0.0 F1.0 B1.0 W0.0 W1.0");
    return r.metrics.devices[1].peak_memory;
  };
  EXPECT_EQ(peak1(c, true), 21.0);
  EXPECT_EQ(peak1(c, false), 21.0);
  EXPECT_EQ(peak1(finer, true), 9.0);
  EXPECT_EQ(peak1(finer, false), 15.0);
}

// Only the chunks that recompute get R tasks; the others keep their tasks and deltas.
TEST(Recompute, OnlyRecomputingChunksGetRTasks) {
  const TaskCosts plain{
      .forward = 1000, .backward = 1500, .weight = 800, .activation = 4, .backward_frees = 0.5};
  CostTable costs(plain);
  costs.set(StageId{1}, 1, recomputing(plain, 1000, 1));
  const EventGraph original = build_schedule(pipeline_spec("interleaved-1f1b", 4, 8, 2), costs);
  const EventGraph g = add_recompute(original, costs);
  ASSERT_EQ(g.task_count(), original.task_count() + 8);
  for (std::uint32_t t = 0; t < g.task_count(); ++t) {
    const TaskId id{t};
    const bool mine = g.stage(id) == StageId{1} && g.chunk(id) == 1;
    if (t >= original.task_count()) {
      EXPECT_EQ(g.kind(id), TaskKind::R);
      EXPECT_TRUE(mine) << g.label(id);
      EXPECT_EQ(g.memory_delta(id), 3.0);
    } else if (!mine) {
      EXPECT_EQ(g.memory_delta(id), original.memory_delta(id)) << g.label(id);
    } else if (g.kind(id) == TaskKind::F) {
      EXPECT_EQ(g.memory_delta(id), 1.0);
    }
  }
  // A table where nothing recomputes leaves the graph as it was.
  const EventGraph same = add_recompute(original, CostTable(plain));
  EXPECT_EQ(same.task_count(), original.task_count());
  EXPECT_FALSE(any_recompute(CostTable(plain), 4, 2));
  EXPECT_TRUE(any_recompute(costs, 4, 2));
  EXPECT_FALSE(any_recompute(costs, 1, 2));
}

TEST(Recompute, RefusesToRecomputeTwice) {
  const CostTable costs(recomputing({1000, 2000, 0, 10}, 500, 2));
  const EventGraph g = add_recompute(build_schedule(pipeline_spec("1f1b", 2, 2), costs), costs);
  EXPECT_THROW((void)add_recompute(g, costs), ScheduleError);
}

// Every builtin schedule (but custom) at sizes it accepts, fused and split backward, with
// and without latency, over cost sets with W above F: recomputation (a) never lowers the
// makespan, (b) never raises a device's peak, (c) with a free R leaves the makespan and the
// compute order as they were, (d) puts each backward of a recomputing chunk right after its
// own R in the executed order.
TEST(Recompute, PropertiesOverEveryBuiltinSchedule) {
  const std::vector<TaskCosts> cost_sets = {
      {.forward = 1000, .backward = 2000, .weight = 0, .activation = 4, .backward_frees = 0.5},
      {.forward = 1000, .backward = 1000, .weight = 1000, .activation = 4, .backward_frees = 0.5},
      {.forward = 1000, .backward = 1500, .weight = 2500, .activation = 4, .backward_frees = 0.25},
      {.forward = 700,
       .backward = 1300,
       .weight = 1900,
       .activation = 6,
       .backward_frees = 0.75,
       .launch_overhead = 50},
  };
  std::size_t runs = 0;
  for (const ScheduleInfo& info : builtin_schedules().all()) {
    if (info.name == "custom") continue;
    std::size_t accepted = 0;
    for (const std::uint32_t chunks : {1u, 2u}) {
      for (const bool split : {false, true}) {
        for (std::size_t k = 0; k < cost_sets.size(); ++k) {
          PipelineSpec spec = pipeline_spec(info.name, 4, 8, chunks);
          spec.split_backward = split;
          // Recompute everything (the full forward, F keeps 1) or a part (a finer rebuild).
          TaskCosts with = recomputing(cost_sets[k], cost_sets[k].forward, 1);
          if (k % 2 == 1) {
            with.recompute_forward = 300;
            with.recompute_rebuilt = 2.0;
          }
          const CostTable costs(with);
          EventGraph original;
          try {
            original = build_schedule(spec, costs);
          } catch (const ScheduleError&) {
            continue;
          }
          ++accepted;
          const EventGraph g = add_recompute(original, costs);
          TaskCosts free_r = with;
          free_r.recompute_forward = 0;
          free_r.launch_overhead = 0;
          TaskCosts no_overhead = with;
          no_overhead.launch_overhead = 0;
          const EventGraph free_original = build_schedule(spec, CostTable(no_overhead));
          const EventGraph free_g = add_recompute(free_original, CostTable(free_r));
          for (const TimeNs latency : {TimeNs{0}, TimeNs{300}}) {
            SCOPED_TRACE(fmt::format("{} v={} split={} costs #{} latency {}", info.name, chunks,
                                     split, k, latency));
            ++runs;
            const simulator::SimulationResult before = simulator::simulate(original, latency);
            const simulator::SimulationResult after = simulator::simulate(g, latency);
            // (a)
            EXPECT_GE(after.metrics.makespan, before.metrics.makespan);
            for (std::uint32_t d = 0; d < g.device_count(); ++d) {
              // (b)
              EXPECT_LE(after.metrics.devices[d].peak_memory, before.metrics.devices[d].peak_memory)
                  << "device " << d;
              EXPECT_GT(after.metrics.devices[d].recompute, 0);
              // (d)
              const auto events = after.trace.events(DeviceId{d});
              std::size_t backwards = 0;
              for (std::size_t i = 0; i < events.size(); ++i) {
                const TaskId t = events[i];
                if (g.kind(t) != TaskKind::B && g.kind(t) != TaskKind::BW) continue;
                ++backwards;
                ASSERT_GT(i, 0u) << g.label(t);
                const TaskId prev = events[i - 1];
                EXPECT_EQ(g.kind(prev), TaskKind::R) << g.label(t);
                EXPECT_EQ(g.microbatch(prev), g.microbatch(t)) << g.label(t);
                EXPECT_EQ(g.chunk(prev), g.chunk(t)) << g.label(t);
                EXPECT_EQ(g.stage(prev), g.stage(t)) << g.label(t);
                EXPECT_EQ(g.iteration(prev), g.iteration(t)) << g.label(t);
                EXPECT_EQ(after.trace.start_of(t), after.trace.finish_of(prev)) << g.label(t);
              }
              const auto program = original.program(DeviceId{d});
              EXPECT_EQ(backwards, static_cast<std::size_t>(
                                       std::count_if(program.begin(), program.end(), [&](TaskId t) {
                                         return original.kind(t) == TaskKind::B ||
                                                original.kind(t) == TaskKind::BW;
                                       })));
              EXPECT_GT(backwards, 0u);
            }
            // (c)
            const simulator::SimulationResult free_before =
                simulator::simulate(free_original, latency);
            const simulator::SimulationResult free_after = simulator::simulate(free_g, latency);
            EXPECT_EQ(free_after.metrics.makespan, free_before.metrics.makespan);
            for (std::uint32_t d = 0; d < g.device_count(); ++d) {
              EXPECT_EQ(without_r(free_g, free_after.trace, d),
                        order_string(free_original, free_before.trace, d));
            }
          }
        }
      }
    }
    EXPECT_GE(accepted, 4u) << info.name << " accepts none of the sizes tried";
  }
  EXPECT_GE(runs, 100u);
}

}  // namespace
}  // namespace perflow::parallel
