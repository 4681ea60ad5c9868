// The trace operators: filter then merge gives back the original simulation exactly (a
// property over every registered schedule, seeded, several ways of splitting the stages);
// the heterogeneous H100 + A100 workflow equals a direct build with per-stage costs; remap
// and scale against hand-computed makespans; and every error with its text.
#include "perflow/trace_op/operators.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/lowering.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::trace_op {
namespace {

using perflow::testing::order_string;

constexpr TimeNs kUs = 1000;

TaskKey key_of(const EventGraph& g, TaskId t) {
  return TaskKey{g.kind(t), g.microbatch(t), g.chunk(t), g.stage(t)};
}

std::vector<StageId> stage_list(std::initializer_list<std::uint32_t> values) {
  std::vector<StageId> out;
  for (const std::uint32_t v : values) out.push_back(StageId{v});
  return out;
}

std::vector<StageId> stage_range(std::uint32_t first, std::uint32_t last) {
  std::vector<StageId> out;
  for (std::uint32_t s = first; s <= last; ++s) out.push_back(StageId{s});
  return out;
}

parallel::PipelineSpec spec_for(const std::string& schedule, std::uint32_t p, std::uint32_t m,
                                std::uint32_t chunks = 1, bool split_backward = false) {
  parallel::PipelineSpec spec;
  spec.schedule = schedule;
  spec.stages = p;
  spec.microbatches = m;
  spec.chunks = chunks;
  spec.split_backward = split_backward;
  return spec;
}

// Runs `fn` expecting an exception of type E; returns its message.
template <class E, class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

// Everything a simulation says that does not depend on task numbering.
struct Outcome {
  TimeNs makespan = 0;
  std::vector<std::string> orders;             // per device, executed labels
  std::map<TaskKey, TimeNs> start;             // by task key (labels repeat across stages)
  std::vector<double> peaks;                   // per device
  std::set<std::pair<TaskKey, TaskKey>> data;  // data dependences by key

  friend bool operator==(const Outcome&, const Outcome&) = default;
};

Outcome outcome(const EventGraph& g, const simulator::SimulationOptions& options = {}) {
  const simulator::SimulationResult r = simulator::simulate(g, options);
  Outcome out;
  out.makespan = r.metrics.makespan;
  for (std::uint32_t d = 0; d < g.device_count(); ++d) {
    out.orders.push_back(order_string(g, r.trace, d));
    out.peaks.push_back(r.metrics.devices[d].peak_memory);
  }
  for (std::uint32_t v = 0; v < g.task_count(); ++v) {
    const TaskId t{v};
    EXPECT_TRUE(out.start.emplace(key_of(g, t), r.trace.start_of(t)).second) << g.label(t);
    for (const Adjacent& s : g.successors(t)) {
      if (s.kind() == EdgeKind::Data) out.data.emplace(key_of(g, t), key_of(g, s.task()));
    }
  }
  return out;
}

// What filter must give for one part: only the part's stages, original order, programs
// restricted, boundaries sorted and unique, each with exactly one end inside.
void check_part(const EventGraph& g, const GraphPart& part) {
  ASSERT_TRUE(std::is_sorted(part.stages.begin(), part.stages.end()));
  const auto inside = [&](StageId s) {
    return std::binary_search(part.stages.begin(), part.stages.end(), s);
  };
  EXPECT_EQ(part.graph.device_count(), g.device_count());
  std::vector<TaskKey> expected;
  for (std::uint32_t v = 0; v < g.task_count(); ++v) {
    if (inside(g.stage(TaskId{v}))) expected.push_back(key_of(g, TaskId{v}));
  }
  std::vector<TaskKey> got;
  for (std::uint32_t v = 0; v < part.graph.task_count(); ++v) {
    got.push_back(key_of(part.graph, TaskId{v}));
  }
  EXPECT_EQ(got, expected);
  for (std::uint32_t d = 0; d < g.device_count(); ++d) {
    std::vector<TaskKey> program;
    for (const TaskId t : g.program(DeviceId{d})) {
      if (inside(g.stage(t))) program.push_back(key_of(g, t));
    }
    std::vector<TaskKey> part_program;
    for (const TaskId t : part.graph.program(DeviceId{d})) {
      part_program.push_back(key_of(part.graph, t));
    }
    EXPECT_EQ(part_program, program) << "device " << d;
  }
  EXPECT_TRUE(std::is_sorted(part.open.begin(), part.open.end()));
  EXPECT_TRUE(std::adjacent_find(part.open.begin(), part.open.end()) == part.open.end());
  for (const Boundary& b : part.open) EXPECT_NE(inside(b.from.stage), inside(b.to.stage));
}

// A few ways of cutting p stages into parts: halves, thirds, singletons, a random partition.
std::vector<std::vector<std::vector<StageId>>> splits(std::uint32_t p, std::mt19937& rng) {
  auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
  };
  std::vector<std::vector<std::vector<StageId>>> out;
  out.push_back({stage_range(0, p - 1)});  // one part: the whole graph
  if (p >= 2) {
    const std::uint32_t cut = pick(1, p - 1);
    out.push_back({stage_range(0, cut - 1), stage_range(cut, p - 1)});
  }
  if (p >= 3) {
    const std::uint32_t a = pick(1, p - 2);
    const std::uint32_t b = pick(a + 1, p - 1);
    out.push_back({stage_range(0, a - 1), stage_range(a, b - 1), stage_range(b, p - 1)});
  }
  std::vector<std::vector<StageId>> singletons;
  for (std::uint32_t s = 0; s < p; ++s) singletons.push_back({StageId{s}});
  out.push_back(singletons);
  // Random, not contiguous: each stage to one of k parts (empty parts dropped).
  const std::uint32_t k = pick(1, p);
  std::vector<std::vector<StageId>> random_parts(k);
  for (std::uint32_t s = 0; s < p; ++s) random_parts[pick(0, k - 1)].push_back(StageId{s});
  std::erase_if(random_parts, [](const auto& part) { return part.empty(); });
  out.push_back(random_parts);
  return out;
}

