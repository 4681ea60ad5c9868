// Expert parallelism: the all-to-all cost formula by hand, A2A tasks hand-simulated on 1F1B,
// and DualPipe's overlapped forward-backward pairs against the DeepSeek-V3 report's bubble
// formula (Table 2) over grids of sizes and costs.
#include "perflow/parallel/expert_parallel.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/collectives.hpp"
#include "perflow/parallel/recompute.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/metrics.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::parallel {
namespace {

using testing::pipeline_spec;

// 8 ranks in one node, 8000 bytes, 1 B/ns, 10 ns per step: 7 x 10 + 7/8 x 8000 = 7070.
// 16 ranks over two nodes of 8, 16000 bytes: 8/16 of them cross the 0.5 B/ns inter-node link
// (16000 ns) while 7/16 cross the intra-node one (7000 ns); 15 steps of 100 ns: 17500.
TEST(AllToAll, PairwiseExchangeByHand) {
  const LinkCost intra{10, 1e9};
  const LinkCost inter{100, 0.5e9};
  EXPECT_EQ(pairwise_all_to_all_time(8000, 8, 8, intra, inter), 7070);
  EXPECT_EQ(pairwise_all_to_all_time(16000, 16, 8, intra, inter), 17500);
  // Intra-bound across nodes: 2 nodes of 8 with a fast inter link (8 B/ns): 1000 vs 7000.
  EXPECT_EQ(pairwise_all_to_all_time(16000, 16, 8, intra, LinkCost{0, 8e9}), 7000);
  EXPECT_EQ(pairwise_all_to_all_time(16000, 1, 8, intra, inter), 0);
  EXPECT_EQ(pairwise_all_to_all_time(0, 4, 8, LinkCost{5, 1e9}, inter), 15);
  EXPECT_THROW((void)pairwise_all_to_all_time(1e18, 2, 8, LinkCost{0, 1}, inter), ScheduleError);
}

// 1F1B, 2 stages x 2 microbatches, F = 1000, BW = 2000, each with a 300 ns all-to-all.
// Every A2A waits for the task before it on its device and for the data from the other
// device; its task waits for it.
//   d0 A[0,300] F0[300,1300] A[1300,1600] F1[1600,2600]
//   d1 A[1300,1600] F0[1600,2600] A[2600,2900] BW0[2900,4900]
//      A[4900,5200] F1[5200,6200] A[6200,6500] BW1[6500,8500]
//   d0 A[4900,5200] BW0[5200,7200] A[8500,8800] BW1[8800,10800]
// Without all-to-alls the makespan is 9000.
TEST(AllToAll, OneFOneBHandSimulated) {
  TaskCosts c{.forward = 1000, .backward = 2000, .weight = 0};
  c.all_to_all = 300;
  const CostTable costs(c);
  const EventGraph plain = build_schedule(pipeline_spec("1f1b", 2, 2), costs);
  const EventGraph g = add_all_to_all(plain, costs);
  ASSERT_EQ(g.task_count(), plain.task_count() + 8);
  ASSERT_EQ(g.lane_count(), 4u);
  EXPECT_EQ(g.lane_info(LaneId{2}).name, "ep a2a");
  const auto r = simulator::simulate(g, {});
  const auto spans = [&](std::uint32_t d) {
    std::string out;
    for (const TaskId t : r.trace.events(DeviceId{d})) {
      out += fmt::format("{}[{},{}] ", g.label(t), r.trace.start_of(t), r.trace.finish_of(t));
    }
    return out;
  };
  EXPECT_EQ(spans(0), "F0.0[300,1300] F1.0[1600,2600] BW0.0[5200,7200] BW1.0[8800,10800] ");
  EXPECT_EQ(spans(1), "F0.0[1600,2600] BW0.0[2900,4900] F1.0[5200,6200] BW1.0[6500,8500] ");
  std::string a2a;
  for (const TaskId t : r.trace.events(LaneId{2})) {
    a2a += fmt::format("{}[{},{}] ", g.label(t), r.trace.start_of(t), r.trace.finish_of(t));
  }
  EXPECT_EQ(a2a, "A2A0.0[0,300] A2A1.0[1300,1600] A2A0.0[4900,5200] A2A1.0[8500,8800] ");
  EXPECT_EQ(r.metrics.makespan, 10800);
  EXPECT_EQ(simulator::simulate(plain, {}).metrics.makespan, 9000);
  const std::vector<AllToAllTime> time = all_to_all_time(g, costs);
  for (const AllToAllTime& device : time) {
    EXPECT_EQ(device.total, 1200);
    EXPECT_EQ(device.exposed, 1200);
    EXPECT_EQ(device.hidden(), 0);
  }
}

// The largest of the devices' (makespan - busy): DeepSeek-V3's per-device bubble.
TimeNs worst_bubble(const simulator::SimulationResult& r) {
  TimeNs worst = 0;
  for (const auto& d : r.metrics.devices) worst = std::max(worst, r.metrics.makespan - d.busy);
  return worst;
}

struct PairRun {
  EventGraph graph;
  simulator::SimulationResult result;
};

PairRun run_pairs(const std::string& schedule, std::uint32_t p, std::uint32_t m,
                  const TaskCosts& c) {
  PipelineSpec spec = pipeline_spec(schedule, p, m, 2);
  const CostTable costs(c);
  const PipelinePlan plan = plan_schedule(spec, costs);
  EXPECT_TRUE(overlaps_pairs(plan, costs));
  PairRun run{overlap_pairs(build_pipeline_graph(plan, costs), plan, costs), {}};
  run.result = simulator::simulate(run.graph, {});
  return run;
}

// DeepSeek-V3 report, Table 2: DualPipe's bubble is (PP/2-1)(F&B + B - 3W), B the full
// backward (here B + W), PP the stages (p for dualpipe, 2p for dualpipev on p devices), and
// its activation memory PP+1. With pairs as units the simulation reproduces it exactly when
// F = B (the input gradient) and W <= F <= F&B - W: the regime the report's accounting
// assumes. (Outside it the exact bubble is (PP/2-1)(F&B + F - 2W) while F&B >= F + W, and
// more below.)
TEST(OverlappedPairs, PublishedBubbleAndMemory) {
  for (const char* schedule : {"dualpipe", "dualpipev"}) {
    const bool dual = std::string(schedule) == "dualpipe";
    for (std::uint32_t p : {2u, 3u, 4u, 6u, 8u, 10u}) {
      if (dual && p % 2 != 0) continue;
      const std::uint32_t pp = dual ? p : 2 * p;
      for (std::uint32_t m = 2 * p; m <= 2 * p + 6; m += 2) {
        for (const auto& [f, w, fb] : std::vector<std::array<TimeNs, 3>>{{1000, 0, 1000},
                                                                         {1000, 250, 1500},
                                                                         {1000, 500, 2000},
                                                                         {1000, 1000, 2000},
                                                                         {1000, 500, 1500},
                                                                         {800, 300, 1900}}) {
          TaskCosts c{.forward = f, .backward = f, .weight = w, .activation = 1};
          c.forward_backward = fb;
          SCOPED_TRACE(fmt::format("{} p={} m={} F=B={} W={} F&B={}", schedule, p, m, f, w, fb));
          const PairRun r = run_pairs(schedule, p, m, c);
          const TimeNs full_b = f + w;
          EXPECT_EQ(worst_bubble(r.result), TimeNs{pp / 2 - 1} * (fb + full_b - 3 * w));
          double peak = 0;
          for (const auto& d : r.result.metrics.devices) peak = std::max(peak, d.peak_memory);
          EXPECT_EQ(peak, pp + 1.0);
        }
      }
    }
  }
}

// W > F: the report's formula goes to 0 or below, which no schedule reaches; the exact
// bubble stays above it (and, with fewer W to fill the gaps, is not monotone in F&B).
TEST(OverlappedPairs, WeightAboveForward) {
  for (const char* schedule : {"dualpipe", "dualpipev"}) {
    const bool dual = std::string(schedule) == "dualpipe";
    for (std::uint32_t p : {4u, 8u}) {
      const std::uint32_t pp = dual ? p : 2 * p;
      for (const TimeNs fb : {TimeNs{2000}, TimeNs{2500}, TimeNs{3000}, TimeNs{4000}}) {
        TaskCosts c{.forward = 1000, .backward = 1000, .weight = 1500, .activation = 1};
        c.forward_backward = fb;
        SCOPED_TRACE(fmt::format("{} p={} F&B={}", schedule, p, fb));
        const PairRun r = run_pairs(schedule, p, 3 * p, c);
        const TimeNs published = TimeNs{pp / 2 - 1} * (fb + 2500 - 3 * 1500);
        const TimeNs bubble = worst_bubble(r.result);
        EXPECT_GT(bubble, std::max<TimeNs>(published, 0));
      }
    }
  }
}

// A pair starts once both its F's input and its backward's gradient are there, both leave
// at its end, the backward takes no time of its own, and the F's box lasts the pair.
TEST(OverlappedPairs, OneUnitOverBothInputs) {
  TaskCosts c{.forward = 1000, .backward = 1200, .weight = 400, .activation = 1};
  c.forward_backward = 2100;
  const PairRun r = run_pairs("dualpipe", 8, 20, c);
  const EventGraph& g = r.graph;
  const Trace& trace = r.result.trace;
  std::size_t pairs = 0;
  for (std::uint32_t d = 0; d < 8; ++d) {
    const auto program = g.program(DeviceId{d});
    const std::uint32_t rank = std::min(d, 7 - d);
    std::size_t here = 0;
    for (std::size_t i = 1; i < program.size(); ++i) {
      if (!g.paired(program[i])) continue;
      ++here;
      const TaskId f = program[i - 1];
      const TaskId b = program[i];
      EXPECT_EQ(g.kind(f), TaskKind::F);
      EXPECT_EQ(g.kind(b), TaskKind::BW);
      EXPECT_NE(g.chunk(f), g.chunk(b));
      EXPECT_EQ(g.duration(f), 2100);
      EXPECT_EQ(g.duration(b), 0);
      EXPECT_EQ(trace.start_of(b), trace.finish_of(f));
      for (const Adjacent& pred : g.predecessors(b)) {
        if (pred.kind() == EdgeKind::Data) {
          EXPECT_GE(trace.start_of(f), trace.finish_of(pred.task()));
        }
      }
    }
    // 2h - 3n + r + 1 pairs, one fewer on the middle ranks (r = n - 1): h = 10, n = 4.
    EXPECT_EQ(here, 2 * 10 - 3 * 4 + rank + 1 - (rank == 3 ? 1 : 0)) << "device " << d;
    pairs += here;
  }
  EXPECT_EQ(pairs, 2u * (9 + 10 + 11 + 11));
}

// Derived pairs: the longest of the two computations, the two all-to-alls, and each task's
// compute with its own all-to-all; never longer than the two tasks with their all-to-alls in
// sequence. What the pair lasts beyond the compute is exposed.
TEST(OverlappedPairs, DerivedDurationAndExposure) {
  TaskCosts c{.forward = 1000, .backward = 1500, .weight = 500, .activation = 1};
  c.all_to_all = 800;
  EXPECT_EQ(c.pair_duration(TaskKind::BW, c), 3000);  // compute 1000 + 2000
  c.all_to_all = 1700;
  EXPECT_EQ(c.pair_duration(TaskKind::BW, c), 3700);  // the backward 2000 + its own 1700
  EXPECT_LE(c.pair_duration(TaskKind::BW, c), 1000 + 2000 + 2 * 1700);
  TaskCosts other = c;
  other.all_to_all = 100;
  EXPECT_EQ(c.pair_duration(TaskKind::B, other), 2700);  // the F 1000 + its own 1700
  c.all_to_all = 300;
  other.all_to_all = 300;
  EXPECT_EQ(c.pair_duration(TaskKind::B, other), 2500);  // compute 1000 + 1500
  // Never shorter than either task with its own all-to-all, over a grid.
  for (const TimeNs f : {TimeNs{100}, TimeNs{1000}, TimeNs{3000}}) {
    for (const TimeNs a : {TimeNs{0}, TimeNs{400}, TimeNs{2500}}) {
      for (const TimeNs ab : {TimeNs{0}, TimeNs{900}}) {
        TaskCosts x{.forward = f, .backward = 1500, .weight = 500};
        x.all_to_all = a;
        TaskCosts y{.forward = 700, .backward = 1200, .weight = 300};
        y.all_to_all = ab;
        const TimeNs pair = x.pair_duration(TaskKind::BW, y);
        EXPECT_GE(pair, f + a);
        EXPECT_GE(pair, 1500 + ab);
        EXPECT_GE(pair, f + 1500);
        EXPECT_GE(pair, a + ab);
        EXPECT_LE(pair, f + a + 1500 + ab);
      }
    }
  }
  c.all_to_all = 1700;

  const CostTable costs(c);
  PipelineSpec spec = pipeline_spec("dualpipev", 4, 8, 2);
  const PipelinePlan plan = plan_schedule(spec, costs);
  const EventGraph g =
      add_all_to_all(overlap_pairs(build_pipeline_graph(plan, costs), plan, costs), costs);
  const std::vector<AllToAllTime> time = all_to_all_time(g, costs);
  for (std::uint32_t d = 0; d < 4; ++d) {
    // Every F and BW of the device: 2 chunks x 8 microbatches x 2 passes.
    const std::size_t pairs = plan.overlapped_pairs[d].size();
    EXPECT_EQ(time[d].total, 32 * 1700) << d;
    // Unpaired tasks wait for all of theirs; a pair for 3700 - 3000 of its 3400.
    EXPECT_EQ(time[d].exposed, TimeNs(32 - 2 * pairs) * 1700 + TimeNs(pairs) * 700) << d;
    EXPECT_EQ(time[d].exposed + time[d].hidden(), time[d].total);
    std::size_t a2a_tasks = 0;
    for (std::uint32_t t = 0; t < g.task_count(); ++t) {
      a2a_tasks += g.kind(TaskId{t}) == TaskKind::A2A && g.device(TaskId{t}).value == d ? 1u : 0u;
    }
    EXPECT_EQ(a2a_tasks, 32u - 2 * pairs) << d;
  }
  // The simulation runs (no cycle), and a device's tasks never overlap on its compute lane.
  const auto r = simulator::simulate(g, {});
  for (std::uint32_t d = 0; d < 4; ++d) {
    TimeNs end = 0;
    for (const TaskId t : r.trace.events(DeviceId{d})) {
      EXPECT_GE(r.trace.start_of(t), end);
      end = r.trace.finish_of(t);
    }
  }
}

// Schedules without pairs (1F1B) or costs without anything to overlap leave pairs alone.
TEST(OverlappedPairs, OnlyWhenThereIsSomethingToOverlap) {
  const TaskCosts c{.forward = 1000, .backward = 1000, .weight = 500};
  const CostTable costs(c);
  EXPECT_FALSE(overlaps_pairs(plan_schedule(pipeline_spec("dualpipe", 4, 8, 2), costs), costs));
  TaskCosts measured = c;
  measured.forward_backward = 1800;
  EXPECT_FALSE(overlaps_pairs(plan_schedule(pipeline_spec("1f1b", 4, 8), CostTable(measured)),
                              CostTable(measured)));
  EXPECT_TRUE(overlaps_pairs(plan_schedule(pipeline_spec("dualpipe", 4, 8, 2), CostTable(measured)),
                             CostTable(measured)));
}

}  // namespace
}  // namespace perflow::parallel

