#include "perflow/cli/config.hpp"

#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "perflow/simulator/simulate.hpp"

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
       "cfg.json:/pipeline/stages: expected an integer in [1, 65536], got 0"},
      {[](auto& d) { d["pipeline"]["microbatches"] = "8"; },
       "cfg.json:/pipeline/microbatches: expected an integer in [1, 16777216], got \"8\""},
      {[](auto& d) { d["pipeline"]["schedule"] = "1f1bb"; },
       "cfg.json:/pipeline/schedule: unknown schedule '1f1bb'; did you mean '1f1b'? (valid: "
       "gpipe, 1f1b, eager-1f1b, interleaved-1f1b, looped-bfs, zb-h1, zb-h2, zb, zbv, "
       "zbv-auto, 1f1b-v, v-half, v-min, dualpipe, dualpipev, custom)"},
      {[](auto& d) { d["pipeline"]["microbatchs"] = 8; },
       "cfg.json:/pipeline/microbatchs: unknown key 'microbatchs'; did you mean "
       "'microbatches'? (valid keys here: schedule, stages, microbatches, chunks, "
       "split_backward, microbatch_group_size, memory_limit, order, shape)"},
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
       "cfg.json:/costs: stage 0 chunk 0 has no backward cost: give /costs/backward, a device "
       "type placed on it, or an override"},
      {[](auto& d) {
         d["placement"] = {{{"stages", "0-1"}, {"device_type", "H100"}}};
       },
       "cfg.json: missing required key 'device_types'"},
      {[](auto& d) {
         d["device_types"] = {{"A100", {{"forward", 2}}}};
         d["placement"] = {{{"stages", "0-1"}, {"device_type", "H100"}}};
       },
       "cfg.json:/placement/0/device_type: unknown device type 'H100' (defined in "
       "/device_types: A100)"},
      {[](auto& d) {
         d["device_types"] = {{"A100", {{"forward", 2}}}};
         d["placement"] = {{{"stages", "0-4"}, {"device_type", "A100"}}};
       },
       "cfg.json:/placement/0/stages: expected a stage or an inclusive range of stages (3, "
       "\"0-3\" or [0, 3]) within 0..3, got \"0-4\""},
      {[](auto& d) {
         d["device_types"] = {{"A100", {{"forward", 2}}}};
         d["placement"] = {{{"stages", "0-1"}, {"device_type", "A100"}},
                           {{"stages", 1}, {"device_type", "A100"}}};
       },
       "cfg.json:/placement/1/stages: stage 1 is already placed by an earlier entry"},
      {[](auto& d) {
         d["device_types"] = {{"A100", {{"forward", 2}}}};
       },
       "cfg.json:/device_types: device types are defined but never placed: add /placement or "
       "/parts"},
      {[](auto& d) {
         d["costs"]["overrides"] = {{{"stages", 2}, {"chunk", 1}, {"forward", 1}}};
       },
       "cfg.json:/costs/overrides/0/chunk: expected an integer in [0, 0], got 1"},
      {[](auto& d) { d["costs"]["static_memory"] = "20 parsecs"; },
       "cfg.json:/costs/static_memory: expected a size such as 512, \"64MB\" or \"80GiB\", got "
       "\"20 parsecs\""},
      {[](auto& d) {
         d["network"]["intra_node"] = {{"bandwidth", "fast"}};
       },
       "cfg.json:/network/intra_node/bandwidth: expected a bandwidth such as \"400GB/s\" or "
       "\"100Gb/s\", got \"fast\""},
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

