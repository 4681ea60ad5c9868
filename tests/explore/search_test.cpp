#include "perflow/explore/search.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "perflow/explore/sweep_run.hpp"
#include "perflow/model/training.hpp"
#include "perflow/study/config.hpp"

namespace perflow::explore {
namespace {

// A small transformer: 8 layers of hidden 1024, so plans simulate in microseconds.
const char* kBase = R"({
  "model": {"layers": 8, "hidden": 1024, "ffn_hidden": 4096, "heads": 8, "vocab": 32000,
            "sequence": 2048},
  "training": {"global_batch_size": 16, "precision": "bf16"}
})";

nlohmann::json search_document(const std::string& gpus, const std::string& space,
                               const std::string& constraints = "{}") {
  return nlohmann::json::parse(R"({"base": )" + std::string(kBase) + R"(, "cluster": {"gpus": )" +
                               gpus + R"(, "devices_per_node": 8}, "space": )" + space +
                               R"(, "constraints": )" + constraints + R"(, "top": 3})");
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Search, DefaultsComeFromTheModelAndCluster) {
  const Search search = parse_search(
      search_document(R"({"H100": {"preset": "h100-sxm", "count": 8}})", "{}"), {"H100"}, "s.json");
  // Depths up to 8 layers (and 32), TP powers of two up to 8 dividing 8 heads.
  EXPECT_EQ(search.space.pipeline, (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(search.space.tensor_parallel, (std::vector<std::uint32_t>{1, 2, 4, 8}));
  EXPECT_EQ(search.space.recompute, (std::vector<std::string>{"none", "selective", "full"}));
  EXPECT_EQ(search.space.layers, (std::vector<std::string>{"even"}));
  EXPECT_EQ(search.global_batch_size, 16u);
  ASSERT_EQ(search.gpus.size(), 1u);
  // The H100's memory as nvidia-smi reports it.
  EXPECT_EQ(search.gpus[0].capacity, 81559 * 1024.0 * 1024.0);
}

TEST(Search, CountsOnASmallSpace) {
  // 1f1b and interleaved-1f1b (2 chunks) x PP {1, 2, 3, 4} x TP {1, 2} x mbs {1, 2} on 8 GPUs:
  // 2 x 4 x 2 x 2 = 32 plans. PP 3 divides no GPU count: 2 x 2 x 2 = 8 pruned. Then
  // interleaved-1f1b needs microbatches a multiple of PP and >= PP: at PP 4, TP 1, DP 2,
  // mbs 2 there are 4 microbatches (fine); at PP 2, TP 1, DP 4, mbs 2: 2 (fine); at PP 4,
  // TP 2, DP 1: 16 and 8 (fine); at PP 1: always. So 24 plans are simulated.
  const Search search = parse_search(
      search_document(R"({"H100": {"preset": "h100-sxm", "count": 8}})",
                      R"({"schedules": ["1f1b", "interleaved-1f1b"], "pipeline": [1, 2, 3, 4],
                          "tensor_parallel": [1, 2], "micro_batch_size": [1, 2],
                          "chunks": [2], "recompute": ["none"]})"),
      {"H100"}, "s.json");
  SearchOptions options;
  options.jobs = 2;
  options.keep_simulated = true;
  const SearchResult result = run_search(search, options);
  EXPECT_EQ(result.counts.considered, 32u);
  EXPECT_EQ(result.counts.pruned_divisibility, 8u);
  EXPECT_EQ(result.counts.pruned_memory, 0u);
  EXPECT_EQ(result.counts.simulated, 24u);
  EXPECT_EQ(result.counts.fit + result.counts.invalid, 24u);
  ASSERT_EQ(result.best.size(), 3u);
  for (std::size_t i = 1; i < result.best.size(); ++i) {
    EXPECT_LE(result.best[i - 1].outcome.makespan, result.best[i].outcome.makespan);
  }
  // The Pareto front: faster plans need more memory.
  ASSERT_FALSE(result.pareto.empty());
  EXPECT_EQ(result.pareto.front().outcome.makespan, result.best.front().outcome.makespan);
  for (std::size_t i = 1; i < result.pareto.size(); ++i) {
    EXPECT_LT(result.pareto[i - 1].outcome.makespan, result.pareto[i].outcome.makespan);
    EXPECT_GT(result.pareto[i - 1].outcome.peak_total_memory,
              result.pareto[i].outcome.peak_total_memory);
  }
  // Every plan's config reruns to the same numbers.
  const PlanResult& best = result.best.front();
  RunOutcome again;
  evaluate_config(study::parse_config(best.plan.config, "plan.json"), again);
  EXPECT_EQ(again.makespan, best.outcome.makespan);
  EXPECT_EQ(again.peak_total_memory, best.outcome.peak_total_memory);
  EXPECT_EQ(again.tokens_per_s, best.outcome.tokens_per_s);
  // The same result whatever the thread count.
  options.jobs = 1;
  const SearchResult alone = run_search(search, options);
  ASSERT_EQ(alone.simulated.size(), result.simulated.size());
  for (std::size_t i = 0; i < alone.simulated.size(); ++i) {
    EXPECT_EQ(alone.simulated[i].plan.config, result.simulated[i].plan.config);
    EXPECT_EQ(alone.simulated[i].outcome.makespan, result.simulated[i].outcome.makespan);
  }
}

// A MoE model's search tries expert parallelism by default (powers of two dividing its
// experts), keeps only degrees dividing each plan's DP, and sets /parallelism/expert_parallel.
TEST(Search, ExpertParallelIsAnAxis) {
  nlohmann::json document = search_document(R"({"H100": {"preset": "h100-sxm", "count": 8}})",
                                            R"({"schedules": ["1f1b"], "pipeline": [2, 4],
                                                "tensor_parallel": [1], "micro_batch_size": [1],
                                                "recompute": ["none"]})");
  document["base"]["model"]["experts"] = 4;
  document["base"]["model"]["top_k"] = 2;
  const Search search = parse_search(document, {"H100"}, "s.json");
  EXPECT_EQ(search.space.expert_parallel, (std::vector<std::uint32_t>{1, 2, 4}));
  SearchOptions options;
  options.jobs = 2;
  options.keep_simulated = true;
  const SearchResult result = run_search(search, options);
  // PP 2 (DP 4): EP 1, 2, 4; PP 4 (DP 2): EP 1, 2, and EP 4 pruned.
  EXPECT_EQ(result.counts.considered, 6u);
  EXPECT_EQ(result.counts.pruned_divisibility, 1u);
  ASSERT_EQ(result.simulated.size(), 5u);
  for (const PlanResult& r : result.simulated) {
    SCOPED_TRACE(r.plan.config["description"].get<std::string>());
    EXPECT_TRUE(r.outcome.error.empty()) << r.outcome.error;
    EXPECT_EQ(r.plan.data_parallel % r.plan.expert_parallel, 0u);
    const auto& parallelism = r.plan.config.at("parallelism");
    EXPECT_EQ(parallelism.contains("expert_parallel"), r.plan.expert_parallel > 1);
    // The rerun config simulates with the all-to-all of its degree.
    const study::Config config = study::parse_config(r.plan.config, "plan.json");
    EXPECT_EQ(config.expert_parallel, r.plan.expert_parallel);
    EXPECT_EQ(config.costs.at(StageId{1}, 0).all_to_all > 0, r.plan.expert_parallel > 1);
  }
  // With tensor parallelism its plans run sequence parallelism (Megatron-Core's MoE layers
  // refuse to train without it).
  document["space"]["tensor_parallel"] = {2};
  document["space"]["expert_parallel"] = {1};
  const SearchResult tp = run_search(parse_search(document, {"H100"}, "s.json"), options);
  ASSERT_FALSE(tp.simulated.empty());
  for (const PlanResult& r : tp.simulated) {
    EXPECT_TRUE(r.outcome.error.empty()) << r.outcome.error;
    EXPECT_EQ(r.plan.config["training"]["sequence_parallel"], true);
  }
  // A dense model has no axis unless given.
  EXPECT_EQ(parse_search(search_document(R"({"H100": {"preset": "h100-sxm", "count": 8}})", "{}"),
                         {"H100"}, "s.json")
                .space.expert_parallel,
            (std::vector<std::uint32_t>{1}));
}