TEST(FilterMerge, RoundTripReproducesTheSimulationOfEverySchedule) {
  const auto& registry = parallel::builtin_schedules();
  std::map<std::string, int> covered;
  for (const parallel::ScheduleInfo& info : registry.all()) {
    for (std::uint32_t seed = 1; seed <= 6; ++seed) {
      std::mt19937 rng(seed * 7919u + static_cast<std::uint32_t>(covered.size()));
      auto pick = [&](std::uint32_t lo, std::uint32_t hi) {
        return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng);
      };
      // Draw sizes until the schedule accepts them (each schedule has its own constraints).
      EventGraph g;
      parallel::PipelineSpec spec;
      bool built = false;
      for (int attempt = 0; attempt < 200 && !built; ++attempt) {
        spec = spec_for(info.name, pick(1, 6), pick(1, 14), pick(1, 3), pick(0, 1) == 1);
        if (pick(0, 1) == 1) spec.microbatches = 2 * spec.stages + 2 * pick(0, 3);
        if (info.name == "custom") {  // a user order: some other schedule's programs
          parallel::PipelineSpec base = spec;
          base.schedule = spec.chunks == 1 ? "1f1b" : "interleaved-1f1b";
          try {
            for (const auto& program : parallel::plan_schedule(base, {}).programs) {
              spec.order.push_back(program);
            }
          } catch (const ScheduleError&) {
            continue;
          }
        }
        parallel::CostTable costs(parallel::TaskCosts{1, 1, 1, 1.0, 0.5});
        for (std::uint32_t s = 0; s < spec.stages; ++s) {
          for (std::uint32_t c = 0; c < spec.chunks; ++c) {
            costs.set(StageId{s}, c,
                      parallel::TaskCosts{pick(0, 3000), pick(0, 3000), pick(0, 3000),
                                          static_cast<double>(pick(1, 4)), 0.5});
          }
        }
        try {
          g = parallel::build_schedule(spec, costs);
          built = true;
        } catch (const ScheduleError&) {
          spec.order.clear();
        }
      }
      ASSERT_TRUE(built) << info.name << " seed=" << seed;
      ++covered[info.name];
      const TimeNs latency = pick(0, 1) == 0 ? 0 : pick(1, 2000);
      const simulator::SimulationOptions options{latency};
      const Outcome original = outcome(g, options);
      for (auto& parts_stages : splits(spec.stages, rng)) {
        SCOPED_TRACE(fmt::format("seed={} {} p={} m={} v={} split={} latency={} parts={}", seed,
                                 spec.schedule, spec.stages, spec.microbatches, spec.chunks,
                                 spec.split_backward, latency, parts_stages.size()));
        std::vector<GraphPart> parts;
        for (const auto& stages : parts_stages) {
          parts.push_back(filter(g, stages));
          check_part(g, parts.back());
        }
        std::shuffle(parts.begin(), parts.end(), rng);  // the union does not care
        const EventGraph merged = merge(parts);
        EXPECT_EQ(merged.task_count(), g.task_count());
        EXPECT_EQ(merged.device_count(), g.device_count());
        EXPECT_EQ(outcome(merged, options), original);
      }
    }
  }
  for (const parallel::ScheduleInfo& info : registry.all()) {
    EXPECT_EQ(covered[info.name], 6) << info.name;
  }
}

