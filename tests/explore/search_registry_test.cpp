// Search prunes by the schedule registry: a schedule a program registers (toy-v, from
// tests/support) gets its chunk count from its chunk rule and is pruned by its check.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/toy_schedule.hpp"
#include "perflow/core/error.hpp"
#include "perflow/explore/search.hpp"

namespace perflow::explore {
namespace {

// 8 H100 (all used), PP {1, 2, 4} x TP 1 x micro-batch {1, 2}, a global batch of 16: DP is
// 8 / PP, so the microbatches are 16 / (mbs x DP): PP 1: 2 and 1; PP 2: 4 and 2; PP 4: 8
// and 4. Chunks {3}: for the schedules whose chunk count is free.
Search small_search(std::vector<std::string> schedules) {
  const nlohmann::json document = nlohmann::json::parse(R"({
    "base": {"model": {"layers": 8, "hidden": 1024, "ffn_hidden": 4096, "heads": 8,
                       "vocab": 32000, "sequence": 2048},
             "training": {"global_batch_size": 16, "precision": "bf16"}},
    "cluster": {"gpus": {"H100": {"preset": "h100-sxm", "count": 8}}},
    "space": {"schedules": ["1f1b"], "pipeline": [1, 2, 4], "tensor_parallel": [1],
              "micro_batch_size": [1, 2], "chunks": [3], "recompute": ["none"]}
  })");
  Search search = parse_search(document, {"H100"}, "s.json");
  search.space.schedules = std::move(schedules);
  return search;
}

struct Sizes {
  std::uint32_t pipeline;
  std::uint32_t microbatches;
  std::uint32_t chunks;
  friend bool operator==(const Sizes&, const Sizes&) = default;
};

std::vector<Sizes> sizes_of(const std::vector<Plan>& plans) {
  std::vector<Sizes> out;
  for (const Plan& plan : plans) out.push_back({plan.pipeline, plan.microbatches, plan.chunks});
  return out;
}

TEST(SearchRegistry, PrunesAScheduleARegistryHolds) {
  const parallel::ScheduleRegistry registry = perflow::testing::registry_with_toy();
  SearchCounts counts;
  const std::vector<Plan> plans =
      enumerate_plans(small_search({"toy-v", "1f1b"}), counts, false, registry);
  // toy-v takes exactly 2 chunks (not space.chunks) and microbatches >= 2 x stages: of its
  // 6 plans, those with 1, 2 and 4 microbatches at PP 1, 2 and 4 are pruned. 1f1b keeps
  // its 6.
  EXPECT_EQ(counts.considered, 12u);
  EXPECT_EQ(counts.pruned_divisibility, 3u);
  const std::vector<Sizes> expected = {{1, 2, 2}, {2, 4, 2}, {4, 8, 2}, {1, 2, 1}, {1, 1, 1},
                                       {2, 4, 1}, {2, 2, 1}, {4, 8, 1}, {4, 4, 1}};
  EXPECT_EQ(sizes_of(plans), expected);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(plans[i].schedule, "toy-v");
    EXPECT_EQ(plans[i].config["pipeline"]["chunks"], 2);
  }
  // Kept for brute force: the pruned plans are enumerated too, and still counted.
  SearchCounts all;
  EXPECT_EQ(enumerate_plans(small_search({"toy-v"}), all, true, registry).size(), 6u);
  EXPECT_EQ(all.pruned_divisibility, 3u);
  // dualpipev has the same rules (2 chunks, microbatches >= 2 x stages): the same plans.
  SearchCounts dualpipev;
  EXPECT_EQ(sizes_of(enumerate_plans(small_search({"dualpipev"}), dualpipev)),
            (std::vector<Sizes>{{1, 2, 2}, {2, 4, 2}, {4, 8, 2}}));
  EXPECT_EQ(dualpipev.pruned_divisibility, 3u);
}

TEST(SearchRegistry, TheBuiltInRegistryByDefault) {
  SearchCounts counts;
  try {
    (void)enumerate_plans(small_search({"toy-v"}), counts);
    ADD_FAILURE() << "expected an UnknownNameError";
  } catch (const UnknownNameError& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, 24), "unknown schedule 'toy-v'");
  }
}

}  // namespace
}  // namespace perflow::explore
