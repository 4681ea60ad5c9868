#include "perflow/parallel/offload.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/data_parallel.hpp"
#include "perflow/parallel/iterations.hpp"
#include "perflow/parallel/recompute.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/memory_timeline.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::parallel {
namespace {

using testing::order_string;
using testing::pipeline_spec;

using Span = std::pair<TimeNs, TimeNs>;

// A lane's executed task labels joined by spaces.
std::string lane_order(const EventGraph& g, const Trace& trace, LaneId lane) {
  std::string out;
  for (const TaskId t : trace.events(lane)) {
    if (!out.empty()) out += ' ';
    out += g.label(t);
  }
  return out;
}

// Device d's lane `name` ("to host" or "from host"; invalid if it has none).
LaneId named_lane(const EventGraph& g, std::uint32_t d, std::string_view name) {
  for (std::uint32_t l = g.device_count(); l < g.lane_count(); ++l) {
    if (g.lane_info(LaneId{l}).device == DeviceId{d} && g.lane_info(LaneId{l}).name == name)
      return LaneId{l};
  }
  return {};
}
LaneId to_host(const EventGraph& g, std::uint32_t d) { return named_lane(g, d, "to host"); }
LaneId from_host(const EventGraph& g, std::uint32_t d) { return named_lane(g, d, "from host"); }

// The microbatches whose activations device d copies out, sorted.
std::vector<std::uint32_t> offloaded(const EventGraph& g, std::uint32_t d) {
  std::vector<std::uint32_t> out;
  const LaneId lane = to_host(g, d);
  if (!lane.valid()) return out;
  for (const TaskId t : g.program(lane)) {
    if (g.kind(t) == TaskKind::D2H) out.push_back(g.microbatch(t));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t count_kind(const EventGraph& g, TaskKind kind) {
  return static_cast<std::size_t>(std::count(g.kinds().begin(), g.kinds().end(), kind));
}

OffloadSpec everything(std::uint32_t stages, std::uint32_t chunks, double ratio, HostLink link) {
  OffloadSpec spec;
  spec.chunks = chunks;
  spec.ratio.assign(std::size_t{stages} * chunks, ratio);
  spec.host_link.assign(stages, link);
  return spec;
}

// 1F1B, 3 stages x 4 microbatches, F = 1000, BW = 2000, activation 1000 bytes, host link
// 1 GB/s without latency (a copy takes 1000 ns), only stage 0 offloads (ratio 1).
//
// Device 0 runs F0 F1 F2 BW0 F3 BW1 BW2 BW3 (positions 0..7). Pairs F -> consumer:
// 0 -> 3, 1 -> 5, 2 -> 6, 4 -> 7: all at least 3 apart, so all four are eligible. Each D2H
// is issued at its F; each H2D at the task two before its consumer: H2D0 after F1 (1), H2D1
// after BW0 (3), H2D2 after F3 (4), H2D3 after BW1 (5). One lane per direction, each in
// issue order: to host D2H0 D2H1 D2H2 D2H3, from host H2D0 H2D1 H2D2 H2D3.
//
// Compute without offloading (ns): d0 F0 [0,1000] F1 [1000,2000] F2 [2000,3000]
// BW0 [7000,9000] F3 [9000,10000] BW1 [10000,12000] BW2 [13000,15000] BW3 [16000,18000];
// makespan 18000. The copies (each waiting for its task, its copy out and its lane):
//   to host:   D2H0 [1000,2000]  D2H1 [2000,3000]  D2H2 [3000,4000]  D2H3 [10000,11000]
//   from host: H2D0 [2000,3000] (F1 and D2H0 end at 2000)  H2D1 [9000,10000] (BW0 ends)
//              H2D2 [10000,11000] (F3 ends)  H2D3 [12000,13000] (BW1 ends)
// Every consumer's reload is done by the time its gradient arrives (BW1 starts at 10000,
// the end of H2D1, exactly), so the compute times and the makespan do not change.
//
// Memory of device 0 over time (allocation at a task's start, free at its finish; the value
// after all changes at an instant), in activations: [0,1000) 1 (F0); [1000,2000) 2 (F0 F1);
// at 2000 F0 leaves, F2 starts and F0 comes back: 3 (F0 F1 F2, as without offloading: F0's
// reload is issued as soon as it left); 3000 F1 out: 2; 4000 F2 out: 1 (F0); 9000 BW0 frees
// F0, F3 starts, F1 comes back: 2; 10000 F2 comes back: 3; 11000 F3 out: 2; 12000 BW1 frees
// F1, F3 comes back: 2; 15000: 1; 18000: 0. The peak stays 3000 bytes: with copies back
// issued two tasks ahead, this short pipeline has nothing to gain.
TEST(Offload, OneFOneBThreeStagesHandSimulated) {
  const CostTable costs({.forward = 1000, .backward = 2000, .weight = 0, .activation = 1000});
  const EventGraph original = build_schedule(pipeline_spec("1f1b", 3, 4), costs);
  OffloadSpec spec;
  spec.ratio = {1.0};  // stage 0; the others: 0
  spec.host_link = {HostLink{0, 1e9}};
  const EventGraph g = add_offload(original, spec);
  ASSERT_EQ(g.task_count(), original.task_count() + 8);
  ASSERT_EQ(g.lane_count(), 5u);
  EXPECT_EQ(g.lane_info(LaneId{3}).name, "to host");
  EXPECT_EQ(g.lane_info(LaneId{4}).name, "from host");
  EXPECT_EQ(g.lane_info(LaneId{3}).device, DeviceId{0});
  EXPECT_EQ(g.lane_info(LaneId{4}).device, DeviceId{0});
  for (std::uint32_t t = 0; t < original.task_count(); ++t) {
    EXPECT_EQ(g.label(TaskId{t}), original.label(TaskId{t}));
  }

  const simulator::SimulationResult base = simulator::simulate(original);
  const simulator::SimulationResult r = simulator::simulate(g);
  EXPECT_EQ(base.metrics.makespan, 18000);
  EXPECT_EQ(r.metrics.makespan, 18000);
  EXPECT_EQ(order_string(g, r.trace, 0), "F0.0 F1.0 F2.0 BW0.0 F3.0 BW1.0 BW2.0 BW3.0");
  EXPECT_EQ(lane_order(g, r.trace, LaneId{3}), "D2H0.0 D2H1.0 D2H2.0 D2H3.0");
  EXPECT_EQ(lane_order(g, r.trace, LaneId{4}), "H2D0.0 H2D1.0 H2D2.0 H2D3.0");
  std::vector<Span> copies;
  for (const std::uint32_t l : {3u, 4u}) {
    for (const TaskId t : r.trace.events(LaneId{l})) {
      copies.emplace_back(r.trace.start_of(t), r.trace.finish_of(t));
      EXPECT_EQ(g.duration(t), 1000);
      EXPECT_EQ(g.memory_delta(t), g.kind(t) == TaskKind::D2H ? -1000.0 : 1000.0);
    }
  }
  EXPECT_EQ(copies, (std::vector<Span>{{1000, 2000},
                                       {2000, 3000},
                                       {3000, 4000},
                                       {10000, 11000},
                                       {2000, 3000},
                                       {9000, 10000},
                                       {10000, 11000},
                                       {12000, 13000}}));
  std::vector<Span> compute;
  for (const TaskId t : r.trace.events(DeviceId{0})) {
    compute.emplace_back(r.trace.start_of(t), r.trace.finish_of(t));
  }
  EXPECT_EQ(compute, (std::vector<Span>{{0, 1000},
                                        {1000, 2000},
                                        {2000, 3000},
                                        {7000, 9000},
                                        {9000, 10000},
                                        {10000, 12000},
                                        {13000, 15000},
                                        {16000, 18000}}));

  EXPECT_EQ(base.metrics.devices[0].peak_memory, 3000.0);
  EXPECT_EQ(r.metrics.devices[0].peak_memory, 3000.0);
  EXPECT_EQ(simulator::activation_memory(g, r.trace, DeviceId{0}),
            (std::vector<simulator::MemoryPoint>{{0, 1000},
                                                 {1000, 2000},
                                                 {2000, 3000},
                                                 {3000, 2000},
                                                 {4000, 1000},
                                                 {9000, 2000},
                                                 {10000, 3000},
                                                 {11000, 2000},
                                                 {15000, 1000},
                                                 {18000, 0}}));
  EXPECT_EQ(r.metrics.devices[0].host_copy, 8000);
  EXPECT_EQ(r.metrics.devices[0].communication, 0);
  for (std::uint32_t d = 1; d < 3; ++d) {
    EXPECT_EQ(r.metrics.devices[d].host_copy, 0);
    EXPECT_EQ(r.metrics.devices[d].peak_memory, base.metrics.devices[d].peak_memory);
  }

  // Every stage at ratio 1: device 1 (F0 F1 BW0 F2 BW1 F3 BW2 BW3) has two eligible
  // activations, 1 (1 -> 4) and 2 (3 -> 6); 0 and 3 are consumed two tasks after their F.
  // Device 2 alternates F and BW: nothing is eligible, and it gets no host link.
  const EventGraph all = add_offload(original, everything(3, 1, 1.0, HostLink{0, 1e9}));
  EXPECT_EQ(offloaded(all, 0), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(offloaded(all, 1), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_FALSE(to_host(all, 2).valid());
  EXPECT_EQ(all.lane_count(), 7u);
}

// 1F1B 4 x 8 at ratio 0.5: each stage offloads round(0.5 x 8) = 4 activations, the
// longest-lived eligible ones (ties: the earlier F). Lifetimes (program positions between F
// and BW): device 0 (F0 F1 F2 F3 BW0 F4 BW1 F5 BW2 F6 BW3 F7 BW4 BW5 BW6 BW7) 4 5 6 7 7 6 5 4:
// 2 3 4 5; device 1 3 4 5 5 5 5 4 3: 2 3 4 5; device 2 2 3 3 3 3 3 3 2: the first four of
// lifetime 3, 1 2 3 4; device 3 1 everywhere: none.
TEST(Offload, RatioChoosesTheLongestLivedEligible) {
  const CostTable costs({.forward = 1000, .backward = 2000, .weight = 0, .activation = 1000});
  const EventGraph original = build_schedule(pipeline_spec("1f1b", 4, 8), costs);
  const EventGraph g = add_offload(original, everything(4, 1, 0.5, HostLink{0, 1e9}));
  EXPECT_EQ(offloaded(g, 0), (std::vector<std::uint32_t>{2, 3, 4, 5}));
  EXPECT_EQ(offloaded(g, 1), (std::vector<std::uint32_t>{2, 3, 4, 5}));
  EXPECT_EQ(offloaded(g, 2), (std::vector<std::uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(offloaded(g, 3), std::vector<std::uint32_t>{});
  EXPECT_EQ(count_kind(g, TaskKind::D2H), 12u);
  EXPECT_EQ(count_kind(g, TaskKind::H2D), 12u);
  // The same from the programs: no unchosen eligible activation outlives a chosen one.
  for (std::uint32_t d = 0; d < 3; ++d) {
    const auto program = original.program(DeviceId{d});
    std::map<std::uint32_t, std::size_t> f_at, bw_at;
    for (std::size_t i = 0; i < program.size(); ++i) {
      (original.kind(program[i]) == TaskKind::F ? f_at : bw_at)[original.microbatch(program[i])] =
          i;
    }
    const std::vector<std::uint32_t> chosen = offloaded(g, d);
    std::size_t shortest_chosen = SIZE_MAX, longest_other = 0;
    for (std::uint32_t mb = 0; mb < 8; ++mb) {
      const std::size_t life = bw_at[mb] - f_at[mb];
      if (std::find(chosen.begin(), chosen.end(), mb) != chosen.end()) {
        EXPECT_GE(life, 3u);
        shortest_chosen = std::min(shortest_chosen, life);
      } else if (life >= 3) {
        longest_other = std::max(longest_other, life);
      }
    }
    EXPECT_GE(shortest_chosen, longest_other) << "device " << d;
  }
  // Ratios per (stage, chunk), stage-major, past the end 0; a ratio of 0 offloads nothing.
  OffloadSpec some = everything(4, 1, 0.0, HostLink{0, 1e9});
  some.ratio[1] = 0.25;  // 2 of device 1's
  const EventGraph one = add_offload(original, some);
  EXPECT_EQ(offloaded(one, 0), std::vector<std::uint32_t>{});
  EXPECT_EQ(offloaded(one, 1), (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(add_offload(original, everything(4, 1, 0.0, HostLink{})).task_count(),
            original.task_count());
}

// Optimizer state in host memory: an H2D before each device's OPT (issued after the task
// two before it) and a D2H after it. 1F1B 2 x 2, F = B = W = 1000 (BW 2000), optimizer steps
// 500 and 700 ns, 2000 and 3000 bytes over 1 GB/s, no activation memory.
//   d0: F0 [0,1000] F1 [1000,2000] BW0 [4000,6000] BW1 [7000,9000] OPT
//       H2D after BW0: [6000,8000]; OPT [9000,9500] (BW1); D2H [9500,11500]
//   d1: F0 [1000,2000] BW0 [2000,4000] F1 [4000,5000] BW1 [5000,7000] OPT
//       H2D after F1: [5000,8000]; OPT [8000,8700]: waits 1000 for the H2D; D2H [8700,11700]
TEST(Offload, OptimizerStateComesInBeforeTheStepAndGoesBackAfter) {
  const EventGraph one = build_schedule(pipeline_spec("1f1b", 2, 2), CostTable({1000, 1000, 1000}));
  DataParallelSpec dp;
  dp.optimizer = {500, 700};
  const EventGraph stepped = add_data_parallel(one, dp);
  OffloadSpec spec;
  spec.host_link.assign(2, HostLink{0, 1e9});
  spec.optimizer_bytes = {2000, 3000};
  const EventGraph g = add_offload(stepped, spec);
  ASSERT_EQ(g.task_count(), stepped.task_count() + 4);
  const simulator::SimulationResult r = simulator::simulate(g);
  EXPECT_EQ(order_string(g, r.trace, 0), "F0.0 F1.0 BW0.0 BW1.0 OPT0.0");
  EXPECT_EQ(order_string(g, r.trace, 1), "F0.0 BW0.0 F1.0 BW1.0 OPT0.0");
  const std::vector<std::pair<Span, Span>> expected_copies = {{{6000, 8000}, {9500, 11500}},
                                                              {{5000, 8000}, {8700, 11700}}};
  const std::vector<Span> expected_opt = {{9000, 9500}, {8000, 8700}};
  const std::vector<double> bytes = {2000, 3000};
  for (std::uint32_t d = 0; d < 2; ++d) {
    SCOPED_TRACE(d);
    ASSERT_TRUE(to_host(g, d).valid());
    EXPECT_EQ(lane_order(g, r.trace, from_host(g, d)), "H2D0.0");
    EXPECT_EQ(lane_order(g, r.trace, to_host(g, d)), "D2H0.0");
    const std::vector<TaskId> copies = {r.trace.events(from_host(g, d))[0],
                                        r.trace.events(to_host(g, d))[0]};
    const TaskId opt = r.trace.events(DeviceId{d}).back();
    EXPECT_EQ(g.kind(opt), TaskKind::Optimizer);
    EXPECT_EQ((Span{r.trace.start_of(opt), r.trace.finish_of(opt)}), expected_opt[d]);
    EXPECT_EQ((Span{r.trace.start_of(copies[0]), r.trace.finish_of(copies[0])}),
              expected_copies[d].first);
    EXPECT_EQ((Span{r.trace.start_of(copies[1]), r.trace.finish_of(copies[1])}),
              expected_copies[d].second);
    EXPECT_GE(r.trace.start_of(opt), r.trace.finish_of(copies[0]));
    EXPECT_GE(r.trace.start_of(copies[1]), r.trace.finish_of(opt));
    EXPECT_EQ(g.memory_delta(copies[0]), bytes[d]);
    EXPECT_EQ(g.memory_delta(copies[1]), -bytes[d]);
    EXPECT_EQ(r.metrics.devices[d].peak_memory, bytes[d]);
    EXPECT_EQ(r.metrics.devices[d].host_copy, TimeNs{2} * static_cast<TimeNs>(bytes[d]));
  }
  EXPECT_EQ(r.metrics.makespan, 11700);
  EXPECT_EQ(simulator::simulate(stepped).metrics.makespan, 9500);
}

// The optimizer state's write-back does not hold up the next iteration: with the graph
// above (OPT ends at 9500 on device 0 and 8700 on device 1, the write-backs at 11500 and
// 11700), the synchronous barrier waits for the OPT steps and the copies in, so iteration 1
// starts at 9500, not 11700; its write-backs queue on the same lanes after iteration 0's.
TEST(Offload, OptimizerWriteBackOverlapsTheNextIteration) {
  const EventGraph one = build_schedule(pipeline_spec("1f1b", 2, 2), CostTable({1000, 1000, 1000}));
  DataParallelSpec dp;
  dp.optimizer = {500, 700};
  OffloadSpec spec;
  spec.host_link.assign(2, HostLink{0, 1e9});
  spec.optimizer_bytes = {2000, 3000};
  const EventGraph g = add_offload(add_data_parallel(one, dp), spec);
  for (const bool sync : {true, false}) {
    SCOPED_TRACE(sync);
    const EventGraph two = repeat_iterations(g, IterationSpec{2, sync});
    const simulator::SimulationResult r = simulator::simulate(two);
    const TaskId first = r.trace.events(DeviceId{0})[g.program(DeviceId{0}).size()];
    EXPECT_EQ(two.label(first), "F0.0@1");
    EXPECT_EQ(r.trace.start_of(first), 9500);
    const auto write_backs = r.trace.events(to_host(two, 1));
    ASSERT_EQ(write_backs.size(), 2u);
    EXPECT_GE(r.trace.start_of(write_backs[1]), r.trace.finish_of(write_backs[0]));
  }
}

// Checks one offloaded graph against its original: where each copy sits, what it waits for,
// what waits for it, and that it only moves the schedule later and the memory lower.
void check_offload(const EventGraph& original, const EventGraph& g, TimeNs latency = 0) {
  const simulator::SimulationResult before = simulator::simulate(original, latency);
  const simulator::SimulationResult r = simulator::simulate(g, latency);
  EXPECT_GE(r.metrics.makespan, before.metrics.makespan);
  std::size_t d2h = 0, h2d = 0;
  for (std::uint32_t d = 0; d < g.device_count(); ++d) {
    SCOPED_TRACE(fmt::format("device {}", d));
    EXPECT_LE(r.metrics.devices[d].peak_memory, before.metrics.devices[d].peak_memory);
    // The compute program is unchanged.
    EXPECT_TRUE(std::ranges::equal(g.program(DeviceId{d}), original.program(DeviceId{d})));
    if (!to_host(g, d).valid()) continue;
    const auto program = g.program(DeviceId{d});
    const auto position = [&](TaskId t) {
      return static_cast<std::size_t>(std::find(program.begin(), program.end(), t) -
                                      program.begin());
    };
    TimeNs copy_time = 0;
    for (const LaneId lane : {to_host(g, d), from_host(g, d)}) {
      TimeNs link_free = 0;  // one copy at a time each way
      for (const TaskId c : r.trace.events(lane)) {
        EXPECT_EQ(g.kind(c), lane == to_host(g, d) ? TaskKind::D2H : TaskKind::H2D);
        EXPECT_GE(r.trace.start_of(c), link_free) << g.label(c);
        link_free = r.trace.finish_of(c);
        copy_time += g.duration(c);
        EXPECT_EQ(g.device(c), DeviceId{d});
        std::vector<TaskId> compute_preds, compute_succs;
        for (const Adjacent& p : g.predecessors(c)) {
          if (g.lane(p.task()) == LaneId{d}) compute_preds.push_back(p.task());
        }
        for (const Adjacent& s : g.successors(c)) {
          if (g.lane(s.task()) == LaneId{d}) compute_succs.push_back(s.task());
        }
        if (g.kind(c) == TaskKind::D2H) {
          ++d2h;
          ASSERT_EQ(compute_preds.size(), 1u) << g.label(c);
          const TaskId f = compute_preds[0];
          if (g.kind(f) == TaskKind::Optimizer) continue;
          EXPECT_EQ(g.kind(f), TaskKind::F);
          EXPECT_EQ(g.microbatch(f), g.microbatch(c));
          EXPECT_EQ(g.chunk(f), g.chunk(c));
          EXPECT_GE(r.trace.start_of(c), r.trace.finish_of(f)) << g.label(c);
          EXPECT_EQ(g.memory_delta(c), -g.memory_delta(f));
          EXPECT_TRUE(compute_succs.empty()) << g.label(c);
        } else {
          ASSERT_EQ(g.kind(c), TaskKind::H2D);
          ++h2d;
          ASSERT_EQ(compute_succs.size(), 1u) << g.label(c);
          const TaskId consumer = compute_succs[0];
          EXPECT_GE(r.trace.start_of(consumer), r.trace.finish_of(c)) << g.label(c);
          const std::size_t at = position(consumer);
          ASSERT_LT(at, program.size());
          if (g.kind(consumer) == TaskKind::Optimizer) continue;
          EXPECT_TRUE(g.kind(consumer) == TaskKind::R || g.kind(consumer) == TaskKind::B ||
                      g.kind(consumer) == TaskKind::BW)
              << g.label(consumer);
          EXPECT_EQ(g.microbatch(consumer), g.microbatch(c));
          EXPECT_EQ(g.chunk(consumer), g.chunk(c));
          // Issued after the task two before its consumer, and after its own copy out, which
          // follows an F at least three tasks before the consumer.
          ASSERT_GE(at, 3u);
          EXPECT_GE(r.trace.start_of(c), r.trace.finish_of(program[at - 2])) << g.label(c);
          ASSERT_EQ(compute_preds.size(), 1u);
          EXPECT_EQ(compute_preds[0], program[at - 2]);
          TaskId out;
          for (const Adjacent& p : g.predecessors(c)) {
            if (g.kind(p.task()) == TaskKind::D2H) out = p.task();
          }
          ASSERT_TRUE(out.valid()) << g.label(c);
          EXPECT_GE(r.trace.start_of(c), r.trace.finish_of(out));
          TaskId f;
          for (const Adjacent& p : g.predecessors(out)) f = p.task();
          EXPECT_GE(at, position(f) + 3) << g.label(c);
          // The first consumer of that F after it: nothing of its microbatch and chunk between.
          for (std::size_t i = position(f) + 1; i < at; ++i) {
            const bool same = g.microbatch(program[i]) == g.microbatch(f) &&
                              g.chunk(program[i]) == g.chunk(f) &&
                              g.stage(program[i]) == g.stage(f);
            EXPECT_FALSE(same && g.kind(program[i]) != TaskKind::F) << g.label(program[i]);
          }
        }
      }
    }
    EXPECT_EQ(r.metrics.devices[d].host_copy, copy_time);
  }
  EXPECT_EQ(d2h, h2d);
}

struct Case {
  std::string schedule;
  std::uint32_t chunks;
  bool split;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"gpipe", 1, false}, {"1f1b", 1, false},   {"1f1b", 1, true},
      {"zb-h1", 1, false}, {"zb-h2", 1, false},  {"interleaved-1f1b", 2, false},
      {"zbv", 2, false},   {"1f1b-v", 2, false}, {"dualpipev", 2, false},
  };
  return all;
}

const std::vector<TaskCosts>& cost_sets() {
  static const std::vector<TaskCosts> all = {
      {.forward = 1000, .backward = 2000, .weight = 0, .activation = 1000, .backward_frees = 0.5},
      {.forward = 1000,
       .backward = 1500,
       .weight = 2500,
       .activation = 3000,
       .backward_frees = 0.25},
  };
  return all;
}

EventGraph build(const Case& c, const TaskCosts& costs, bool recompute = false) {
  PipelineSpec spec = pipeline_spec(c.schedule, 4, 8, c.chunks);
  spec.split_backward = c.split;
  TaskCosts with = costs;
  if (recompute) {
    with.recompute = true;
    with.recompute_forward = 400;
    with.recompute_activation = costs.activation / 4;
  }
  const CostTable table(with);
  const EventGraph g = build_schedule(spec, table);
  return recompute ? add_recompute(g, table) : g;
}

// Over several schedules, cost sets, ratios and links (slow and fast, with latency),
// recomputation or not: every copy where the spec puts it, waited for as it says.
TEST(Offload, InvariantsOverSchedules) {
  std::size_t checked = 0;
  for (const Case& c : cases()) {
    for (std::size_t k = 0; k < cost_sets().size(); ++k) {
      for (const bool recompute : {false, true}) {
        const EventGraph original = build(c, cost_sets()[k], recompute);
        for (const double ratio : {0.5, 1.0}) {
          for (const HostLink link : {HostLink{0, 1e9}, HostLink{300, 4e9}, HostLink{50, 0}}) {
            for (const TimeNs latency : {TimeNs{0}, TimeNs{200}}) {
              SCOPED_TRACE(
                  fmt::format("{} v={} split={} costs #{} recompute={} ratio {} link {} "
                              "{} latency {}",
                              c.schedule, c.chunks, c.split, k, recompute, ratio, link.latency,
                              link.bandwidth, latency));
              const EventGraph g = add_offload(original, everything(4, c.chunks, ratio, link));
              EXPECT_GT(count_kind(g, TaskKind::D2H), 0u);
              check_offload(original, g, latency);
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, cases().size() * 2 * 2 * 2 * 3 * 2);
}

// Free copies (no latency, unlimited bandwidth) change nothing but the memory: the makespan
// and every compute task's times are those without offloading.
TEST(Offload, FreeCopiesKeepTheSchedule) {
  for (const Case& c : cases()) {
    for (const TaskCosts& costs : cost_sets()) {
      SCOPED_TRACE(c.schedule);
      const EventGraph original = build(c, costs);
      const EventGraph g = add_offload(original, everything(4, c.chunks, 1.0, HostLink{0, 0}));
      EXPECT_GT(count_kind(g, TaskKind::H2D), 0u);
      for (const TimeNs latency : {TimeNs{0}, TimeNs{200}}) {
        const simulator::SimulationResult before = simulator::simulate(original, latency);
        const simulator::SimulationResult after = simulator::simulate(g, latency);
        EXPECT_EQ(after.metrics.makespan, before.metrics.makespan);
        for (std::uint32_t t = 0; t < original.task_count(); ++t) {
          EXPECT_EQ(after.trace.start[t], before.trace.start[t]) << original.label(TaskId{t});
        }
        for (std::uint32_t d = 0; d < g.device_count(); ++d) {
          EXPECT_EQ(after.metrics.devices[d].host_copy, 0);
          EXPECT_LE(after.metrics.devices[d].peak_memory, before.metrics.devices[d].peak_memory);
        }
      }
    }
  }
}

// Budget mode: a budget at or above the peak without offloading copies nothing; below it,
// copies that cost nothing bring the peak down, and the choice is the same every time.
TEST(Offload, BudgetOffloadsOnlyWhatItMust) {
  for (const Case& c : cases()) {
    for (const TaskCosts& costs : cost_sets()) {
      SCOPED_TRACE(c.schedule);
      const EventGraph original = build(c, costs);
      const simulator::SimulationResult before = simulator::simulate(original);
      OffloadSpec spec;
      spec.chunks = c.chunks;
      spec.host_link.assign(4, HostLink{0, 0});
      spec.ratio.assign(std::size_t{4} * c.chunks, 1.0);  // ignored where a budget is set
      for (std::uint32_t d = 0; d < 4; ++d) {
        spec.budget.emplace_back(before.metrics.devices[d].peak_memory);
      }
      EXPECT_EQ(add_offload(original, spec).task_count(), original.task_count());
      for (std::uint32_t d = 0; d < 4; ++d) *spec.budget[d] += 1;
      EXPECT_EQ(add_offload(original, spec).task_count(), original.task_count());

      // Half of device 0's peak (the one holding the most activations in a 1F1B-like order).
      const double peak0 = before.metrics.devices[0].peak_memory;
      spec.budget = {peak0 / 2};  // the other devices: no budget, so their ratio (1) applies
      spec.ratio.assign(std::size_t{4} * c.chunks, 0.0);
      const EventGraph g = add_offload(original, spec);
      EXPECT_GT(offloaded(g, 0).size(), 0u);
      for (std::uint32_t d = 1; d < 4; ++d) EXPECT_FALSE(to_host(g, d).valid());
      const simulator::SimulationResult after = simulator::simulate(g);
      EXPECT_LT(after.metrics.devices[0].peak_memory, peak0);
      EXPECT_EQ(after.metrics.makespan, before.metrics.makespan);
      check_offload(original, g);
      const EventGraph again = add_offload(original, spec);
      ASSERT_EQ(again.task_count(), g.task_count());
      for (std::uint32_t t = 0; t < g.task_count(); ++t) {
        EXPECT_EQ(again.label(TaskId{t}), g.label(TaskId{t}));
        EXPECT_EQ(again.lane(TaskId{t}), g.lane(TaskId{t}));
      }
      EXPECT_EQ(lane_order(again, simulator::simulate(again).trace, to_host(again, 0)),
                lane_order(g, after.trace, to_host(g, 0)));
    }
  }
}

// Budget mode by hand: 1F1B 4 x 8, device 0 runs F0 F1 F2 F3 BW0 F4 BW1 F5 ... (positions
// 0..15), activation 1000 each, budget 2000. Counted in program order: at F2 (3000) F0 is
// available (copied out during F1) and goes; at F3 F0 is back for BW0 (4000 with F1 F2 F3):
// F1 goes (3000; F2 is not out before position 4). At F4: F1 back (F1 F2 F3 F4, 4000): F3
// (needed at 10) and F2 (8) go. At F5 (position 7; F2 back): F2 F4 F5 = 3000: F4 (needed at
// 12) goes. At F6 (9; F3 back): F3 F5 F6 = 3000: F5 (13) goes. At F7 (11; F4 back): F4 F6
// F7 = 3000: F6 (14) goes. At BW4 (12) F5 comes back as F4 is freed, at BW5 (13) F6 as F5
// is: 2000 each time, so F7 stays. Chosen: 0 1 2 3 4 5 6.
TEST(Offload, BudgetFollowsBeladyByHand) {
  const CostTable costs({.forward = 1000, .backward = 2000, .weight = 0, .activation = 1000});
  const EventGraph original = build_schedule(pipeline_spec("1f1b", 4, 8), costs);
  OffloadSpec spec;
  spec.budget = {2000.0};
  spec.host_link = {HostLink{0, 0}};
  const EventGraph g = add_offload(original, spec);
  EXPECT_EQ(offloaded(g, 0), (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(g.lane_count(), 6u);  // 4 compute lanes, device 0's "to host" and "from host"
}

TEST(Offload, CopyTimeIsLatencyAndBytesRoundedUp) {
  EXPECT_EQ(host_copy_time(HostLink{0, 1e9}, 1000), 1000);
  EXPECT_EQ(host_copy_time(HostLink{100, 3e9}, 1000), 100 + 334);  // 333.3 ns rounded up
  EXPECT_EQ(host_copy_time(HostLink{250, 0}, 1e12), 250);          // unlimited bandwidth
  EXPECT_EQ(host_copy_time(HostLink{250, 1e9}, 0), 250);
  EXPECT_THROW((void)host_copy_time(HostLink{0, 1}, 1e10), ScheduleError);  // 1e19 ns
}

TEST(Offload, RefusesToOffloadTwiceOrWithoutProgramOrder) {
  const CostTable costs({.forward = 1000, .backward = 2000, .weight = 0, .activation = 1000});
  const EventGraph original = build_schedule(pipeline_spec("1f1b", 3, 4), costs);
  const OffloadSpec spec = everything(3, 1, 1.0, HostLink{0, 1e9});
  const EventGraph g = add_offload(original, spec);
  ASSERT_GT(g.task_count(), original.task_count());
  EXPECT_THROW((void)add_offload(g, spec), ScheduleError);
  // Nor recomputation twice.
  TaskCosts with{.forward = 1000, .backward = 2000, .weight = 0, .activation = 1000};
  with.recompute = true;
  with.recompute_activation = 100;
  const CostTable recomputing(with);
  const EventGraph r =
      add_recompute(build_schedule(pipeline_spec("1f1b", 3, 4), recomputing), recomputing);
  EXPECT_THROW((void)add_recompute(r, recomputing), ScheduleError);

  EventGraphBuilder bare(1);
  (void)bare.add_task({TaskKind::F, DeviceId{0}, StageId{0}, 0, 0, 5, 10.0});
  const EventGraph unordered = std::move(bare).freeze();
  EXPECT_THROW((void)add_offload(unordered, spec), ScheduleError);
  EXPECT_THROW((void)add_recompute(unordered, recomputing), ScheduleError);
}

}  // namespace
}  // namespace perflow::parallel