// ZBV, p=8, m=10, two chunks: the first four stages on H100s, the last four on A100s.
parallel::TaskCosts h100() { return {1315 * kUs, 2733 * kUs, 2650 * kUs, 1.0, 0.5}; }
parallel::TaskCosts a100() { return {2743 * kUs, 4563 * kUs, 4324 * kUs, 1.0, 0.5}; }

TEST(FilterMerge, HeterogeneousClusterEqualsPerStageCosts) {
  const parallel::PipelineSpec spec = spec_for("zbv", 8, 10, 2);
  const EventGraph on_h100 = parallel::build_schedule(spec, parallel::CostTable(h100()));
  const EventGraph on_a100 = parallel::build_schedule(spec, parallel::CostTable(a100()));
  const std::vector<GraphPart> parts{filter(on_h100, stage_range(0, 3)),
                                     filter(on_a100, stage_range(4, 7))};
  // Both halves cut the same dependences: F and B cross 3-4 in both chunks.
  EXPECT_EQ(parts[0].open, parts[1].open);
  EXPECT_EQ(parts[0].open.size(), 4u * 10u);
  const EventGraph merged = merge(parts);

  parallel::CostTable mixed;
  for (std::uint32_t s = 0; s < 8; ++s) {
    for (std::uint32_t c = 0; c < 2; ++c) mixed.set(StageId{s}, c, s < 4 ? h100() : a100());
  }
  const EventGraph direct = parallel::build_schedule(spec, mixed);
  const Outcome expected = outcome(direct);
  EXPECT_EQ(outcome(merged), expected);
  // Pinned: the direct build's makespan (per-stage CostTable), computed once with this
  // simulator, so a change to either path shows up even if both drift together. It lies
  // between the all-H100 and all-A100 runs.
  EXPECT_EQ(expected.makespan, 257'200'000);
  EXPECT_LT(outcome(on_h100).makespan, expected.makespan);
  EXPECT_GT(outcome(on_a100).makespan, expected.makespan);
}

TEST(Filter, KeepsStagesProgramsAndOpenBoundaries) {
  // 1F1B, p=3, m=2: stage 1 keeps its four tasks; F and B cross to stages 0 and 2.
  const EventGraph g =
      parallel::build_schedule(spec_for("1f1b", 3, 2), parallel::CostTable({10, 20, 0, 1.0, 0.0}));
  const GraphPart part = filter(g, stage_list({1}));
  EXPECT_EQ(part.stages, stage_list({1}));
  EXPECT_EQ(part.graph.device_count(), 3u);
  ASSERT_EQ(part.graph.task_count(), 4u);
  EXPECT_TRUE(part.graph.program(DeviceId{0}).empty());
  std::vector<std::string> program;
  for (const TaskId t : part.graph.program(DeviceId{1})) program.push_back(part.graph.label(t));
  EXPECT_EQ(program, (std::vector<std::string>{"F0.0", "F1.0", "BW0.0", "BW1.0"}));
  std::vector<std::string> open;
  for (const Boundary& b : part.open) {
    open.push_back(fmt::format("{}{}.{}@{}>{}{}.{}@{}", to_string(b.from.kind), b.from.microbatch,
                               b.from.chunk, b.from.stage.value, to_string(b.to.kind),
                               b.to.microbatch, b.to.chunk, b.to.stage.value));
  }
  EXPECT_EQ(open, (std::vector<std::string>{"F0.0@0>F0.0@1", "F0.0@1>F0.0@2", "F1.0@0>F1.0@1",
                                            "F1.0@1>F1.0@2", "BW0.0@1>BW0.0@0", "BW0.0@2>BW0.0@1",
                                            "BW1.0@1>BW1.0@0", "BW1.0@2>BW1.0@1"}));
  // Stage 1 alone (no predecessors kept from stage 0): F0.0 at 0, F1.0 at 10, ...
  EXPECT_EQ(simulator::simulate(part.graph).metrics.makespan, 10 + 10 + 20 + 20);
}