// Context parallelism and the precision as axes: a degree that does not split the 2,048-token
// sequence into 2 x cp chunks (3) is pruned with its plans, and so is a precision the GPUs
// lack (NVFP4 on H100s). 8 GPUs in 2 stages: CP 1 with DP 4, CP 2 with DP 2.
TEST(Search, ContextParallelAndPrecisionAreAxes) {
  const nlohmann::json document =
      search_document(R"({"H100": {"preset": "h100-sxm", "count": 8}})",
                      R"({"schedules": ["1f1b"], "pipeline": [2], "tensor_parallel": [1],
                          "micro_batch_size": [1], "recompute": ["none"],
                          "context_parallel": [1, 2, 3], "precision": ["bf16", "fp8", "nvfp4"]})");
  const Search search = parse_search(document, {"H100"}, "s.json");
  EXPECT_EQ(search.space.context_parallel, (std::vector<std::uint32_t>{1, 2, 3}));
  SearchOptions options;
  options.jobs = 2;
  options.keep_simulated = true;
  const SearchResult result = run_search(search, options);
  EXPECT_EQ(result.counts.considered, 9u);
  EXPECT_EQ(result.counts.pruned_divisibility, 5u);
  ASSERT_EQ(result.simulated.size(), 4u);
  for (const PlanResult& r : result.simulated) {
    SCOPED_TRACE(r.plan.config["description"].get<std::string>());
    EXPECT_TRUE(r.outcome.error.empty()) << r.outcome.error;
    EXPECT_EQ(r.plan.data_parallel * r.plan.context_parallel, 4u);
    EXPECT_NE(r.plan.precision, "nvfp4");
    EXPECT_EQ(r.plan.config["training"]["precision"], r.plan.precision);
    const study::Config config = study::parse_config(r.plan.config, "plan.json");
    EXPECT_EQ(config.context_parallel, r.plan.context_parallel);
    EXPECT_EQ(config.data_parallel.ranks(), 4u);
  }
  // Without the axes: CP 1 and the base's precision.
  const Search plain = parse_search(
      search_document(R"({"H100": {"preset": "h100-sxm", "count": 8}})", "{}"), {"H100"}, "s.json");
  EXPECT_EQ(plain.space.context_parallel, (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(plain.space.precision, (std::vector<std::string>{"bf16"}));
}

// FSDP as an axis: on 8 GPUs in 2 stages (DP 4), none, zero3 and HSDP over 2 and 3 ranks:
// a shard group of 3 does not divide 4 ranks and its plan is pruned; the others run with
// their fields in the config. fsdp_shard_size without "hsdp", or "hsdp" without it, is
// refused.
TEST(Search, FsdpIsAnAxis) {
  const std::string gpus = R"({"H100": {"preset": "h100-sxm", "count": 8}})";
  const Search search = parse_search(
      search_document(gpus, R"({"schedules": ["1f1b"], "pipeline": [2], "tensor_parallel": [1],
                                "micro_batch_size": [1], "recompute": ["none"],
                                "fsdp": ["none", "zero3", "hsdp"], "fsdp_shard_size": [2, 3]})"),
      {"H100"}, "s.json");
  SearchOptions options;
  options.jobs = 2;
  options.keep_simulated = true;
  const SearchResult result = run_search(search, options);
  EXPECT_EQ(result.counts.considered, 4u);
  EXPECT_EQ(result.counts.pruned_divisibility, 1u);
  ASSERT_EQ(result.simulated.size(), 3u);
  std::set<std::string> seen;
  for (const PlanResult& r : result.simulated) {
    EXPECT_TRUE(r.outcome.error.empty()) << r.outcome.error;
    const study::Config config = study::parse_config(r.plan.config, "plan.json");
    EXPECT_EQ(std::string(model::to_string(config.fsdp_mode)), r.plan.fsdp);
    seen.insert(r.plan.fsdp + std::to_string(r.plan.fsdp_shard_size));
  }
  EXPECT_EQ(seen, (std::set<std::string>{"none0", "zero30", "hsdp2"}));
  EXPECT_EQ(error_of([&] {
              parse_search(search_document(gpus, R"({"fsdp_shard_size": [2]})"), {"H100"},
                           "s.json");
            }),
            "s.json:/space/fsdp_shard_size: fsdp_shard_size is HSDP's shard group: add \"hsdp\" "
            "to /space/fsdp");
  EXPECT_EQ(error_of([&] {
              parse_search(search_document(gpus, R"({"fsdp": ["hsdp"]})"), {"H100"}, "s.json");
            }),
            "s.json:/space/fsdp: \"hsdp\" shards within groups of /space/fsdp_shard_size ranks: "
            "give the sizes to try");
}

