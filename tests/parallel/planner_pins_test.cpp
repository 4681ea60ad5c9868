// Pins the planners' output (zb, zbv-auto, v-half, v-min, 1f1b-v): for a grid of sizes,
// cost sets (equal and unequal F/B/W, point-to-point latency, partial backward frees,
// per-stage costs) and memory limits, a hash of every device's program order, or the error
// text of a refusal, must equal the line recorded in tests/parallel/planner_pins/<name>.txt.
// The files were written by the planners as they were before they were made faster, so any
// change to a single order shows up here. (They live here, not in tests/golden, whose
// subdirectories are each a run of the perflow command.) To re-record them on purpose (and review
// the diff):
//   PERFLOW_UPDATE_PLANNER_PINS=1 ./perflow_parallel_tests --gtest_filter='PlannerPins*'
#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::parallel {
namespace {

struct CostSet {
  const char* name;
  TaskCosts uniform;
  TimeNs p2p = 0;
  bool per_stage = false;  // vary F/B/W/backward_frees by (stage, chunk), seeded
};

const std::array<CostSet, 7> kCostSets = {{
    {"equal", {1000, 1000, 1000, 1.0, 0.0}},
    {"unequal", {1'315'000, 2'733'000, 2'650'000, 1.0, 0.0}},
    {"small_w", {3000, 2000, 1000, 1.0, 0.0}},
    {"large_w", {1000, 1500, 4000, 1.0, 0.0}},
    {"unequal_comm", {1'315'000, 2'733'000, 2'650'000, 1.0, 0.0}, 700'000},
    {"half_frees_comm", {2000, 1000, 1500, 1.0, 0.5}, 300},
    {"per_stage_comm", {1000, 1000, 1000, 1.0, 0.0}, 250, true},
}};

CostTable cost_table(const CostSet& set, std::uint32_t stages, std::uint32_t chunks) {
  CostTable table(set.uniform, set.p2p);
  if (!set.per_stage) return table;
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;  // fixed seed: the pins depend on it
  const auto next = [&](std::uint64_t range) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % range;
  };
  for (std::uint32_t s = 0; s < stages; ++s) {
    for (std::uint32_t c = 0; c < chunks; ++c) {
      TaskCosts costs = set.uniform;
      costs.forward = static_cast<TimeNs>(500 + next(4500));
      costs.backward = static_cast<TimeNs>(500 + next(4500));
      costs.weight = static_cast<TimeNs>(500 + next(4500));
      costs.backward_frees = static_cast<double>(next(3)) * 0.25;
      table.set(StageId{s}, c, costs);
    }
  }
  return table;
}

/// FNV-1a over every device's program length and steps.
std::uint64_t plan_hash(const PipelinePlan& plan) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  const auto mix = [&](std::uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
      h ^= (value >> (8 * byte)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  };
  for (const auto& program : plan.programs) {
    mix(program.size());
    for (const Step& step : program) {
      mix(static_cast<std::uint64_t>(step.kind));
      mix(step.microbatch);
      mix(step.chunk);
    }
  }
  return h;
}

struct Grid {
  std::vector<std::uint32_t> stages;
  std::vector<std::uint32_t> microbatches;
  std::vector<std::size_t> cost_sets;  // indices into kCostSets
  /// Memory limits to try at p stages (0: the schedule's default).
  std::vector<double> (*limits)(std::uint32_t p);
  std::vector<std::array<std::uint32_t, 2>> extra_sizes;  // larger (p, m), first cost set only
};

const std::vector<std::size_t> kAllCostSets = {0, 1, 2, 3, 4, 5, 6};

Grid grid_for(const std::string& schedule) {
  if (schedule == "zb") {
    return {{1, 2, 3, 4, 5, 8, 13, 16, 32},
            {1, 2, 3, 4, 7, 8, 9, 16, 31, 64},
            kAllCostSets,
            [](std::uint32_t p) {
              return std::vector<double>{0, 1, 2.5, p / 2.0 + 1};
            },
            {{128, 512}, {300, 40}}};
  }
  if (schedule == "zbv-auto") {
    return {{1, 2, 3, 4, 5, 8, 13, 16, 32},
            {1, 2, 3, 4, 7, 8, 9, 16, 31, 64},
            kAllCostSets,
            [](std::uint32_t p) {
              return std::vector<double>{0, 2.0 * p - 1, 2.0 * p + 1, 3.0 * p};
            },
            {{64, 256}, {200, 24}}};
  }
  if (schedule == "1f1b-v") {  // unit slots, costs unused, no memory limit
    return {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 17, 31, 32, 48, 64},
            {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 33, 64},
            {0},
            [](std::uint32_t) { return std::vector<double>{0}; },
            {{256, 8}, {100, 300}, {333, 9}, {1024, 4}}};
  }
  // v-half, v-min: unit slots, costs unused; a limit below the peak is refused.
  return {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 17, 31, 32, 48, 64},
          {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 33, 64},
          {0},
          [](std::uint32_t) {
            return std::vector<double>{0, 1};
          },
          {{256, 8}, {100, 300}, {333, 9}}};
}