TEST(Filter, RefusesEmptyRepeatedAndUnknownStages) {
  const EventGraph g = parallel::build_schedule(spec_for("1f1b", 4, 4), {});
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)filter(g, {}); }),
            "filter: no stages given (the graph has stages 0-3)");
  EXPECT_EQ(error_of<ScheduleError>([&] {
              (void)filter(g, stage_list({2, 1, 2}));
            }),
            "filter: stage 2 is listed twice");
  EXPECT_EQ(error_of<ScheduleError>([&] {
              (void)filter(g, stage_list({1, 7, 5}));
            }),
            "filter: stage 7 is not in the graph (it has stages 0-3)");
}

TEST(Merge, RefusesOverlappingParts) {
  const EventGraph g = parallel::build_schedule(spec_for("1f1b", 6, 6), {});
  const std::vector<GraphPart> parts{filter(g, stage_range(0, 3)), filter(g, stage_range(2, 5))};
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)merge(parts); }),
            "merge: stage 2 is in part 0 (stages 0-3) and in part 1 (stages 2-5)");
}

TEST(Merge, RefusesPartsOnTheSameDevice) {
  // Stage 1 moved onto device 0, where part 0's stage 0 already runs.
  const EventGraph g = parallel::build_schedule(spec_for("1f1b", 2, 2), {});
  GraphPart moved = filter(g, stage_list({1}));
  moved.graph = remap(moved.graph, std::vector<DeviceId>{DeviceId{0}, DeviceId{0}});
  const std::vector<GraphPart> parts{filter(g, stage_list({0})), std::move(moved)};
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)merge(parts); }),
            "merge: device 0 runs F0.0 (stage 0) of part 0 (stages 0) and F0.0 (stage 1) of "
            "part 1 (stages 1)");
}

TEST(Merge, RefusesPartsOfDifferentSizes) {
  const EventGraph m8 = parallel::build_schedule(spec_for("1f1b", 4, 8), {});
  const EventGraph m6 = parallel::build_schedule(spec_for("1f1b", 4, 6), {});
  const std::vector<GraphPart> by_microbatches{filter(m8, stage_range(0, 1)),
                                               filter(m6, stage_range(2, 3))};
  try {
    (void)merge(by_microbatches);
    FAIL() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(std::string(e.what()),
              "merge: part 1 (stages 2-3) has 6 microbatches, but part 0 (stages 0-1) has 8");
    EXPECT_EQ(e.field(), "microbatches");
  }
  const EventGraph v2 = parallel::build_schedule(spec_for("interleaved-1f1b", 4, 8, 2), {});
  const EventGraph v3 = parallel::build_schedule(spec_for("interleaved-1f1b", 4, 8, 3), {});
  const std::vector<GraphPart> by_chunks{filter(v2, stage_range(0, 1)),
                                         filter(v3, stage_range(2, 3))};
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)merge(by_chunks); }),
            "merge: part 1 (stages 2-3) has 3 chunks, but part 0 (stages 0-1) has 2");
}

TEST(Merge, RefusesAnUnmatchedBoundary) {
  const EventGraph g = parallel::build_schedule(spec_for("zbv", 8, 10, 2), {});
  const std::vector<GraphPart> parts{filter(g, stage_range(0, 3))};
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)merge(parts); }),
            "merge: open boundary F0.0 (stage 3) -> F0.0 (stage 4): no part holds stage 4");
}

TEST(Merge, RefusesAnExtraDependenceOnAMissingTask) {
  const EventGraph g = parallel::build_schedule(spec_for("1f1b", 2, 2), {});
  const std::vector<GraphPart> parts{filter(g, stage_list({0})), filter(g, stage_list({1}))};
  const TaskKey f0_s0{TaskKind::F, 0, 0, StageId{0}};
  const std::vector<Boundary> no_microbatch{{f0_s0, TaskKey{TaskKind::F, 9, 0, StageId{1}}}};
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)merge(parts, no_microbatch); }),
            "merge: extra dependence F0.0 (stage 0) -> F9.0 (stage 1): part 1 (stages 1) has no "
            "task F9.0");
  const std::vector<Boundary> no_stage{{TaskKey{TaskKind::B, 0, 0, StageId{5}}, f0_s0}};
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)merge(parts, no_stage); }),
            "merge: extra dependence B0.0 (stage 5) -> F0.0 (stage 0): no part holds stage 5");
}