// Offloading as an axis: every plan once per share; a share above 0 puts it in the plan's
// costs, and without a host link the axis is refused.
TEST(Search, OffloadIsAnAxis) {
  const std::string gpus =
      R"({"H100": {"preset": "h100-sxm", "count": 4, "host_link": {"bandwidth": "64GB/s"}}})";
  const std::string space = R"({"schedules": ["1f1b"], "pipeline": [2, 4],
                                "tensor_parallel": [1], "micro_batch_size": [1],
                                "recompute": ["none"], "offload": [0, 1]})";
  const Search search = parse_search(search_document(gpus, space), {"H100"}, "s.json");
  EXPECT_EQ(search.space.offload, (std::vector<double>{0, 1}));
  SearchOptions options;
  options.jobs = 2;
  options.keep_simulated = true;
  const SearchResult result = run_search(search, options);
  // PP {2, 4} x offload {0, 1}; DP fills the 4 GPUs.
  EXPECT_EQ(result.counts.considered, 4u);
  ASSERT_EQ(result.simulated.size(), 4u);
  for (const PlanResult& r : result.simulated) {
    SCOPED_TRACE(r.plan.config["description"].get<std::string>());
    // The axis sets the ratio, 0 included (a base's ratio would apply otherwise).
    EXPECT_EQ(r.plan.config.at("costs").at("offload"), nlohmann::json({{"ratio", r.plan.offload}}));
  }
  // The same plan with and without offloading: never faster, never more memory.
  for (std::size_t i = 0; i < result.simulated.size(); ++i) {
    for (std::size_t j = 0; j < result.simulated.size(); ++j) {
      const Plan& a = result.simulated[i].plan;
      const Plan& b = result.simulated[j].plan;
      if (a.pipeline != b.pipeline || a.offload != 0 || b.offload != 1) continue;
      EXPECT_LE(result.simulated[i].outcome.makespan, result.simulated[j].outcome.makespan);
      EXPECT_GE(result.simulated[i].outcome.peak_memory, result.simulated[j].outcome.peak_memory);
    }
  }

  // A preset's own host link (the H100's PCIe Gen5) serves; a GPU given by its specs has none.
  EXPECT_EQ(error_of([&] {
              (void)parse_search(
                  search_document(R"({"H100": {"preset": "h100-sxm", "count": 4}})", space),
                  {"H100"}, "s.json");
            }),
            "(no error)");
  EXPECT_EQ(error_of([&] {
              (void)parse_search(
                  search_document(R"({"X": {"peak_flops": 1e15, "memory_bandwidth": "3TB/s",
                                            "memory": "80GB", "count": 4}})",
                                  space),
                  {"X"}, "s.json");
            }),
            "s.json:/space/offload: offloading needs a link to host memory: give "
            "/base/network/host_link or host_link in every /cluster/gpus entry without a preset");
  // The recompute axis with a base that fixes /costs/recompute (it would override the plans').
  nlohmann::json fixed = search_document(gpus, space);
  fixed["base"]["costs"] = {{"recompute", "full"}};
  EXPECT_EQ(error_of([&] { (void)parse_search(fixed, {"H100"}, "s.json"); }),
            "s.json:/base/costs/recompute: space.recompute chooses the recomputation: remove it "
            "from the base");
}