std::string pin_line(const std::string& schedule, std::uint32_t p, std::uint32_t m,
                     std::size_t cost_set, double limit) {
  PipelineSpec spec;
  spec.schedule = schedule;
  spec.stages = p;
  spec.microbatches = m;
  spec.chunks = schedule == "zb" ? 1 : 2;
  spec.memory_limit = limit;
  const CostSet& set = kCostSets[cost_set];
  const std::string key =
      fmt::format("{} p={} m={} costs={} limit={}", schedule, p, m, set.name, limit);
  try {
    const PipelinePlan plan = plan_schedule(spec, cost_table(set, p, spec.chunks));
    std::size_t steps = 0;
    for (const auto& program : plan.programs) steps += program.size();
    return fmt::format("{} -> steps={} hash={:016x}", key, steps, plan_hash(plan));
  } catch (const ScheduleError& e) {
    return fmt::format("{} -> refused: {}", key, e.what());
  }
}

std::vector<std::string> pin_lines(const std::string& schedule) {
  const Grid grid = grid_for(schedule);
  std::vector<std::string> lines;
  for (const std::uint32_t p : grid.stages) {
    for (const std::uint32_t m : grid.microbatches) {
      for (const std::size_t c : grid.cost_sets) {
        for (const double limit : grid.limits(p)) {
          lines.push_back(pin_line(schedule, p, m, c, limit));
        }
      }
    }
  }
  for (const auto& [p, m] : grid.extra_sizes) {
    for (const std::size_t c : {std::size_t{0}, std::size_t{6}}) {
      if (c != 0 && grid.cost_sets.size() == 1) continue;
      lines.push_back(pin_line(schedule, p, m, c, 0));
    }
  }
  return lines;
}

std::string pin_path(const std::string& schedule) {
  return std::string(PERFLOW_SOURCE_DIR) + "/tests/parallel/planner_pins/" + schedule + ".txt";
}

class PlannerPins : public ::testing::TestWithParam<std::string> {};

TEST_P(PlannerPins, OrdersEqualTheRecordedOnes) {
  const std::string& schedule = GetParam();
  const std::vector<std::string> lines = pin_lines(schedule);
  const std::string path = pin_path(schedule);
  if (std::getenv("PERFLOW_UPDATE_PLANNER_PINS") != nullptr) {
    std::ofstream out(path);
    for (const std::string& line : lines) out << line << '\n';
    ASSERT_TRUE(out.good()) << "could not write " << path;
    GTEST_SKIP() << "re-recorded " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing " << path;
  std::vector<std::string> recorded;
  for (std::string line; std::getline(in, line);) recorded.push_back(line);
  ASSERT_EQ(recorded.size(), lines.size()) << "the grid changed: re-record " << path;
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] == recorded[i]) continue;
    if (++mismatches <= 10) {
      ADD_FAILURE() << "line " << i + 1 << "\n  recorded: " << recorded[i]
                    << "\n  now:      " << lines[i];
    }
  }
  EXPECT_EQ(mismatches, 0u) << "of " << lines.size() << " pinned plans";
}

INSTANTIATE_TEST_SUITE_P(Automatic, PlannerPins,
                         ::testing::Values("zb", "zbv-auto", "v-half", "v-min", "1f1b-v"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace perflow::parallel