TEST(Merge, ExtraDependencesAddEdgesAndReportCycles) {
  // 1F1B p=2 m=2, F=10 BW=20: stage 1 runs F0 BW0 F1 BW1 with F1.0 at [40, 50]. An extra
  // edge BW0.0 (stage 0) -> F1.0 (stage 1) delays it past stage 0's BW0 at [40, 60].
  const EventGraph g =
      parallel::build_schedule(spec_for("1f1b", 2, 2), parallel::CostTable({10, 20, 0, 1.0, 0.0}));
  const std::vector<GraphPart> parts{filter(g, stage_list({0})), filter(g, stage_list({1}))};
  EXPECT_EQ(simulator::simulate(merge(parts)).metrics.makespan, 90);  // (m + p - 1)(F + BW)
  const std::vector<Boundary> delay{
      {TaskKey{TaskKind::BW, 0, 0, StageId{0}}, TaskKey{TaskKind::F, 1, 0, StageId{1}}}};
  // F1.0@1 [60,70], BW1.0@1 [70,90], BW1.0@0 [90,110].
  EXPECT_EQ(simulator::simulate(merge(parts, delay)).metrics.makespan, 110);

  // F1.0 of stage 1 feeding F0.0 of stage 0: F0.0@0 -> F1.0@0 -> F1.0@1 -> F0.0@0.
  const std::vector<Boundary> cycle{
      {TaskKey{TaskKind::F, 1, 0, StageId{1}}, TaskKey{TaskKind::F, 0, 0, StageId{0}}}};
  try {
    (void)merge(parts, cycle);
    FAIL() << "expected a CycleError";
  } catch (const CycleError& e) {
    EXPECT_FALSE(e.cycle().empty());
    EXPECT_NE(std::string(e.what()).find("dependence cycle"), std::string::npos) << e.what();
  }
}

TEST(Remap, MergedDevicesRunTheirProgramsOneAfterAnother) {
  // Three devices of forward work: d0 runs A0 [40] then A1 [30]; d1 runs B0 [20] after A0 and
  // B1 [10] after A1; d2 runs C0 [5] after B0. Crossing devices costs 100.
  EventGraphBuilder b(3);
  const auto task = [&](std::uint32_t device, std::uint32_t mb, TimeNs duration) {
    return b.add_task(
        TaskSpec{TaskKind::F, DeviceId{device}, StageId{device}, mb, 0, duration, 0.0});
  };
  const TaskId a0 = task(0, 0, 40);
  const TaskId a1 = task(0, 1, 30);
  const TaskId b0 = task(1, 0, 20);
  const TaskId b1 = task(1, 1, 10);
  const TaskId c0 = task(2, 0, 5);
  b.add_dependence(a0, b0);
  b.add_dependence(a1, b1);
  b.add_dependence(b0, c0);
  for (const TaskId t : {a0, a1, b0, b1, c0}) b.append_to_program(t);
  const EventGraph g = std::move(b).freeze();
  const simulator::SimulationOptions latency{100};
  // Before: B0 [140,160], B1 [170,180], C0 [260,265].
  EXPECT_EQ(simulator::simulate(g, latency).metrics.makespan, 265);

  const EventGraph moved = remap(g, std::vector<DeviceId>{DeviceId{0}, DeviceId{0}, DeviceId{1}});
  EXPECT_EQ(moved.device_count(), 2u);
  const std::vector<TaskId> program0(moved.program(DeviceId{0}).begin(),
                                     moved.program(DeviceId{0}).end());
  EXPECT_EQ(program0, (std::vector<TaskId>{a0, a1, b0, b1}));  // d0's program, then d1's
  const std::vector<TaskId> program1(moved.program(DeviceId{1}).begin(),
                                     moved.program(DeviceId{1}).end());
  EXPECT_EQ(program1, (std::vector<TaskId>{c0}));
  EXPECT_EQ(moved.device(b1), DeviceId{0});
  EXPECT_EQ(moved.duration(b1), 10);
  // After: A0 [0,40], A1 [40,70], B0 [70,90], B1 [90,100] on one device, no transfers;
  // C0 waits for B0 across devices: [190,195].
  EXPECT_EQ(simulator::simulate(moved, latency).metrics.makespan, 195);
}