TEST(Search, PlanConfigIsComplete) {
  const Search search = parse_search(
      search_document(R"({"H100": {"preset": "h100-sxm", "count": 4},
                         "A100": {"preset": "a100-80gb", "count": 4}})",
                      R"({"schedules": ["1f1b"], "pipeline": [2], "tensor_parallel": [2],
                          "micro_batch_size": [1], "recompute": ["selective"],
                          "layers": ["fastest"]})",
                      R"({"memory": "40GB"})"),
      {"H100", "A100"}, "s.json");
  SearchCounts counts;
  const std::vector<Plan> plans = enumerate_plans(search, counts);
  // DP 2 (2 stages x TP 2 x DP 2 = 8 GPUs): one stage per type, in both orders.
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].placement, "H100:1,A100:1");
  EXPECT_EQ(plans[1].placement, "A100:1,H100:1");
  EXPECT_EQ(plans[0].microbatches, 8u);
  const nlohmann::json expected = nlohmann::json::parse(R"({
    "pipeline": {"schedule": "1f1b", "stages": 2, "chunks": 1, "layers": "fastest"},
    "parallelism": {"tensor_parallel": 2, "data_parallel": 2},
    "device_types": {"H100": {"preset": "h100-sxm", "memory": 40000000000},
                     "A100": {"preset": "a100-80gb", "memory": 40000000000}},
    "placement": [{"stages": "0-0", "device_type": "H100"},
                  {"stages": "1-1", "device_type": "A100"}],
    "network": {"devices_per_node": 2}
  })");
  for (const auto& [key, value] : expected.items()) EXPECT_EQ(plans[0].config[key], value) << key;
  EXPECT_EQ(plans[0].config["training"]["micro_batch_size"], 1);
  EXPECT_EQ(plans[0].config["training"]["recompute"], "selective");
  const study::Config config = study::parse_config(plans[0].config, "plan.json");
  EXPECT_EQ(config.devices[0].memory_capacity, 40e9);
  EXPECT_EQ(config.devices[1].type, "A100");
}