namespace perflow::parallel {
namespace {

// Recomputation with pairs: a pair's backward gets its R right before the pair's F, so the
// pair stays one unit; every other backward gets it right before itself. A free R changes
// no time; a costly one never shortens the step.
TEST(OverlappedPairs, RecomputeBeforeThePair) {
  for (const TimeNs r : {TimeNs{0}, TimeNs{300}}) {
    TaskCosts c{.forward = 1000, .backward = 1000, .weight = 500, .activation = 10};
    c.forward_backward = 2300;
    c.recompute = true;
    c.recompute_forward = r;
    c.recompute_activation = 2;
    const CostTable costs(c);
    TaskCosts plain_costs = c;
    plain_costs.recompute = false;
    const CostTable plain(plain_costs);
    const PipelineSpec spec = pipeline_spec("dualpipe", 4, 8, 2);
    const PipelinePlan plan = plan_schedule(spec, costs);
    const EventGraph paired = overlap_pairs(build_pipeline_graph(plan, costs), plan, costs);
    const EventGraph g = add_recompute(paired, costs);
    EXPECT_EQ(overlapped_pair_count(g), overlapped_pair_count(paired));
    for (std::uint32_t d = 0; d < 4; ++d) {
      const auto program = g.program(DeviceId{d});
      for (std::size_t i = 0; i < program.size(); ++i) {
        const TaskId t = program[i];
        if (g.kind(t) != TaskKind::B && g.kind(t) != TaskKind::BW) continue;
        // Its R: right before it, or right before its pair's F.
        const std::size_t at = g.paired(t) ? i - 2 : i - 1;
        ASSERT_GE(i, g.paired(t) ? 2u : 1u);
        EXPECT_EQ(g.kind(program[at]), TaskKind::R) << g.label(t) << " on device " << d;
        EXPECT_EQ(g.microbatch(program[at]), g.microbatch(t));
        EXPECT_EQ(g.chunk(program[at]), g.chunk(t));
        if (g.paired(t)) {
          EXPECT_EQ(g.kind(program[i - 1]), TaskKind::F);
        }
      }
    }
    const auto with = simulator::simulate(g, {});
    const auto without =
        simulator::simulate(overlap_pairs(build_pipeline_graph(plan, plain), plan, plain), {});
    if (r == 0) {
      EXPECT_EQ(with.metrics.makespan, without.metrics.makespan);
    } else {
      EXPECT_GT(with.metrics.makespan, without.metrics.makespan);
    }
    for (std::uint32_t d = 0; d < 4; ++d) {
      EXPECT_LT(with.metrics.devices[d].peak_memory, without.metrics.devices[d].peak_memory);
    }
  }
}

}  // namespace
}  // namespace perflow::parallel