TEST(Filter, OnADeviceHoldingTwoStagesKeepsTheRestrictedProgram) {
  // Forward work over stages 0, 1, 2, then stages 0 and 1 moved onto device 0: its program
  // interleaves two stages, and filtering one keeps the other's order intact.
  EventGraphBuilder b(3);
  std::vector<TaskId> t;
  for (std::uint32_t s = 0; s < 3; ++s) {
    for (std::uint32_t mb = 0; mb < 2; ++mb) {
      t.push_back(b.add_task(TaskSpec{TaskKind::F, DeviceId{s}, StageId{s}, mb, 0, 10, 0.0}));
    }
  }
  for (std::uint32_t i = 0; i + 2 < t.size(); ++i) b.add_dependence(t[i], t[i + 2]);
  for (const TaskId x : t) b.append_to_program(x);
  const EventGraph g =
      remap(std::move(b).freeze(), std::vector<DeviceId>{DeviceId{0}, DeviceId{0}, DeviceId{1}});
  const GraphPart stage1 = filter(g, stage_list({1}));
  std::vector<std::string> program;
  for (const TaskId x : stage1.graph.program(DeviceId{0})) program.push_back(stage1.graph.label(x));
  EXPECT_EQ(program, (std::vector<std::string>{"F0.0", "F1.0"}));
  EXPECT_EQ(stage1.open.size(), 4u);
  // Both stages of device 0 in one part, stage 2 in the other: the union is the graph.
  const std::vector<GraphPart> parts{filter(g, stage_list({2})), filter(g, stage_list({1, 0}))};
  EXPECT_EQ(outcome(merge(parts)), outcome(g));
  EXPECT_EQ(outcome(g).makespan, 40 + 10);  // device 0 busy until 40; F1 of stage 2 after it
  EXPECT_EQ(merge({}).task_count(), 0u);    // no parts: an empty graph
}

TEST(Remap, PermutationKeepsTheSimulation) {
  const EventGraph g =
      parallel::build_schedule(spec_for("1f1b", 3, 4), parallel::CostTable({10, 25, 0, 1.0, 0.0}));
  const EventGraph reversed =
      remap(g, std::vector<DeviceId>{DeviceId{2}, DeviceId{1}, DeviceId{0}});
  const simulator::SimulationResult before = simulator::simulate(g);
  const simulator::SimulationResult after = simulator::simulate(reversed);
  EXPECT_EQ(after.metrics.makespan, before.metrics.makespan);
  EXPECT_EQ(after.trace.start, before.trace.start);  // task ids are kept
  for (std::uint32_t d = 0; d < 3; ++d) {
    EXPECT_EQ(order_string(reversed, after.trace, 2 - d), order_string(g, before.trace, d));
  }
}

TEST(Remap, ConcatenatingDependentProgramsDeadlocks) {
  // Device 0's backward waits on device 1's, which now runs after all of device 0's program.
  const EventGraph g = parallel::build_schedule(spec_for("1f1b", 2, 2), {});
  EXPECT_THROW((void)remap(g, std::vector<DeviceId>{DeviceId{0}, DeviceId{0}}), CycleError);
}

TEST(Remap, RefusesTheWrongLength) {
  const EventGraph g = parallel::build_schedule(spec_for("1f1b", 4, 4), {});
  EXPECT_EQ(error_of<ScheduleError>([&] {
              (void)remap(g, std::vector<DeviceId>{DeviceId{0}, DeviceId{1}});
            }),
            "remap: device_of has 2 entries, but the graph has 4 devices");
  EXPECT_EQ(
      error_of<ScheduleError>([&] {
        (void)remap(g, std::vector<DeviceId>{DeviceId{0}, DeviceId{1}, DeviceId{}, DeviceId{3}});
      }),
      "remap: device_of[2] is not a valid device id");
}