TEST(Search, ErrorsNameTheFileAndPointer) {
  EXPECT_EQ(error_of([] {
              parse_search(search_document(R"({"H100": {"preset": "h100-sxm", "count": 0}})", "{}"),
                           {"H100"}, "search.json");
            }),
            "search.json:/cluster/gpus/H100/count: expected an integer >= 1, got 0");
  EXPECT_EQ(error_of([] {
              parse_search(search_document(R"({"H100": {"preset": "h100-sxn", "count": 8}})", "{}"),
                           {"H100"}, "search.json");
            }).substr(0, 60),
            std::string("search.json:/cluster/gpus/H100/preset: unknown device 'h100-sxn'")
                .substr(0, 60));
  EXPECT_EQ(error_of([] {
              parse_search(search_document(R"({"H100": {"preset": "h100-sxm", "count": 8}})",
                                           R"({"recompute": ["some"]})"),
                           {"H100"}, "search.json");
            }),
            "search.json:/space/recompute/0: expected one of none, selective, full, got \"some\"");
}

// Pruning never removes a plan that fits, and the search's best is the brute force's best:
// random small spaces, every plan simulated without pruning.
TEST(Search, PruningKeepsEveryPlanThatFits) {
  std::uint64_t pruned_total = 0;
  std::uint64_t fit_total = 0;
  for (std::uint32_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    std::mt19937 rng(seed);
    const auto pick = [&](std::vector<std::string> options) {
      return options[std::uniform_int_distribution<std::size_t>(0, options.size() - 1)(rng)];
    };
    const std::string gpus = pick(
        {R"({"H100": {"preset": "h100-sxm", "count": 8}})",
         R"({"H100": {"preset": "h100-sxm", "count": 4}, "A100": {"preset": "a100-40gb", "count": 4}})"});
    const std::string memory = pick({"\"0.4GB\"", "\"0.8GB\"", "\"1.5GB\""});
    const std::string schedules = pick(
        {R"(["1f1b", "zbv"])", R"(["interleaved-1f1b", "zb-h1"])", R"(["gpipe", "dualpipev"])"});
    const std::string use_all = pick({"true", "false"});
    nlohmann::json document =
        search_document(gpus,
                        R"({"schedules": )" + schedules +
                            R"(, "pipeline": [1, 2, 4], "tensor_parallel": [1, 2],
                            "micro_batch_size": [1, 2, 4], "chunks": [2],
                            "recompute": ["none", "selective", "full"]})",
                        R"({"memory": )" + memory + R"(, "use_all_gpus": )" + use_all + "}");
    document["top"] = 1;
    const Search search = parse_search(document, {"H100", "A100"}, "s.json");
    SearchOptions pruned;
    pruned.jobs = 2;
    pruned.keep_simulated = true;
    SearchOptions brute = pruned;
    brute.prune_divisibility = false;
    brute.prune_memory = false;
    const SearchResult with = run_search(search, pruned);
    const SearchResult all = run_search(search, brute);
    pruned_total += with.counts.pruned_memory;
    fit_total += with.counts.fit;
    std::set<std::string> kept;
    for (const PlanResult& r : with.simulated) {
      if (r.fits()) kept.insert(r.plan.config.dump());
    }
    std::uint64_t fit = 0;
    for (const PlanResult& r : all.simulated) {
      if (!r.fits()) continue;
      ++fit;
      EXPECT_TRUE(kept.contains(r.plan.config.dump())) << r.plan.config["description"];
    }
    EXPECT_EQ(fit, with.counts.fit);
    ASSERT_EQ(with.best.size(), all.best.size());
    if (!all.best.empty()) {
      EXPECT_EQ(with.best[0].plan.config, all.best[0].plan.config);
      EXPECT_EQ(with.best[0].outcome.makespan, all.best[0].outcome.makespan);
    }
  }
  // The spaces exercise both sides of the bound.
  EXPECT_GT(pruned_total, 0u);
  EXPECT_GT(fit_total, 0u);
}