TEST(Config, DeviceTypesPlacementAndOverridesResolveInOrder) {
  auto doc = base();
  doc["costs"] = {{"forward", 10},
                  {"backward", 20},
                  {"weight", 30},
                  {"static_memory", "1GB"},
                  {"overrides", {{{"stages", "3"}, {"weight", 7}, {"boundary_bytes", "2MB"}}}}};
  doc["device_types"] = {{"H100", {{"forward", 1}, {"memory", "80GB"}, {"activation", "1GiB"}}},
                         {"A100", {{"forward", 2}, {"backward", 4}, {"memory", "40GiB"}}}};
  doc["placement"] = {{{"stages", {0, 1}}, {"device_type", "H100"}},
                      {{"stages", "2-3"}, {"device_type", "A100"}}};
  doc["network"] = {{"p2p_latency", "1us"},
                    {"devices_per_node", 2},
                    {"intra_node", {{"latency", "2us"}, {"bandwidth", "400GB/s"}}},
                    {"inter_node", {{"latency", "5us"}, {"bandwidth", "100Gb/s"}}}};
  const Config c = parse_config(doc, "cfg.json");
  const auto& t = c.costs;
  EXPECT_EQ(t.at(StageId{0}, 0).forward, 1000);     // H100
  EXPECT_EQ(t.at(StageId{0}, 0).backward, 20'000);  // uniform
  EXPECT_EQ(t.at(StageId{0}, 0).activation, 1073741824.0);
  EXPECT_EQ(t.at(StageId{2}, 0).forward, 2000);  // A100
  EXPECT_EQ(t.at(StageId{2}, 0).backward, 4000);
  EXPECT_EQ(t.at(StageId{3}, 0).weight, 7000);  // override
  EXPECT_EQ(c.devices[1].type, "H100");
  EXPECT_EQ(c.devices[1].memory_capacity, 80e9);
  EXPECT_EQ(c.devices[3].memory_capacity, 40.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(c.devices[2].static_memory, 1e9);
  EXPECT_EQ(c.simulation.boundary_bytes, (std::vector<double>{0, 0, 0, 2e6}));
  EXPECT_EQ(c.simulation.devices_per_node, 2u);
  EXPECT_EQ(c.simulation.intra_node.latency, 2000);
  EXPECT_EQ(c.simulation.intra_node.bandwidth, 400e9);
  EXPECT_EQ(c.simulation.inter_node.bandwidth, 12.5e9);
  EXPECT_EQ(c.costs.p2p_latency(), 1000);
}

nlohmann::json heterogeneous_zbv() {
  std::ifstream in(PERFLOW_SOURCE_DIR "/examples/heterogeneous_zbv.json");
  return nlohmann::json::parse(in);
}

// The prototype's workflow through the config: two parts built on their own GPU type,
// filtered and merged, equal the same schedule with per-stage placement.
// Found in review: per-stage cost tables grew one stage at a time (quadratic); 65536 stages
// took minutes. Now the table is sized once.
TEST(Config, ManyStagesReadInLinearTime) {
  auto doc = base();
  doc["pipeline"]["stages"] = 65536;
  doc["pipeline"]["microbatches"] = 1;
  doc["costs"]["overrides"] = {{{"stages", "60000-65535"}, {"forward", 7}}};
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.costs.at(StageId{65535}, 0).forward, 7000);
  EXPECT_EQ(c.costs.at(StageId{59999}, 0).forward, 1'315'000);
  EXPECT_EQ(build_graph(c).task_count(), 131072u);
}

TEST(Config, PartsEqualPlacement) {
  const auto placed = heterogeneous_zbv();
  auto parted = placed;
  parted["parts"] = parted["placement"];
  parted.erase("placement");
  const auto run = [](const nlohmann::json& doc) {
    const Config c = parse_config(doc, "cfg.json");
    return simulator::simulate(build_graph(c), c.simulation);
  };
  const auto a = run(placed);
  const auto b = run(parted);
  EXPECT_EQ(a.metrics.makespan, 270'328'680);
  EXPECT_EQ(b.metrics.makespan, a.metrics.makespan);
  for (std::size_t d = 0; d < 8; ++d) {
    EXPECT_EQ(b.metrics.devices[d].peak_memory, a.metrics.devices[d].peak_memory);
    EXPECT_EQ(b.metrics.devices[d].busy, a.metrics.devices[d].busy);
  }
  const Config c = parse_config(parted, "cfg.json");
  EXPECT_EQ(c.devices[5].type, "A100");
  EXPECT_EQ(c.parts.size(), 2u);

  auto missing = parted;
  missing["parts"].erase(1);
  missing["costs"]["forward"] = 1;  // costs for stages 4-7, so the merge is what fails
  missing["costs"]["backward"] = 1;
  missing["costs"]["weight"] = 1;
  try {
    (void)build_graph(parse_config(missing, "cfg.json"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cfg.json:/parts: merge: open boundary F0.0 (stage 3) -> F0.0 (stage 4): no part "
              "holds stage 4");
  }
  auto both = parted;
  both["placement"] = placed["placement"];
  try {
    (void)parse_config(both, "cfg.json");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "cfg.json:/parts: give either /placement or /parts, not both");
  }
}

// Tensor parallelism adds tp_allreduces ring all-reduces to each F and B (not W):
// 2 (4 - 1) x 1 us + 2 (4 - 1) / 4 x 1 MB / 100 GB/s = 6 us + 15 us = 21 us each, 42 us per task.
TEST(Config, TensorParallelAddsAllReducesToForwardAndBackward) {
  auto doc = base();
  doc["parallelism"] = {{"tensor_parallel", 4}};
  doc["costs"]["tp_allreduce_bytes"] = "1MB";
  doc["costs"]["tp_allreduces"] = 2;
  doc["network"]["tensor_parallel"] = {{"latency", "1us"}, {"bandwidth", "100GB/s"}};
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.tensor_parallel, 4u);
  EXPECT_EQ(c.costs.at(StageId{3}, 0).forward, 1'315'000 + 42'000);
  EXPECT_EQ(c.costs.at(StageId{3}, 0).backward, 2'733'000 + 42'000);
  EXPECT_EQ(c.costs.at(StageId{3}, 0).weight, 2'650'000);

  // An override changes one stage's all-reduce count; the intra-node link is the default.
  doc["costs"]["overrides"] = {{{"stages", 0}, {"tp_allreduces", 0}}};
  doc["network"].erase("tensor_parallel");
  doc["network"]["intra_node"] = {{"latency", "1us"}, {"bandwidth", "100GB/s"}};
  const Config o = parse_config(doc, "cfg.json");
  EXPECT_EQ(o.costs.at(StageId{0}, 0).forward, 1'315'000);
  EXPECT_EQ(o.costs.at(StageId{1}, 0).forward, 1'315'000 + 42'000);

  doc["parallelism"]["tensor_parallel"] = 1;  // degree 1: nothing to reduce
  EXPECT_EQ(parse_config(doc, "cfg.json").costs.at(StageId{1}, 0).forward, 1'315'000);
}

TEST(Config, DataParallelAddsAllReducesAndOptimizerSteps) {
  auto doc = base();
  doc["pipeline"] = {{"schedule", "1f1b"}, {"stages", 2}, {"microbatches", 2}};
  doc["costs"] = {{"forward", 1},
                  {"backward", 1},
                  {"weight", 1},
                  {"gradient_bytes", 4000},
                  {"optimizer", "500ns"}};
  doc["parallelism"] = {{"data_parallel", 2}};
  doc["network"] = {{"data_parallel", {{"bandwidth", "1GB/s"}}}};
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.data_parallel.degree, 2u);
  EXPECT_TRUE(c.data_parallel.overlap);
  EXPECT_EQ(c.data_parallel.bandwidth, 1e9);
  EXPECT_EQ(c.data_parallel.gradient_bytes, (std::vector<double>{4000, 4000}));
  const EventGraph g = build_graph(c);
  EXPECT_EQ(g.lane_count(), 4u);
  // As in DataParallel.AllReduceAfterTheLastGradientThenTheOptimizer: 9 + 4 + 0.5 us.
  EXPECT_EQ(simulator::simulate(g, c.simulation).metrics.makespan, 13'500);

  // The inter-node link is the default for data parallelism.
  doc["network"] = {{"inter_node", {{"latency", "1us"}, {"bandwidth", "1GB/s"}}}};
  EXPECT_EQ(simulator::simulate(build_graph(parse_config(doc, "cfg.json"))).metrics.makespan,
            13'500 + 2'000);

  doc["simulation"] = {{"lower_communication", true}};
  const Config lowered = parse_config(doc, "cfg.json");
  EXPECT_TRUE(lowered.lower_communication);
  EXPECT_EQ(build_graph(lowered).lane_count(), 6u);  // + send 0>1, send 1>0

  doc["parallelism"]["data_parallel"] = 0;
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/data_parallel: expected an integer in [1, 1048576], got 0");
  doc["parallelism"] = {{"pipeline_parallel", 2}};
  EXPECT_EQ(error_of(doc).substr(0, 60),
            "cfg.json:/parallelism/pipeline_parallel: unknown key 'pipeli");
}

}  // namespace
}  // namespace perflow::cli