TEST(Scale, DoublingWOf1F1B) {
  // 1F1B p=2 m=2 with split backward, F=10 B=20 W=30, W doubled to 60.
  //   d0: F0 [0,10]  F1 [10,20]                 B0 [40,60]  W0 [60,120]  B1 [130,150] W1 [150,210]
  //   d1: F0 [10,20] B0 [20,40] W0 [40,100] F1 [100,110] B1 [110,130] W1 [130,190]
  // (unscaled: d1's F1 at 70, B1 at 80-100, d0's B1 100-120, W1 120-150: makespan 150).
  const EventGraph g = parallel::build_schedule(spec_for("1f1b", 2, 2, 1, true),
                                                parallel::CostTable({10, 20, 30, 1.0, 0.5}));
  EXPECT_EQ(simulator::simulate(g).metrics.makespan, 150);
  ScaleFactors factors;
  factors.by_kind[static_cast<int>(TaskKind::W)] = 2.0;
  const EventGraph scaled = scale(g, factors);
  EXPECT_EQ(simulator::simulate(scaled).metrics.makespan, 210);
  ASSERT_EQ(scaled.task_count(), g.task_count());
  for (std::uint32_t v = 0; v < g.task_count(); ++v) {
    const TaskId t{v};
    EXPECT_EQ(scaled.duration(t), g.kind(t) == TaskKind::W ? 60 : g.duration(t));
    EXPECT_EQ(key_of(scaled, t), key_of(g, t));
    EXPECT_EQ(scaled.device(t), g.device(t));
    EXPECT_EQ(scaled.memory_delta(t), g.memory_delta(t));
  }
  for (std::uint32_t d = 0; d < 2; ++d) {
    EXPECT_TRUE(std::ranges::equal(scaled.program(DeviceId{d}), g.program(DeviceId{d})));
  }
}

TEST(Scale, ByStageRoundsToTheNearestNanosecond) {
  const EventGraph g =
      parallel::build_schedule(spec_for("1f1b", 2, 1), parallel::CostTable({3, 5, 0, 1.0, 0.0}));
  ScaleFactors factors;
  factors.by_kind[static_cast<int>(TaskKind::F)] = 0.5;
  factors.by_stage = {1.0, 3.0, 7.0};  // longer than needed: extra factors are not used
  const EventGraph scaled = scale(g, factors);
  for (std::uint32_t v = 0; v < g.task_count(); ++v) {
    const TaskId t{v};
    const bool stage1 = g.stage(t) == StageId{1};
    // F: 3 x 0.5 = 1.5 -> 2, and x3 on stage 1: 4.5 -> 5; BW: 5, x3 on stage 1: 15.
    const TimeNs expected = g.kind(t) == TaskKind::F ? (stage1 ? 5 : 2) : (stage1 ? 15 : 5);
    EXPECT_EQ(scaled.duration(t), expected) << g.label(t) << " stage " << g.stage(t).value;
  }
}

TEST(Scale, EveryKindStartsAtOne) {
  const ScaleFactors factors;
  for (int k = 0; k < kTaskKindCount; ++k) {
    EXPECT_EQ(factors.by_kind[static_cast<std::size_t>(k)], 1.0)
        << to_string(static_cast<TaskKind>(k));
  }
}

TEST(Scale, RefusesBadFactors) {
  const EventGraph g = parallel::build_schedule(spec_for("1f1b", 4, 4), {});
  ScaleFactors negative;
  negative.by_kind[static_cast<int>(TaskKind::B)] = -1.0;
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)scale(g, negative); }),
            "scale: the factor for kind B is -1 (factors must be finite and >= 0)");
  ScaleFactors not_finite;
  not_finite.by_stage = {1.0, 1.0, std::numeric_limits<double>::quiet_NaN(), 1.0};
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)scale(g, not_finite); }),
            "scale: the factor for stage 2 is nan (factors must be finite and >= 0)");
  ScaleFactors short_list;
  short_list.by_stage = {1.0, 2.0};
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)scale(g, short_list); }),
            "scale: by_stage has 2 factors, but the graph has 4 stages");
}

// Communication lanes are added after composing: every operator refuses them by name.
TEST(Operators, RefuseGraphsWithCommunicationLanes) {
  const EventGraph lowered = simulator::lower_communication(
      parallel::build_schedule(spec_for("1f1b", 2, 2), {}), simulator::SimulationOptions{});
  const std::string tail =
      ": the graph has communication lanes (send 0>1); compose graphs first, then lower "
      "communication or add data parallelism";
  const std::vector<StageId> stages = {StageId{0}};
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)filter(lowered, stages); }), "filter" + tail);
  const std::vector<DeviceId> same = {DeviceId{0}, DeviceId{1}};
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)remap(lowered, same); }), "remap" + tail);
  EXPECT_EQ(error_of<ScheduleError>([&] { (void)scale(lowered, ScaleFactors{}); }), "scale" + tail);
}

}  // namespace
}  // namespace perflow::trace_op