TEST(Search, NearestMissWhenNothingFits) {
  const nlohmann::json document = search_document(
      R"({"H100": {"preset": "h100-sxm", "count": 4}})",
      R"({"schedules": ["1f1b"], "micro_batch_size": [1, 2], "recompute": ["none", "full"]})",
      R"({"memory": "0.3GB"})");
  const Search search = parse_search(document, {"H100"}, "s.json");
  SearchOptions options;
  options.jobs = 2;
  const SearchResult pruned = run_search(search, options);
  ASSERT_EQ(pruned.counts.fit, 0u);
  ASSERT_GT(pruned.counts.pruned_memory, 0u);
  ASSERT_TRUE(pruned.nearest_miss.has_value());
  const NearestMiss& miss = *pruned.nearest_miss;
  EXPECT_TRUE(miss.lower_bound);
  EXPECT_EQ(miss.overshoot.capacity, 0.3e9);
  // The smallest shortfall of every plan's bound, found again plan by plan.
  SearchCounts counts;
  double nearest = std::numeric_limits<double>::infinity();
  for (const Plan& plan : enumerate_plans(search, counts)) {
    const study::Config config = study::parse_config(plan.config, "s.json");
    if (const auto over = memory_shortfall(config)) {
      nearest = std::min(nearest, over->needed / over->capacity);
      EXPECT_TRUE(cannot_fit(config));
    }
  }
  EXPECT_DOUBLE_EQ(miss.overshoot.needed / miss.overshoot.capacity, nearest);
  EXPECT_FALSE(miss.plan.config.is_null());  // the config of the miss, to try by hand

  // Simulated instead of pruned: the miss is a simulated peak, never below the bound.
  options.prune_memory = false;
  const SearchResult simulated = run_search(search, options);
  ASSERT_TRUE(simulated.nearest_miss.has_value());
  EXPECT_FALSE(simulated.nearest_miss->lower_bound);
  EXPECT_GE(simulated.nearest_miss->overshoot.needed / simulated.nearest_miss->overshoot.capacity,
            nearest);

  // A search where a plan fits has no miss.
  nlohmann::json roomy = document;
  roomy["constraints"]["memory"] = "80GB";
  EXPECT_FALSE(run_search(parse_search(roomy, {"H100"}, "s.json"), options).nearest_miss);
}

}  // namespace
}  // namespace perflow::explore