namespace perflow::parallel {
namespace {

std::string program_text(const std::vector<Step>& program) {
  std::string out;
  for (const Step& s : program) {
    out += fmt::format("{}{}{} ", to_string(s.kind), s.microbatch,
                       s.chunk > 0 ? fmt::format(".{}", s.chunk) : std::string());
  }
  return out;
}

// Megatron-Core's combined 1F1B without a pipeline (combined_1f1b_schedule_for_no_pipelining):
// F0, then F(i+1) with B(i), then the last backward. 1 stage, 4 microbatches, F 10, BW 20,
// each with a 5 ns all-to-all:
//   without the overlap: 4 x (5 + 10) + 4 x (5 + 20) = 160
//   with it: A2A + F0 = 15; three pairs of max(10 + 20, 5 + 5, 10 + 5, 20 + 5) = 30;
//            A2A + BW3 = 25: 130.
TEST(ExpertOverlap, OneStageRunsEachForwardWithThePreviousBackward) {
  TaskCosts c{.forward = 10, .backward = 20, .weight = 0};
  c.all_to_all = 5;
  const CostTable costs(c);
  const PipelinePlan plain = plan_schedule(pipeline_spec("1f1b", 1, 4), costs);
  const PipelinePlan plan = overlap_expert_all_to_all(plain);
  EXPECT_EQ(program_text(plan.programs[0]), "F0 F1 BW0 F2 BW1 F3 BW2 BW3 ");
  EXPECT_EQ(plan.overlapped_pairs[0], (std::vector<std::uint32_t>{1, 3, 5}));
  const auto makespan = [&](const PipelinePlan& p) {
    EventGraph g = build_pipeline_graph(p, costs);
    if (overlaps_pairs(p, costs)) g = overlap_pairs(std::move(g), p, costs);
    return simulator::simulate(add_all_to_all(std::move(g), costs), {}).metrics.makespan;
  };
  EXPECT_EQ(makespan(plain), 160);
  EXPECT_EQ(makespan(plan), 130);
}

// Interleaved 1F1B (Megatron-Core's get_pp_rank_microbatches: one more warm-up forward with
// the overlap): each device's forwards and backwards keep their order, the warm-up grows by
// one, and every pair joins a forward and a backward of different microbatches or chunks.
TEST(ExpertOverlap, InterleavedGainsOneWarmUpForward) {
  TaskCosts c{.forward = 10, .backward = 20, .weight = 0};
  c.all_to_all = 5;
  const CostTable costs(c);
  const PipelinePlan plain = plan_schedule(pipeline_spec("interleaved-1f1b", 4, 8, 2), costs);
  const PipelinePlan plan = overlap_expert_all_to_all(plain);
  for (std::uint32_t d = 0; d < 4; ++d) {
    const auto split = [](const std::vector<Step>& program, bool forward) {
      std::vector<Step> out;
      std::copy_if(program.begin(), program.end(), std::back_inserter(out),
                   [&](const Step& s) { return (s.kind == TaskKind::F) == forward; });
      return out;
    };
    EXPECT_EQ(split(plan.programs[d], true), split(plain.programs[d], true));
    EXPECT_EQ(split(plan.programs[d], false), split(plain.programs[d], false));
    const auto warmup = [](const std::vector<Step>& program) {
      return std::find_if(program.begin(), program.end(),
                          [](const Step& s) { return s.kind != TaskKind::F; }) -
             program.begin();
    };
    EXPECT_EQ(warmup(plan.programs[d]),
              std::min<std::ptrdiff_t>(warmup(plain.programs[d]) + 1, 16));
    for (const std::uint32_t i : plan.overlapped_pairs[d]) {
      const Step f = plan.programs[d][i];
      const Step b = plan.programs[d][i + 1];
      EXPECT_EQ(f.kind, TaskKind::F);
      EXPECT_NE(f.kind, b.kind);
      EXPECT_FALSE(f.microbatch == b.microbatch && f.chunk == b.chunk);
    }
  }
  // It runs (no deadlock), and hides all-to-all time: shorter than without the overlap.
  const auto makespan = [&](const PipelinePlan& p) {
    EventGraph g = build_pipeline_graph(p, costs);
    if (overlaps_pairs(p, costs)) g = overlap_pairs(std::move(g), p, costs);
    return simulator::simulate(add_all_to_all(std::move(g), costs), {}).metrics.makespan;
  };
  EXPECT_LT(makespan(plan), makespan(plain));
}

TEST(ExpertOverlap, RefusesProgramsThatAreNotOneForwardOneBackward) {
  const CostTable costs(TaskCosts{.forward = 10, .backward = 20, .weight = 5});
  // ZB-H1 splits backwards into B and W.
  EXPECT_THROW((void)overlap_expert_all_to_all(plan_schedule(pipeline_spec("zb-h1", 4, 8), costs)),
               ScheduleError);
  // GPipe runs every forward before any backward: nothing alternates, but it is of the form
  // F^w B^c, which gains one pair-free rewrite: its programs stay as they are.
  const PipelinePlan gpipe = plan_schedule(pipeline_spec("gpipe", 2, 4), costs);
  const PipelinePlan same = overlap_expert_all_to_all(gpipe);
  EXPECT_EQ(same.programs, gpipe.programs);
  EXPECT_TRUE(same.overlapped_pairs[0].empty());
}

}  // namespace
}  // namespace perflow::parallel
