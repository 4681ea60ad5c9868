#include "perflow/cli/config.hpp"

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"

namespace perflow::cli {
namespace {

nlohmann::json base() {
  return nlohmann::json::parse(R"({
    "pipeline": {"schedule": "1f1b", "stages": 4, "microbatches": 8, "chunks": 1},
    "costs": {"forward": 1315, "backward": 2733, "weight": 2650, "activation": 1},
    "network": {"p2p_latency": "0us"}
  })");
}

std::string error_of(const nlohmann::json& doc) {
  try {
    const Config c = parse_config(doc, "cfg.json");
    (void)build_graph(c);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Config, ReadsTheDocumentedExample) {
  const Config c = parse_config(base(), "cfg.json");
  EXPECT_EQ(c.pipeline.schedule, "1f1b");
  EXPECT_EQ(c.pipeline.stages, 4u);
  EXPECT_EQ(c.pipeline.microbatches, 8u);
  EXPECT_EQ(c.pipeline.chunks, 1u);
  EXPECT_FALSE(c.pipeline.split_backward);
  EXPECT_EQ(c.costs.uniform().forward, 1'315'000);
  EXPECT_EQ(c.costs.uniform().backward, 2'733'000);
  EXPECT_EQ(c.costs.uniform().weight, 2'650'000);
  EXPECT_EQ(c.costs.uniform().activation, 1.0);
  EXPECT_EQ(c.simulation.p2p_latency, 0);
  EXPECT_EQ(build_graph(c).task_count(), 64u);
}

TEST(Config, OptionalFieldsHaveDefaults) {
  auto doc = base();
  doc["pipeline"].erase("chunks");
  doc.erase("network");
  doc["costs"].erase("activation");
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.pipeline.chunks, 1u);
  EXPECT_EQ(c.simulation.p2p_latency, 0);
  EXPECT_EQ(c.costs.uniform().activation, 0.0);
  EXPECT_EQ(c.costs.uniform().backward_frees, 0.0);
}

TEST(Config, ErrorsNameThePointerTheRuleAndTheValue) {
  struct Case {
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& d) { d["pipeline"]["chunks"] = 3; },
       "cfg.json:/pipeline/chunks: 1f1b needs exactly 1 chunk per stage, got 3"},
      {[](auto& d) { d["pipeline"]["stages"] = 0; },
       "cfg.json:/pipeline/stages: expected an integer in [1, 16777216], got 0"},
      {[](auto& d) { d["pipeline"]["microbatches"] = "8"; },
       "cfg.json:/pipeline/microbatches: expected an integer in [1, 16777216], got \"8\""},
      {[](auto& d) { d["pipeline"]["schedule"] = "1f1bb"; },
       "cfg.json:/pipeline/schedule: unknown schedule '1f1bb'; did you mean '1f1b'? (valid: "
       "gpipe, 1f1b, eager-1f1b, interleaved-1f1b, looped-bfs, zb-h1, zb-h2, zb, zbv, "
       "zbv-auto, 1f1b-v, v-half, v-min, dualpipe, dualpipev, custom)"},
      {[](auto& d) { d["pipeline"]["microbatchs"] = 8; },
       "cfg.json:/pipeline/microbatchs: unknown key 'microbatchs'; did you mean "
       "'microbatches'? (valid keys here: schedule, stages, microbatches, chunks, "
       "split_backward, microbatch_group_size, memory_limit, order)"},
      {[](auto& d) { d["pipeline"]["memory_limit"] = 4; },
       "cfg.json:/pipeline/memory_limit: 1f1b does not take memory_limit (schedules that do: zb, "
       "zbv-auto, v-half, v-min)"},
      {[](auto& d) { d["pipeline"]["microbatch_group_size"] = 4; },
       "cfg.json:/pipeline/microbatch_group_size: 1f1b does not take microbatch_group_size "
       "(schedules that do: interleaved-1f1b)"},
      {[](auto& d) { d["pipeline"]["memory_limit"] = -1; },
       "cfg.json:/pipeline/memory_limit: expected a memory limit > 0 (in F activations), got -1"},
      {[](auto& d) {
         d["simulation"] = {{"mode", "eager"}};
       },
       "cfg.json:/simulation/mode: expected \"ordered\" or \"greedy\", got \"eager\""},
      {[](auto& d) { d["costs"]["forward"] = "fast"; },
       "cfg.json:/costs/forward: expected a duration with a unit (ns, us, ms, s), got "
       "\"fast\""},
      {[](auto& d) { d["costs"]["weight"] = -2; },
       "cfg.json:/costs/weight: expected a duration >= 0, got -2"},
      {[](auto& d) { d["costs"]["backward_frees"] = 1.5; },
       "cfg.json:/costs/backward_frees: expected a fraction in [0, 1], got 1.5"},
      {[](auto& d) { d["costs"].erase("backward"); },
       "cfg.json:/costs: missing required key 'backward'"},
      {[](auto& d) { d["network"]["p2p_latency"] = "5 parsecs"; },
       "cfg.json:/network/p2p_latency: expected a duration such as 250ns, 1.5us or 2ms, got "
       "\"5 parsecs\""},
      {[](auto& d) { d["pipeline"]["split_backward"] = 1; },
       "cfg.json:/pipeline/split_backward: expected true or false, got 1"},
      {[](auto& d) { d = nlohmann::json::array(); }, "cfg.json: expected an object, got an array"},
      {[](auto& d) { d.erase("pipeline"); }, "cfg.json: missing required key 'pipeline'"},
  };
  for (const Case& c : cases) {
    auto doc = base();
    c.edit(doc);
    EXPECT_EQ(error_of(doc), c.message);
  }
}

}  // namespace
}  // namespace perflow::cli
