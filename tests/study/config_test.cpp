#include "perflow/study/config.hpp"
#include "config_error.hpp"

#include <fstream>
#include <functional>
#include <utility>
#include <vector>

#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <string>

#include <gtest/gtest.h>

#include "../../src/study/detail/config_fields.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/collectives.hpp"
#include "perflow/parallel/expert_parallel.hpp"
#include "perflow/parallel/moe_dispatch.hpp"
#include "perflow/parallel/nccl_collectives.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config_schema.hpp"

namespace perflow::study {
namespace {

nlohmann::json base() {
  return nlohmann::json::parse(R"({
    "pipeline": {"schedule": "1f1b", "stages": 4, "microbatches": 8, "chunks": 1},
    "costs": {"forward": 1315, "backward": 2733, "weight": 2650, "activation": 1},
    "network": {"p2p_latency": "0us"}
  })");
}

using testing::error_of;

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
       "split_backward, microbatch_group_size, memory_limit, order, shape, layers)"},
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
       "type placed on it, an override, or /model with a GPU (/device or a device type's "
       "preset)"},
      {[](auto& d) {
         d["placement"] = {{{"stages", "0-1"}, {"device_type", "H100"}}};
       },
       "cfg.json:/placement/0/device_type: unknown device type 'H100' (defined in "
       "/device_types: none)"},
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

  // Without a data_parallel link, the inter-node link when the groups span nodes (one GPU
  // a node here).
  doc["network"] = {{"inter_node", {{"latency", "1us"}, {"bandwidth", "1GB/s"}}},
                    {"gpus_per_node", 1}};
  EXPECT_EQ(simulator::simulate(build_graph(parse_config(doc, "cfg.json"))).metrics.makespan,
            13'500 + 2'000);
  doc["network"]["gpus_per_node"] = 8;  // all four ranks in one node: intra_node, unlimited
  EXPECT_EQ(simulator::simulate(build_graph(parse_config(doc, "cfg.json"))).metrics.makespan,
            9'000 + 500);

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

// Ranks are placed tensor parallel first, then data parallel, then pipeline (Megatron-Core's
// order); each all-reduce runs over the link its group spans.
TEST(Config, PlacementDecidesTheAllReduceLinks) {
  auto doc = base();
  doc["pipeline"] = {{"schedule", "1f1b"}, {"stages", 1}, {"microbatches", 2}};
  doc["costs"] = {{"forward", 1}, {"backward", 1}, {"weight", 1}};
  doc["network"] = {{"intra_node", {{"latency", "1us"}, {"bandwidth", "400GB/s"}}},
                    {"inter_node", {{"latency", "5us"}, {"bandwidth", "50GB/s"}}}};
  struct Case {
    std::uint32_t tp, dp, pp, gpus_per_node;
    const char* dp_link;
    const char* tp_link;
  };
  const Case cases[] = {
      {1, 8, 1, 8, "intra_node", "intra_node"},   // 8 replicas in one node
      {2, 8, 1, 8, "inter_node", "intra_node"},   // 16 ranks: replicas 2 apart span 2 nodes
      {2, 4, 4, 8, "intra_node", "intra_node"},   // tp x dp = 8: one node per stage
      {16, 2, 1, 8, "inter_node", "inter_node"},  // TP 16 on 8-GPU nodes crosses the NIC
      {3, 2, 2, 8, "inter_node", "inter_node"},   // blocks of 6 (and of 3) straddle nodes
      {3, 2, 1, 8, "intra_node", "intra_node"},   // the whole job fits in one node
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(fmt::format("tp {} dp {} pp {}", k.tp, k.dp, k.pp));
    doc["parallelism"] = {{"tensor_parallel", k.tp}, {"data_parallel", k.dp}};
    doc["pipeline"]["stages"] = k.pp;
    doc["network"]["gpus_per_node"] = k.gpus_per_node;
    const Config c = parse_config(doc, "cfg.json");
    EXPECT_EQ(c.data_parallel_link, k.dp_link);
    EXPECT_EQ(c.tensor_parallel_link, k.tp_link);
    const bool intra = std::string_view(k.dp_link) == "intra_node";
    EXPECT_EQ(c.data_parallel.bandwidth, intra ? 400e9 : 50e9);
    EXPECT_EQ(c.data_parallel.latency, intra ? 1'000 : 5'000);
  }
  // A link that gives only some fields takes the rest from the placed link.
  doc["parallelism"] = {{"data_parallel", 8}};
  doc["pipeline"]["stages"] = 1;
  doc["network"]["data_parallel"] = {{"latency", "7us"}};
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.data_parallel_link, "/network/data_parallel");
  EXPECT_EQ(c.data_parallel.latency, 7'000);
  EXPECT_EQ(c.data_parallel.bandwidth, 400e9);
}

// costs.per "stage": the numbers are a whole stage's, split across its chunks so that the
// chunks sum exactly to it (the first chunks take the spare nanoseconds).
TEST(Config, CostsPerStageSplitAcrossChunks) {
  auto doc = base();
  doc["pipeline"] = {
      {"schedule", "interleaved-1f1b"}, {"stages", 4}, {"microbatches", 8}, {"chunks", 2}};
  doc["costs"] = {{"per", "stage"},        {"forward", 1315},        {"backward", "1001ns"},
                  {"weight", 2650},        {"activation", "2GB"},    {"static_memory", "10GB"},
                  {"boundary_bytes", 100}, {"optimizer", "3ns"},     {"gradient_bytes", 8},
                  {"tp_allreduces", 3},    {"tp_allreduce_bytes", 0}};
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.costs_per, "stage");
  for (std::uint32_t chunk = 0; chunk < 2; ++chunk) {
    const auto& t = c.costs.at(StageId{1}, chunk);
    EXPECT_EQ(t.forward, 657'500);
    EXPECT_EQ(t.backward, chunk == 0 ? 501 : 500);
    EXPECT_EQ(t.weight, 1'325'000);
    EXPECT_EQ(t.activation, 1e9);
  }
  EXPECT_EQ(c.devices[1].static_memory, 10e9);  // a stage's, not split
  EXPECT_EQ(c.simulation.boundary_bytes, (std::vector<double>(4, 100.0)));
  EXPECT_EQ(c.data_parallel.optimizer[2], 2);  // stage 1, chunk 0: 3 ns split 2 + 1
  EXPECT_EQ(c.data_parallel.optimizer[3], 1);
  EXPECT_EQ(c.data_parallel.gradient_bytes[3], 4.0);

  // The same model per chunk: the default reads the numbers as one chunk's.
  doc["costs"].erase("per");
  const Config per_chunk = parse_config(doc, "cfg.json");
  EXPECT_EQ(per_chunk.costs_per, "chunk");
  EXPECT_EQ(per_chunk.costs.at(StageId{1}, 1).forward, 1'315'000);

  // A stage-wide override follows costs.per; a chunk's own override is that chunk's.
  doc["costs"]["per"] = "stage";
  doc["costs"]["overrides"] = {{{"stages", "2-3"}, {"forward", 100}},
                               {{"stages", 3}, {"chunk", 1}, {"weight", 7}}};
  doc["device_types"] = {{"A100", {{"backward", 30}}}};
  doc["placement"] = {{{"stages", "0-3"}, {"device_type", "A100"}}};
  const Config o = parse_config(doc, "cfg.json");
  EXPECT_EQ(o.costs.at(StageId{2}, 0).forward, 50'000);
  EXPECT_EQ(o.costs.at(StageId{3}, 1).weight, 7'000);
  EXPECT_EQ(o.costs.at(StageId{3}, 0).weight, 1'325'000);
  EXPECT_EQ(o.costs.at(StageId{0}, 1).backward, 15'000);  // the device type's, split
}

// Interleaving a model per stage does not change its work: the same numbers per stage give
// 1F1B and interleaved 1F1B the same busy time per device.
TEST(Config, CostsPerStageKeepTheModelWhenChunksChange) {
  auto doc = base();
  doc["costs"]["per"] = "stage";
  const auto busy = [](const nlohmann::json& d) {
    const Config c = parse_config(d, "cfg.json");
    return simulate(c, build_graph(c)).metrics.devices[0].busy;
  };
  const TimeNs one = busy(doc);
  doc["pipeline"]["schedule"] = "interleaved-1f1b";
  doc["pipeline"]["chunks"] = 2;
  EXPECT_EQ(busy(doc), one);
  EXPECT_EQ(one, 8 * (1'315'000 + 2'733'000 + 2'650'000));
}

TEST(Config, AnOverrideOfOneChunkRefusesWholeStageFields) {
  auto doc = base();
  doc["pipeline"] = {
      {"schedule", "interleaved-1f1b"}, {"stages", 4}, {"microbatches", 8}, {"chunks", 2}};
  for (const char* field : {"static_memory", "boundary_bytes"}) {
    doc["costs"]["overrides"] = {{{"stages", 0}, {"chunk", 1}, {field, "1GB"}}};
    EXPECT_EQ(error_of(doc),
              fmt::format("cfg.json:/costs/overrides/0/{}: {} is a whole stage's, so an override "
                          "with \"chunk\" cannot set it (give it in an override without "
                          "\"chunk\")",
                          field, field));
  }
  // Without "chunk" it applies to the stage.
  doc["costs"]["overrides"] = {{{"stages", 0}, {"static_memory", "1GB"}}};
  EXPECT_EQ(parse_config(doc, "cfg.json").devices[0].static_memory, 1e9);
}

// Recomputation: the R task's time and what F keeps, per stage and chunk, with their
// defaults and errors at the field that asked for it.
TEST(Config, RecomputationResolvesPerStageAndChunk) {
  auto doc = base();
  doc["costs"]["activation"] = "1GB";
  doc["costs"]["recompute"] = "full";
  doc["costs"]["recompute_activation"] = "100MB";
  doc["costs"]["overrides"] = nlohmann::json::parse(
      R"([{"stages": "2-3", "recompute": "selective", "recompute_forward": 200,
           "recompute_activation": "600MB"},
          {"stages": 3, "recompute": "none"}])");
  const Config c = parse_config(doc, "cfg.json");
  const parallel::TaskCosts& full = c.costs.at(StageId{0}, 0);
  EXPECT_TRUE(full.recompute);
  EXPECT_EQ(full.recompute_forward, 1'315'000);  // full: the forward again
  EXPECT_EQ(full.kept_activation(), 100e6);
  EXPECT_EQ(full.rebuilt_activation(), 900e6);  // the rest, at once
  const parallel::TaskCosts& selective = c.costs.at(StageId{2}, 0);
  EXPECT_EQ(selective.recompute_forward, 200'000);
  EXPECT_EQ(selective.kept_activation(), 600e6);
  EXPECT_FALSE(c.costs.at(StageId{3}, 0).recompute);
  // An R before each of stages 0-2's 8 BW tasks.
  const EventGraph g = build_graph(c);
  EXPECT_EQ(g.task_count(), 64u + 3 * 8);
  EXPECT_EQ(g.label(g.program(DeviceId{0})[4]), "R0.0");  // after the 4 warm-up forwards
  EXPECT_EQ(g.label(g.program(DeviceId{0})[5]), "BW0.0");
}

TEST(Config, RecomputationAndOffloadErrorsNameTheField) {
  auto selective = base();
  selective["costs"]["recompute"] = "selective";
  selective["costs"]["recompute_activation"] = 0.5;
  EXPECT_EQ(error_of(selective),
            "cfg.json:/costs/recompute: stage 0 chunk 0 recomputes selectively but has no "
            "recompute_forward: give /costs/recompute_forward (the R task's time), or /model "
            "with a GPU");
  auto full = base();
  full["costs"]["recompute"] = "full";
  EXPECT_EQ(error_of(full),
            "cfg.json:/costs/recompute: stage 0 chunk 0 recomputes (full) but has no "
            "recompute_activation: give /costs/recompute_activation (what an F keeps until its "
            "backward), or /model");
  full["costs"]["recompute_activation"] = 2;
  EXPECT_EQ(error_of(full),
            "cfg.json:/costs/recompute: stage 0 chunk 0: recompute_activation (2 bytes) is more "
            "than the activation it recomputes (1 bytes)");
  full["costs"]["recompute"] = "most";
  EXPECT_EQ(error_of(full),
            "cfg.json:/costs/recompute: expected \"none\", \"selective\" or \"full\", got "
            "\"most\"");

  auto offload = base();
  offload["costs"]["offload"] = {{"ratio", 0.5}};
  EXPECT_EQ(error_of(offload),
            "cfg.json:/costs/offload: stage 0 offloads to host memory but has no host link: give "
            "/network/host_link or host_link in its device type ({\"bandwidth\": \"64GB/s\", "
            "\"latency\": 2} for PCIe Gen5 x16)");
  offload["costs"]["offload"] = {{"ratio", 0.5}, {"budget", "1GB"}};
  EXPECT_EQ(error_of(offload),
            "cfg.json:/costs/offload/budget: give a ratio or a budget, not both");
  offload["costs"]["offload"] = {{"ratio", 1.5}};
  EXPECT_TRUE(error_of(offload).starts_with("cfg.json:/costs/offload/ratio: expected a share"))
      << error_of(offload);
  offload["network"]["host_link"] = {{"bandwidth", "64GB/s"}};
  offload["costs"]["offload"] = {{"optimizer", true}};
  EXPECT_EQ(error_of(offload),
            "cfg.json:/costs/offload: stage 0 offloads its optimizer state but its size is "
            "unknown: give /costs/offload/optimizer_state, or /model");
  offload["costs"]["offload"]["optimizer_state"] = "1GB";
  EXPECT_EQ(error_of(offload),
            "cfg.json:/costs/offload: stage 0 offloads its optimizer state but has no optimizer "
            "step to copy it for: give /costs/optimizer, or /model with a GPU");
  auto chunk = base();
  chunk["costs"]["overrides"] =
      nlohmann::json::parse(R"([{"stages": 0, "chunk": 0, "offload": {"budget": "1GB"}}])");
  EXPECT_EQ(error_of(chunk),
            "cfg.json:/costs/overrides/0/offload/budget: an offload budget is a whole stage's, so "
            "an override with \"chunk\" cannot set it (give it in an override without "
            "\"chunk\")");
}

// Offload fields merge field by field (an override of one chunk's ratio keeps the stage's
// optimizer state); a budget and a ratio on one chunk, or more optimizer state than the
// static memory holding it, are refused.
TEST(Config, OffloadFieldsMergeAndConflictsAreRefused) {
  auto doc = base();
  doc["costs"]["static_memory"] = "10GB";
  doc["costs"]["optimizer"] = 100;
  doc["network"]["host_link"] = {{"bandwidth", "32GB/s"}};
  doc["costs"]["offload"] = {{"optimizer", true}, {"optimizer_state", "4GB"}};
  doc["costs"]["overrides"] =
      nlohmann::json::parse(R"([{"stages": 0, "chunk": 0, "offload": {"ratio": 1}}])");
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.offload.optimizer_bytes, std::vector<double>(4, 4e9));
  EXPECT_EQ(c.offload.ratio, (std::vector<double>{1, 0, 0, 0}));

  auto both = doc;
  both["costs"]["offload"]["budget"] = "1GB";
  EXPECT_EQ(error_of(both),
            "cfg.json:/costs/offload: stage 0 chunk 0 has both an offload budget and a ratio (1): "
            "give one of them");
  auto zero = both;  // a ratio of 0 is no ratio: the budget applies
  zero["costs"]["overrides"][0]["offload"]["ratio"] = 0;
  EXPECT_EQ(error_of(zero), "(no error)");

  auto too_much = doc;
  too_much["costs"]["offload"]["optimizer_state"] = "12GB";
  EXPECT_EQ(error_of(too_much),
            "cfg.json:/costs/offload: stage 0 offloads 12000000000 bytes of optimizer state, more "
            "than its static memory (10000000000 bytes), which holds it: give "
            "/costs/static_memory");
}

// Offloading: the host link comes from the device type, else /network; the optimizer state
// leaves the static memory and comes back around the optimizer step.
TEST(Config, OffloadTakesTheDeviceTypesHostLink) {
  auto doc = base();
  doc["costs"]["static_memory"] = "10GB";
  doc["costs"]["optimizer"] = 100;
  doc["costs"]["offload"] = {{"ratio", 1}, {"optimizer", true}, {"optimizer_state", "4GB"}};
  doc["network"]["host_link"] = {{"bandwidth", "32GB/s"}, {"latency", 1}};
  doc["device_types"] = nlohmann::json::parse(
      R"({"C2C": {"host_link": {"bandwidth": "450GB/s", "latency": 2}}, "PCIe": {}})");
  doc["placement"] = nlohmann::json::parse(
      R"([{"stages": "0-1", "device_type": "C2C"}, {"stages": "2-3", "device_type": "PCIe"}])");
  const Config c = parse_config(doc, "cfg.json");
  ASSERT_TRUE(c.offloads);
  EXPECT_EQ(c.offload.host_link[0].bandwidth, 450e9);
  EXPECT_EQ(c.offload.host_link[0].latency, 2000);
  EXPECT_EQ(c.offload.host_link[3].bandwidth, 32e9);
  EXPECT_EQ(c.offload.ratio, std::vector<double>(4, 1.0));
  EXPECT_EQ(c.offload.optimizer_bytes, std::vector<double>(4, 4e9));
  EXPECT_EQ(c.devices[0].static_memory, 6e9);
  EXPECT_EQ(c.devices[0].host_optimizer_state, 4e9);
  const EventGraph g = build_graph(c);
  const simulator::SimulationResult r = simulate(c, g);
  // The optimizer state's copies on stage 3: 4 GB at 32 GB/s and 1 us, each way.
  std::size_t optimizer_copies = 0;
  for (std::uint32_t t = 0; t < g.task_count(); ++t) {
    if (is_host_copy(g.kind(TaskId{t})) && g.device(TaskId{t}) == DeviceId{3}) {
      if (g.duration(TaskId{t}) == 125'001'000) ++optimizer_copies;
    }
  }
  EXPECT_EQ(optimizer_copies, 2u);
  // The peak: the optimizer state, copied in while the last BW still holds its activation
  // (1 unit), on top of the static memory left on the device.
  EXPECT_EQ(r.metrics.devices[3].peak_memory, 4e9 + 1);
  const DeviceMemory m = device_memory(c, r.metrics.devices[3]);
  EXPECT_EQ(m.total, 10e9 + 1);
}

TEST(Config, DurationsInStringsNeedAUnit) {
  auto doc = base();
  doc["costs"]["backward"] = "2733";
  EXPECT_EQ(error_of(doc),
            "cfg.json:/costs/backward: expected a duration with a unit (ns, us, ms, s), such as "
            "\"2733us\", got \"2733\"");
  doc["costs"]["backward"] = "2733us";
  EXPECT_EQ(parse_config(doc, "cfg.json").costs.uniform().backward, 2'733'000);
}

TEST(Config, CommentsAndASchemaKeyAreAccepted) {
  auto doc = base();
  doc["$schema"] = "https://example.org/perflow.schema.json";
  doc["comment"] = "top";
  doc["pipeline"]["comment"] = "p";
  doc["costs"]["overrides"] = {{{"stages", 0}, {"forward", 1}, {"comment", "slow GPU"}}};
  doc["device_types"] = {{"comment", "measured in May"}, {"A100", {{"weight", 3}}}};
  doc["placement"] = {{{"stages", "0-3"}, {"device_type", "A100"}}};
  EXPECT_EQ(parse_config(doc, "cfg.json").costs.at(StageId{0}, 0).forward, 1000);
  doc["network"]["comment"] = 3;
  EXPECT_EQ(error_of(doc), "cfg.json:/network/comment: expected a string (a comment), got 3");
  doc = base();
  doc["$schema"] = 1;
  EXPECT_EQ(error_of(doc), "cfg.json:/$schema: expected a string, got 1");
  doc = base();
  doc["costs"]["coment"] = "x";
  EXPECT_EQ(error_of(doc).substr(0, 72),
            "cfg.json:/costs/coment: unknown key 'coment'; did you mean 'comment'? (v");
}

// A step beyond the simulator's range names the file, as every config error does.
TEST(Config, TheRangeErrorNamesTheFile) {
  auto doc = base();
  doc["costs"]["forward"] = "400000000s";
  doc["pipeline"]["microbatches"] = 16;
  doc["pipeline"]["stages"] = 1;
  EXPECT_EQ(error_of(doc).substr(0, 50), "cfg.json: the simulated step could last up to 6.4e");
}

// Every error path the table reaches: each field of each object given a value of the wrong
// kind or out of bounds, and an unknown key in each object. Each error names the file and
// the pointer of the field (or of an object above it), never nothing.
nlohmann::json full_config() {
  return nlohmann::json::parse(R"({
    "description": "every object",
    "pipeline": {"schedule": "interleaved-1f1b", "stages": 4, "microbatches": 8, "chunks": 2},
    "parallelism": {"data_parallel": 2, "tensor_parallel": 2, "overlap_grad_reduce": true},
    "model": {"preset": "gpt3-175b", "layers": 8, "hidden": 256, "ffn_hidden": 1024,
              "heads": 8, "kv_heads": 4, "vocab": 1000, "sequence": 128, "mlp": "swiglu",
              "tied_embeddings": false},
    "training": {"micro_batch_size": 2, "global_batch_size": 32, "precision": "bf16",
                 "recompute": "selective", "distributed_optimizer": true,
                 "sequence_parallel": true, "flash_attention": true},
    "costs": {"forward": 10, "backward": 20, "weight": 30, "activation": "1GB",
              "backward_frees": 0.5, "static_memory": "1GB", "boundary_bytes": "1MB",
              "optimizer": 5, "gradient_bytes": "1MB", "tp_allreduce_bytes": "1MB",
              "tp_allreduces": 2, "per": "chunk", "recompute": "selective",
              "recompute_forward": 3, "recompute_activation": "100MB",
              "offload": {"ratio": 0.5, "optimizer": true},
              "overrides": [{"stages": "0-1", "chunk": 1, "forward": 11}]},
    "device_types": {"H100": {"forward": 9, "memory": "80GB",
                              "host_link": {"latency": "2us", "bandwidth": "64GB/s"}}},
    "placement": [{"stages": "0-3", "device_type": "H100"}],
    "network": {"p2p_latency": "1us", "devices_per_node": 2,
                "intra_node": {"latency": "1us", "bandwidth": "400GB/s"},
                "inter_node": {"latency": "5us", "bandwidth": "100Gb/s"},
                "data_parallel": {"latency": "5us", "bandwidth": "100Gb/s"},
                "tensor_parallel": {"latency": "1us", "bandwidth": "400GB/s"},
                "host_link": {"latency": "2us", "bandwidth": "64GB/s"}},
    "simulation": {"mode": "ordered", "lower_communication": true}
  })");
}

std::vector<nlohmann::json> bad_values(const detail::Field& f) {
  using K = detail::FieldKind;
  switch (f.kind) {
    case K::String:
      return {5, nlohmann::json::object()};
    case K::Choice:
    case K::Schedule:
    case K::ModelPreset:
    case K::DevicePreset:
      return {"nope", 1};
    case K::LayerSplit:
      return {"uneven", nlohmann::json::array({1, 2})};
    case K::Boolean:
      return {1, "true"};
    case K::Integer:
      return {f.min - 1, f.max + 1, 1.5, "8"};
    case K::Number:
      return {"x", f.exclusive_min ? f.min : f.min - 1, f.max * 10 + 1};
    case K::Duration:
      return {"2733", -1, "1.5 parsecs", nlohmann::json::object()};
    case K::Size:
      return {"20 parsecs", -1, 1e19, true};
    case K::Rate:
      return {"fast", 0, "5GB"};
    case K::StageRange:
      return {"3-1", 99, nlohmann::json::array({0}), "a"};
    case K::Order:
      return {5, nlohmann::json::array({"X0.0"})};
    case K::Object:
      return {5, nlohmann::json{{"bogus", 1}}};
    case K::ObjectArray:
      return {5, nlohmann::json::array({5})};
    case K::ObjectMap:
      return {5, nlohmann::json{{"H100", 5}}};
  }
  return {};
}

void walk(const nlohmann::json& doc, const detail::Section& section, const std::string& pointer,
          std::size_t& checked) {
  const nlohmann::json::json_pointer at(pointer);
  {
    nlohmann::json bad = doc;
    bad[at]["bogus_key"] = 1;
    EXPECT_TRUE(error_of(bad).starts_with("cfg.json:" + pointer + "/bogus_key: unknown key"))
        << error_of(bad);
    ++checked;
  }
  for (const auto& part : section.parts) {
    for (const detail::Field& f : part) {
      const std::string here =
          pointer + "/" + std::string(f.name == "$schema" ? "$schema" : f.name);
      if (f.name == "order" || f.name == "shape" || f.name == "memory_limit" ||
          f.name == "microbatch_group_size" || f.name == "parts") {
        continue;  // only some schedules take them: walked on their own configs below
      }
      for (const nlohmann::json& value : bad_values(f)) {
        nlohmann::json bad = doc;
        bad[nlohmann::json::json_pointer(here)] = value;
        const std::string error = error_of(bad);
        EXPECT_TRUE(error.starts_with("cfg.json:" + here) ||
                    (f.required && error.starts_with("cfg.json:" + pointer)))
            << here << " = " << value.dump() << ": " << error;
        ++checked;
      }
      if (f.section == nullptr) continue;
      if (f.kind == detail::FieldKind::Object) walk(doc, *f.section, here, checked);
      if (f.kind == detail::FieldKind::ObjectArray) walk(doc, *f.section, here + "/0", checked);
      if (f.kind == detail::FieldKind::ObjectMap) walk(doc, *f.section, here + "/H100", checked);
    }
  }
}

TEST(Config, EveryErrorNamesTheFileAndThePointer) {
  const nlohmann::json doc = full_config();
  ASSERT_EQ(error_of(doc), "(no error)");
  std::size_t checked = 0;
  walk(doc, detail::kConfigSection, "", checked);
  EXPECT_GT(checked, 150u);

  // The fields only some schedules take, on a schedule that takes them.
  auto custom = base();
  custom["pipeline"] = {{"schedule", "custom"},
                        {"stages", 1},
                        {"microbatches", 1},
                        {"order", {"F0.0 BW0.0"}},
                        {"shape", "linear"}};
  ASSERT_EQ(error_of(custom), "(no error)");
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"order", 5}, {"order", {"F0.0 X1"}}, {"order", {{"F0.0", 3}}}, {"shape", "w"}}) {
    auto bad = custom;
    bad["pipeline"][key] = value;
    EXPECT_TRUE(error_of(bad).starts_with("cfg.json:/pipeline/" + key)) << error_of(bad);
  }
  auto zb = base();
  zb["pipeline"] = {{"schedule", "zb"}, {"stages", 4}, {"microbatches", 8}, {"memory_limit", 0}};
  EXPECT_TRUE(error_of(zb).starts_with("cfg.json:/pipeline/memory_limit: ")) << error_of(zb);
  auto parts = heterogeneous_zbv();
  parts["parts"] = {{{"stages", "0-7"}, {"schedule", "zbvv"}}};
  parts.erase("placement");
  EXPECT_TRUE(error_of(parts).starts_with("cfg.json:/parts/0/schedule: unknown schedule"))
      << error_of(parts);
}

// The schema is generated from the same table: every key the parser takes is in it, with
// the same bounds, and nothing else.
TEST(ConfigSchema, ListsEveryKeyOfTheTable) {
  const nlohmann::ordered_json schema = config_schema();
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(schema["additionalProperties"], false);
  EXPECT_EQ(schema["required"], nlohmann::ordered_json::array({"pipeline"}));
  const auto& stages = schema["$defs"]["pipeline"]["properties"]["stages"];
  EXPECT_EQ(stages["minimum"], 1);
  EXPECT_EQ(stages["maximum"], 65536);
  const auto keys = [](const nlohmann::ordered_json& object) {
    std::vector<std::string> out;
    for (const auto& [key, value] : object["properties"].items()) out.push_back(key);
    return out;
  };
  const auto table_keys = [](const detail::Section& section) {
    const std::vector<std::string_view> names = section.keys();
    std::vector<std::string> out(names.begin(), names.end());
    out.emplace_back("comment");
    return out;
  };
  EXPECT_EQ(keys(schema), table_keys(detail::kConfigSection));
  EXPECT_EQ(keys(schema["$defs"]["costs"]), table_keys(detail::kCostsSection));
  EXPECT_EQ(keys(schema["$defs"]["override"]), table_keys(detail::kOverrideSection));
  EXPECT_EQ(keys(schema["$defs"]["link"]), table_keys(detail::kLinkSection));
  EXPECT_EQ(schema["$defs"]["costs"]["properties"]["per"]["enum"],
            nlohmann::ordered_json::array({"chunk", "stage"}));
}

nlohmann::json model_config() {
  return nlohmann::json::parse(R"({
    "model": {"preset": "gpt3-175b", "layers": 8, "hidden": 1024, "ffn_hidden": 4096,
              "heads": 16, "vocab": 1000, "sequence": 512},
    "training": {"micro_batch_size": 2, "global_batch_size": 64},
    "device": "h100-sxm",
    "pipeline": {"schedule": "1f1b", "stages": 4},
    "parallelism": {"tensor_parallel": 2, "data_parallel": 4}
  })");
}

// /network/collectives: NCCL pricing by default with /model, each group on the links it spans
// with its ranks per node; "ring" keeps one ring over the placed link.
TEST(ModelConfig, CollectivesArePricedAsNcclOverTheLinksTheirGroupsSpan) {
  auto doc = model_config();  // tp 2 x dp 4 x pp 4 on 8-GPU nodes of H100s
  Config c = parse_config(doc, "cfg.json");
  ASSERT_TRUE(c.data_parallel.nccl.has_value());
  ASSERT_TRUE(c.tensor_parallel_nccl.has_value());
  // A data-parallel group (4 ranks 2 apart) lies in one node; NCCL sees it whole.
  EXPECT_EQ(c.data_parallel.nccl->ranks_per_node, 4u);
  EXPECT_EQ(c.data_parallel.nccl->generation, GpuGeneration::Hopper);
  EXPECT_TRUE(c.data_parallel.nccl->nvls);
  EXPECT_EQ(c.data_parallel.nccl->overhead, 20'000);
  EXPECT_EQ(c.tensor_parallel_nccl->ranks_per_node, 2u);
  EXPECT_EQ(c.tensor_parallel_nccl->intra.bandwidth, 450e9);
  EXPECT_EQ(c.tensor_parallel_nccl->inter.bandwidth, 50e9);
  // TP 8: the data-parallel replicas are 8 apart, one a node, and cross the NIC.
  doc["parallelism"]["tensor_parallel"] = 8;
  doc["model"]["heads"] = 32;
  doc["network"] = {{"collective_overhead", "5us"}};
  c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.data_parallel_link, "inter_node");
  EXPECT_EQ(c.data_parallel.nccl->ranks_per_node, 1u);
  EXPECT_EQ(c.data_parallel.nccl->overhead, 5'000);
  // A data_parallel link replaces the one the group is placed on (here the NIC).
  doc["network"]["data_parallel"] = {{"bandwidth", "10GB/s"}};
  c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.data_parallel.nccl->inter.bandwidth, 10e9);
  EXPECT_EQ(c.data_parallel.nccl->intra.bandwidth, 450e9);
  // "ring": no NCCL networks, and no call overhead to give.
  doc["network"] = {{"collectives", "ring"}};
  c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.collectives, "ring");
  EXPECT_FALSE(c.data_parallel.nccl.has_value());
  EXPECT_FALSE(c.tensor_parallel_nccl.has_value());
  doc["network"]["collective_overhead"] = "5us";
  EXPECT_EQ(error_of(doc),
            "cfg.json:/network/collective_overhead: collective_overhead is the fixed time of an "
            "NCCL call: it needs /network/collectives \"nccl\" (the ring has a latency per step "
            "only)");
  doc["network"] = {{"collectives", "tree"}};
  EXPECT_EQ(error_of(doc),
            "cfg.json:/network/collectives: expected \"nccl\" or \"ring\", got \"tree\"");
  // Without /model the ring stays the default.
  EXPECT_EQ(parse_config(base(), "cfg.json").collectives, "ring");
}

// Megatron-LM's gradient buckets: max(40M, 1M x dp) parameters on stage 0's first chunk in the
// gradients' type (fp32 without /model or for bf16; bf16 when asked); the distributed optimizer
// reduce-scatters and gathers back the 2-byte parameters.
TEST(ModelConfig, GradientBucketsAndTheDistributedOptimizer) {
  auto doc = base();
  doc["parallelism"] = {{"data_parallel", 8}};
  Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.data_parallel.bucket_bytes, (std::vector<double>{160e6}));  // 40M x 4 bytes
  EXPECT_FALSE(c.data_parallel.sharded);
  doc["parallelism"] = {{"data_parallel", 64}};
  EXPECT_EQ(parse_config(doc, "cfg.json").data_parallel.bucket_bytes,
            (std::vector<double>{256e6}));  // 64M x 4
  doc["parallelism"]["grad_bucket_size"] = 1000000;
  EXPECT_EQ(parse_config(doc, "cfg.json").data_parallel.bucket_bytes, (std::vector<double>{4e6}));

  auto model = model_config();
  model["training"]["distributed_optimizer"] = true;
  c = parse_config(model, "cfg.json");
  EXPECT_TRUE(c.data_parallel.sharded);
  EXPECT_FALSE(c.data_parallel.overlap_param_gather);
  const double parameters = c.model->positions[0].parameters;
  EXPECT_EQ(c.data_parallel.gradient_bytes[0], 4 * parameters);
  EXPECT_EQ(c.data_parallel.parameter_bytes[0], 2 * parameters);
  EXPECT_EQ(c.data_parallel.bucket_bytes, (std::vector<double>{160e6}));
  model["training"]["grad_reduce_dtype"] = "bf16";
  model["parallelism"]["overlap_param_gather"] = true;
  c = parse_config(model, "cfg.json");
  EXPECT_EQ(c.data_parallel.gradient_bytes[0], 2 * parameters);
  EXPECT_EQ(c.model->positions[0].gradient_bytes, 2 * parameters);  // the buffer too
  EXPECT_EQ(c.data_parallel.bucket_bytes, (std::vector<double>{80e6}));
  EXPECT_TRUE(c.data_parallel.overlap_param_gather);

  // What cannot be said.
  model["parallelism"]["overlap_grad_reduce"] = false;
  EXPECT_EQ(error_of(model),
            "cfg.json:/parallelism/overlap_param_gather: overlapping the parameter gather needs "
            "overlap_grad_reduce: true");
  model["parallelism"].erase("overlap_grad_reduce");
  model["training"]["distributed_optimizer"] = false;
  EXPECT_EQ(error_of(model),
            "cfg.json:/parallelism/overlap_param_gather: the parameters are gathered back from "
            "the distributed optimizer's shards: set /training/distributed_optimizer (with "
            "/model)");
  doc["costs"]["gradient_bytes"] = "1GB";
  doc["parallelism"]["grad_bucket_size"] = 100;
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/grad_bucket_size: buckets of 100 parameters split stage 0's "
            "1000000000 gradient bytes into more than 1048576 buckets: give a larger size");
  model["training"]["grad_reduce_dtype"] = "fp8";
  EXPECT_EQ(error_of(model).substr(0, 60),
            "cfg.json:/training/grad_reduce_dtype: expected one of fp32, ");
}

// /model on a GPU: microbatches from the global batch, every cost from the model, explicit
// costs winning over derived ones, memory capacity from the preset.
TEST(ModelConfig, DerivesCostsMemoryAndTraffic) {
  const Config c = parse_config(model_config(), "cfg.json");
  EXPECT_EQ(c.pipeline.microbatches, 8u);  // 64 / (2 x 4)
  ASSERT_TRUE(c.model.has_value());
  const model::Transformer& m = c.model->transformer;
  EXPECT_EQ(m.layers, 8u);
  EXPECT_EQ(m.kv_heads, 16u);  // a multi-head preset's kv_heads follow the heads given
  const auto& positions = c.model->positions;
  ASSERT_EQ(positions.size(), 4u);
  // The default split: 8 layers over 4 stages, 2 each (Megatron-LM's).
  EXPECT_EQ(positions[0].layers.count, 2u);
  EXPECT_TRUE(positions[0].layers.embedding);
  EXPECT_EQ(positions[1].layers.count, 2u);
  EXPECT_EQ(positions[1].layers.first, 2u);
  EXPECT_EQ(positions[3].layers.count, 2u);
  EXPECT_TRUE(positions[3].layers.head);
  const model::PositionCosts expected =
      model::derive_position(m, c.model->training, {.tensor = 2, .data = 4},
                             model::find_device_preset("h100-sxm")->spec, positions[1].layers);
  // F and B also wait for their tensor-parallel all-reduces: 2 per layer, 2 layers, each of
  // 2 x 2 x 512 x 1024 bytes over 2 ranks on NVLink (the preset's 450 GB/s), priced as NCCL
  // does: the Simple ring, 8.4 + 2 x 3.4 us + 2097152 B / (450 x 20.6 / 25 GB/s) = 20.856 us
  // (LL 22.7, LL128 23.9, NVLS 32.6), plus the 20 us call overhead.
  ASSERT_EQ(expected.tp_allreduces, 4u);
  EXPECT_EQ(c.collectives, "nccl");
  ASSERT_TRUE(c.tensor_parallel_nccl.has_value());
  const parallel::CollectiveChoice one = parallel::nccl_collective_time(
      parallel::Collective::AllReduce, 2.0 * 2 * 512 * 1024, 2, *c.tensor_parallel_nccl);
  EXPECT_EQ(one.algorithm, parallel::CollectiveAlgorithm::Ring);
  EXPECT_EQ(one.protocol, parallel::CollectiveProtocol::Simple);
  const TimeNs tp = 4 * one.time;
  EXPECT_EQ(tp, 4 * 40856);
  // This small layer is host-bound (ModelConfig.HostFloorBoundsSmallTasks): each task takes
  // the longer of its GPU time with the collectives and its host's.
  EXPECT_EQ(c.costs.at(StageId{1}, 0).forward, std::max(std::llround(expected.forward_ns) + tp,
                                                        std::llround(expected.forward_host.ns)));
  EXPECT_EQ(c.costs.at(StageId{1}, 0).backward, std::max(std::llround(expected.backward_ns) + tp,
                                                         std::llround(expected.backward_host.ns)));
  EXPECT_EQ(c.costs.at(StageId{1}, 0).weight,
            std::max(std::llround(expected.weight_ns), std::llround(expected.weight_host.ns)));
  EXPECT_EQ(c.costs.at(StageId{1}, 0).activation, expected.activation);
  EXPECT_EQ(c.devices[1].static_memory, expected.static_memory());
  EXPECT_EQ(c.devices[1].memory_capacity, 81559 * 1024.0 * 1024.0);  // nvidia-smi's 81,559 MiB
  EXPECT_EQ(c.devices[1].type, "h100-sxm");
  EXPECT_EQ(c.data_parallel.gradient_bytes[1], expected.dp_gradient_bytes);
  EXPECT_EQ(c.simulation.intra_node.bandwidth, 450e9);  // NVLink, from the preset
  EXPECT_EQ(c.simulation.inter_node.bandwidth, 50e9);   // the NIC

  auto doc = model_config();
  doc["costs"] = {{"forward", 7}};  // a measured forward wins
  const Config measured = parse_config(doc, "cfg.json");
  EXPECT_EQ(measured.costs.at(StageId{2}, 0).weight, c.costs.at(StageId{2}, 0).weight);
  EXPECT_LT(measured.costs.at(StageId{2}, 0).forward, c.costs.at(StageId{2}, 0).forward);

  const auto report = [](const nlohmann::json& d) {
    const Config cfg = parse_config(d, "cfg.json");
    return simulate(cfg, build_graph(cfg)).metrics.makespan;
  };
  EXPECT_GT(report(model_config()), 0);
  const std::optional<Throughput> t = throughput(c, 1'000'000'000);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->gpus, 32u);
  EXPECT_DOUBLE_EQ(t->tokens_per_s, 64.0 * 512);
  EXPECT_DOUBLE_EQ(t->model_tflops_per_gpu, 3 * m.forward_flops_per_sample() * 64 / 32 / 1e12);
  EXPECT_DOUBLE_EQ(t->mfu, t->model_tflops_per_gpu * 1e12 / 989.4e12);
}

// /pipeline/layers by name: "even" by default; "balanced" weighs each unit's time on the GPU,
// so a head with a large vocabulary takes layers off the last stage, and its slowest stage is
// never slower than even's; "fastest" needs a GPU on every stage.
// Llama 3 70B on 64 H100s as Megatron-LM trains it in fp8 (TP 4 with sequence parallelism,
// PP 8 with 5 virtual stages, DP 2, micro batch 1, global batch 128, distributed optimizer):
// it fits. Stage 0 peaks at Megatron-LM's interleaved warm-up plus one, 2 (p - 1) + (v - 1) p
// + 1 = 47 chunk activations of 2 layers at 486,539,264 bytes each in fp8 (no dropout, no
// embedding mask), on top of its static memory: 2-byte weights, fp32 gradients, 12 bytes of
// optimizer state over 2 ranks and the fp8 copies of its GEMM weights (2 bytes each).
TEST(ModelConfig, Llama3On64H100sInFp8Fits) {
  const Config c = parse_config(nlohmann::json::parse(R"({
    "model": {"preset": "llama3-70b"},
    "training": {"micro_batch_size": 1, "global_batch_size": 128, "precision": "fp8",
                 "sequence_parallel": true, "distributed_optimizer": true},
    "device": "h100-sxm",
    "pipeline": {"schedule": "interleaved-1f1b", "stages": 8, "chunks": 5},
    "parallelism": {"tensor_parallel": 4, "data_parallel": 2}
  })"),
                                "cfg.json");
  const simulator::SimulationResult r = simulate(c, build_graph(c));
  EXPECT_EQ(r.metrics.devices[0].peak_memory, 47 * 2 * 486'539'264.0);
  double parameters = 0, gemm = 0;
  for (std::uint32_t k = 0; k < 5; ++k) {
    parameters += c.model->positions[k].parameters;
    gemm += c.model->positions[k].fp8_weight_bytes / 2;
  }
  const double h = 8192, layer = c.model->transformer.layer_parameters();
  EXPECT_DOUBLE_EQ(parameters, 10 * ((layer - 2 * h) / 4 + 2 * h) + 128256 * h / 4);
  EXPECT_DOUBLE_EQ(gemm, 10 * (layer - 2 * h) / 4);
  EXPECT_DOUBLE_EQ(c.devices[0].static_memory, (2 + 4 + 12.0 / 2) * parameters + 2 * gemm);
  const DeviceMemory m = device_memory(c, r.metrics.devices[0]);
  EXPECT_FALSE(m.out_of_memory);
  EXPECT_EQ(m.info.memory_capacity, 81559 * 1024.0 * 1024.0);  // what nvidia-smi reports
  EXPECT_LT(m.total, 79e9);
}

// The host floor: a small layer split over 8 tensor-parallel ranks takes less GPU time
// than its host needs to issue it; the task takes the host's time. CUDA graphs lift the
// floor; a measured duration replaces it; device_types.X.kernel_launch sets its rate.
TEST(ModelConfig, HostFloorBoundsSmallTasks) {
  auto doc = model_config();  // h 1024, 8 layers, micro batch 2 x 512 tokens, on H100s
  doc["parallelism"] = {{"tensor_parallel", 8}, {"data_parallel", 1}};
  const Config eager = parse_config(doc, "cfg.json");
  const model::PositionCosts& p = eager.model->positions[1];
  const parallel::TaskCosts& costs = eager.costs.at(StageId{1}, 0);
  ASSERT_GT(p.backward_host.ns, p.backward_ns);
  EXPECT_EQ(costs.backward, std::llround(p.backward_host.ns));
  EXPECT_EQ(costs.weight, std::llround(p.weight_host.ns));
  // Both host-bound: a fused BW issues B's and W's kernels, one after the other.
  EXPECT_EQ(costs.duration(TaskKind::BW), costs.backward + costs.weight);
  EXPECT_EQ(p.weight_host.ns, 2 * 4 * 24'000.0);  // 2 layers, 4 weight gradients each
  doc["training"]["cuda_graphs"] = true;
  const Config graphs = parse_config(doc, "cfg.json");
  // A graph launch per layer: 2 x 24 us, below the GPU's weight gradients (8 GEMMs, each at
  // least its 4 us of latency): W is the GPU's.
  EXPECT_GT(graphs.model->positions[1].weight_ns, 48'000);
  EXPECT_EQ(graphs.costs.at(StageId{1}, 0).weight,
            std::llround(graphs.model->positions[1].weight_ns));
  // B is the GPU's (its compute and collectives beyond its 48 us of graph launches), so a
  // fused BW takes the GPU's B and W together: the W's floor hides behind B's GPU time.
  const parallel::TaskCosts& graphed = graphs.costs.at(StageId{1}, 0);
  EXPECT_GT(graphed.backward, 96'000);
  EXPECT_EQ(graphed.duration(TaskKind::BW),
            graphed.backward + std::llround(graphs.model->positions[1].weight_ns));
  EXPECT_LT(graphs.costs.at(StageId{1}, 0).backward, costs.backward);
  doc["training"].erase("cuda_graphs");
  doc["costs"] = {{"weight", "1us"}};
  EXPECT_EQ(parse_config(doc, "cfg.json").costs.at(StageId{1}, 0).weight, 1'000);
  doc.erase("costs");
  doc.erase("device");
  doc["device_types"] = {{"H", {{"preset", "h100-sxm"}, {"kernel_launch", "5us"}}}};
  doc["placement"] = {{{"stages", "0-3"}, {"device_type", "H"}}};
  const Config fast_host = parse_config(doc, "cfg.json");
  EXPECT_EQ(fast_host.model->positions[1].weight_host.ns, 2 * 4 * 5'000.0);
  EXPECT_EQ(fast_host.model->kernel_launch[1], 5e-6);
}

TEST(ModelConfig, LayerSplitsByName) {
  auto doc = model_config();
  doc["model"]["layers"] = 16;
  doc["model"]["vocab"] = 256000;  // the head weighs about two layers
  // GPU-bound: micro batches of 8 x 512 tokens (at 2 these small layers are host-bound, and a
  // stage of host-bound layers costs their kernels whatever the split).
  doc["training"]["micro_batch_size"] = 8;
  const Config even = parse_config(doc, "cfg.json");
  EXPECT_EQ(even.model->split, "even");
  for (const auto& p : even.model->positions) EXPECT_EQ(p.layers.count, 4u);
  doc["pipeline"]["layers"] = "balanced";
  const Config balanced = parse_config(doc, "cfg.json");
  EXPECT_EQ(balanced.model->split, "balanced");
  ASSERT_EQ(balanced.model->positions.size(), 4u);
  EXPECT_LT(balanced.model->positions[3].layers.count, 4u);
  std::uint32_t layers = 0;
  const auto stage_ns = [](const Config& c, std::uint32_t s) {
    const parallel::TaskCosts& t = c.costs.at(StageId{s}, 0);
    return t.forward + t.backward + t.weight;
  };
  TimeNs slowest_even = 0;
  TimeNs slowest_balanced = 0;
  for (std::uint32_t s = 0; s < 4; ++s) {
    layers += balanced.model->positions[s].layers.count;
    slowest_even = std::max(slowest_even, stage_ns(even, s));
    slowest_balanced = std::max(slowest_balanced, stage_ns(balanced, s));
  }
  EXPECT_EQ(layers, 16u);
  EXPECT_LT(slowest_balanced, slowest_even);
  // One GPU type: fastest is balanced.
  doc["pipeline"]["layers"] = "fastest";
  const Config fastest = parse_config(doc, "cfg.json");
  for (std::uint32_t s = 0; s < 4; ++s) {
    EXPECT_EQ(fastest.model->positions[s].layers.count, balanced.model->positions[s].layers.count);
  }
  // DualPipe: device 0 runs positions 0 and 3 (the embedding and the head), device 1
  // positions 1 and 2; balanced weighs each pair as one load, so device 0 holds fewer layers.
  doc["pipeline"] = {
      {"schedule", "dualpipe"}, {"stages", 4}, {"chunks", 2}, {"layers", "balanced"}};
  const Config dual = parse_config(doc, "cfg.json");
  ASSERT_EQ(dual.model->positions.size(), 8u);  // stage x chunk
  const auto& d = dual.model->positions;
  EXPECT_TRUE(d[0].layers.embedding);
  EXPECT_TRUE(d[1].layers.head);
  EXPECT_EQ(d[0].layers.count + d[1].layers.count + d[2].layers.count + d[3].layers.count, 16u);
  EXPECT_LT(d[0].layers.count + d[1].layers.count, d[2].layers.count + d[3].layers.count);
}

// Changing the schedule or the chunks never changes the model: the total work per step of
// 1F1B and interleaved 1F1B over the same layers is the same but for the extra boundaries.
TEST(ModelConfig, ChunksSplitTheSameLayers) {
  auto doc = model_config();
  doc["pipeline"] = {{"schedule", "interleaved-1f1b"}, {"stages", 4}, {"chunks", 2}};
  doc["model"]["layers"] = 14;  // 16 units: 2 per position
  const Config c = parse_config(doc, "cfg.json");
  ASSERT_EQ(c.model->positions.size(), 8u);
  std::uint32_t layers = 0;
  for (const auto& p : c.model->positions) layers += p.layers.count;
  EXPECT_EQ(layers, 14u);
  // Interleaved: chunk c of stage s holds position c * 4 + s; the head is on stage 3 chunk 1.
  EXPECT_TRUE(c.model->positions[3 * 2 + 1].layers.head);
  EXPECT_EQ(c.model->positions[0 * 2 + 1].layers.first, 7u);
  doc["pipeline"]["schedule"] = "zbv";
  const Config v = parse_config(doc, "cfg.json");
  EXPECT_TRUE(v.model->positions[0 * 2 + 1].layers.head);  // the V turns back to device 0
}

// /model/head_dim: a head's own width (Qwen3's 128). Given, hidden need not divide by heads;
// a preset's stays when hidden is overridden; the default is hidden / heads.
TEST(ModelConfig, HeadDimGivesAHeadItsOwnWidth) {
  auto doc = model_config();  // hidden 1024, 16 heads: d = 64
  EXPECT_EQ(parse_config(doc, "cfg.json").model->transformer.head_dim(), 64);
  doc["model"]["hidden"] = 1000;  // not a multiple of 16, but the heads say their width
  doc["model"]["head_dim"] = 128;
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.model->transformer.head_dim(), 128);
  EXPECT_EQ(c.model->transformer.query_width(), 2048);
  auto qwen = model_config();
  qwen["model"] = {{"preset", "qwen3-32b"}, {"layers", 8}};
  qwen["model"]["hidden"] = 4096;
  EXPECT_EQ(parse_config(qwen, "cfg.json").model->transformer.head_dim(), 128);
}

// /model/mla and /model/attention: a preset's MLA stays (each field overridable), "mha" turns
// it off, and a model without a preset needs every MLA field but q_lora_rank.
TEST(ModelConfig, MultiHeadLatentAttention) {
  auto doc = model_config();
  doc["model"] = {{"preset", "deepseek-v3"}, {"layers", 8}, {"first_dense_layers", 1}};
  doc["training"]["sequence_parallel"] = true;  // MoE with tensor parallelism needs it
  doc["model"]["mla"] = {{"kv_lora_rank", 256}};
  model::Transformer m = parse_config(doc, "cfg.json").model->transformer;
  EXPECT_TRUE(m.is_mla());
  EXPECT_EQ(m.mla.kv_lora_rank, 256u);
  EXPECT_EQ(m.mla.q_lora_rank, 1536u);
  doc["model"].erase("mla");
  doc["model"]["attention"] = "mha";
  m = parse_config(doc, "cfg.json").model->transformer;
  EXPECT_FALSE(m.is_mla());
  EXPECT_EQ(m.query_width(), 7168);
  // "mha" on a grouped-query preset gives every head its own keys and values.
  auto llama = model_config();
  llama["model"] = {{"preset", "llama3-70b"}, {"layers", 8}, {"attention", "mha"}};
  m = parse_config(llama, "cfg.json").model->transformer;
  EXPECT_EQ(m.kv_heads, 64u);
  EXPECT_EQ(m.attention_kind(), "mha");
  auto plain = model_config();
  plain["model"]["mla"] = {
      {"kv_lora_rank", 64}, {"qk_nope_head_dim", 32}, {"qk_rope_head_dim", 16}, {"v_head_dim", 32}};
  m = parse_config(plain, "cfg.json").model->transformer;
  EXPECT_EQ(m.attention_kind(), "mla");
  EXPECT_EQ(m.query_width(), 16 * 48);
  EXPECT_EQ(m.output_width(), 16 * 32);
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](auto& d) {
         d["model"]["mla"] = {{"kv_lora_rank", 64}};
       },
       "cfg.json:/model/mla: missing required key 'qk_nope_head_dim' (or give an MLA preset)"},
      {[](auto& d) { d["model"]["attention"] = "mla"; },
       "cfg.json:/model/attention: \"mla\" needs /model/mla (its ranks and head widths)"},
      {[](auto& d) {
         d["model"]["attention"] = "gqa";
         d["model"]["mla"] = {{"kv_lora_rank", 64}};
       },
       "cfg.json:/model/mla: given with attention \"gqa\"; drop one"},
      {[](auto& d) { d["model"]["attention"] = "latent"; },
       "cfg.json:/model/attention: expected \"mha\", \"gqa\" or \"mla\""},
      {[](auto& d) { d["model"]["attention"] = "gqa"; },
       "cfg.json:/model/attention: \"gqa\" needs kv_heads below heads (16); kv_heads is 16"},
      {[](auto& d) {
         d["model"]["attention"] = "mha";
         d["model"]["kv_heads"] = 4;
       },
       "cfg.json:/model/attention: \"mha\" has as many key/value heads as heads (16), but "
       "kv_heads is 4"},
      {[](auto& d) { d["training"]["recompute_mla_up_proj"] = true; },
       "cfg.json:/training/recompute_mla_up_proj: the model has no multi-head latent attention"},
      {[](auto& d) {
         d["model"]["mla"] = {{"kv_lora_rank", 64},
                              {"qk_nope_head_dim", 32},
                              {"qk_rope_head_dim", 16},
                              {"v_head_dim", 32}};
         d["training"]["recompute_mla_up_proj"] = true;
         d["training"]["recompute"] = "full";
       },
       "cfg.json:/training/recompute_mla_up_proj: full recomputation reruns the up projections "
       "already: drop one"},
      {[](auto& d) {
         d["model"]["mla"] = {{"kv_lora_rank", 64},
                              {"qk_nope_head_dim", 32},
                              {"qk_rope_head_dim", 16},
                              {"v_head_dim", 32}};
         d["model"]["head_dim"] = 64;
       },
       "cfg.json:/model/head_dim: with multi-head latent attention a head's widths are "
       "/model/mla's"},
  };
  for (const auto& [edit, message] : cases) {
    auto bad = model_config();
    edit(bad);
    const std::string error = error_of(bad);
    EXPECT_EQ(error.substr(0, message.size()), message) << error;
  }
}

TEST(ModelConfig, ErrorsNameThePointer) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](auto& d) { d["training"]["global_batch_size"] = 60; },
       "cfg.json:/training/global_batch_size: global_batch_size 60 is not a multiple of "
       "micro_batch_size x data_parallel = 8"},
      {[](auto& d) { d["pipeline"]["microbatches"] = 4; },
       "cfg.json:/training/global_batch_size: gives 8 microbatches (64 / (2 x 4)), but "
       "/pipeline/microbatches is 4"},
      {[](auto& d) { d.erase("model"); },
       "cfg.json:/training: the training setup derives costs from a model: add /model"},
      {[](auto& d) { d["model"]["preset"] = "gpt3-175"; },
       "cfg.json:/model/preset: unknown model 'gpt3-175'; did you mean 'gpt3-175b'? (valid: "},
      {[](auto& d) { d["device"] = "h100"; },
       "cfg.json:/device: unknown device 'h100'; did you mean "},
      {[](auto& d) {
         d["pipeline"]["layers"] = {2, 2, 2};
       },
       "cfg.json:/pipeline/layers: expected 4 layer counts (one per pipeline position: 4 "
       "stages x 1 chunks), got 3"},
      {[](auto& d) {
         d["pipeline"]["layers"] = {2, 2, 2, 3};
       },
       "cfg.json:/pipeline/layers: the counts add up to 9 layers; the model has 8"},
      {[](auto& d) { d["parallelism"]["tensor_parallel"] = 3; },
       "cfg.json:/parallelism/tensor_parallel: 16 attention heads do not split over 3 "
       "tensor-parallel ranks"},
      {[](auto& d) { d["model"]["hidden"] = 1000; },
       "cfg.json:/model/hidden: hidden 1000 is not a multiple of heads 16 (give head_dim where a "
       "head's width is not hidden / heads)"},
      {[](auto& d) { d["model"]["head_dim"] = 0; },
       "cfg.json:/model/head_dim: expected an integer in [1, 65536], got 0"},
      {[](auto& d) {
         d["training"]["precision"] = "fp8";
         d["device"] = "a100-80gb";
       },
       "cfg.json:/training/precision: stage 0 runs on its GPU 'a100-80gb' (/device), which has no "
       "fp8 arithmetic (it has bf16, fp16)"},
      {[](auto& d) {
         d["model"] = {{"layers", 2}};
       },
       "cfg.json:/model: missing required key 'hidden' (or give a preset)"},
      {[](auto& d) { d["pipeline"]["stages"] = 12; },
       "cfg.json:/pipeline: cannot split 8 layers over 12 pipeline positions: pipeline "
       "position 10 would hold no layer"},
  };
  for (const auto& [edit, message] : cases) {
    auto doc = model_config();
    edit(doc);
    const std::string error = error_of(doc);
    EXPECT_EQ(error.substr(0, message.size()), message) << error;
  }
}

}  // namespace
}  // namespace perflow::study

namespace perflow::study {
namespace {

// model_config() with experts: 8 routed (top 2) of f_e 512 and a shared one in the last 6 of
// its 8 layers, over 4 expert-parallel ranks taken from the 4 data-parallel replicas.
nlohmann::json moe_config() {
  auto doc = model_config();
  doc["model"]["experts"] = 8;
  doc["model"]["top_k"] = 2;
  doc["model"]["expert_ffn_hidden"] = 512;
  doc["model"]["shared_experts"] = 1;
  doc["model"]["moe_layers"] = 6;
  doc["parallelism"]["expert_parallel"] = 4;
  doc["training"]["sequence_parallel"] = true;  // Megatron-Core's MoE with TP needs it
  return doc;
}

TEST(ModelConfig, MixtureOfExpertsReachesTheDerivation) {
  const Config c = parse_config(moe_config(), "cfg.json");
  const model::Transformer& m = c.model->transformer;
  EXPECT_EQ(m.experts, 8u);
  EXPECT_EQ(m.first_dense_layers, 2u);  // 8 layers - 6 MoE layers
  EXPECT_EQ(m.expert_load(), 1);
  const auto& positions = c.model->positions;
  ASSERT_EQ(positions.size(), 4u);
  // Position 0 holds the dense layers 0-1, position 1 the MoE layers 2-3.
  EXPECT_EQ(positions[0].a2a_per_pass, 0u);
  EXPECT_EQ(positions[1].a2a_per_pass, 4u);
  // T r = 2 x 512 tokens / tp 2 (sequence parallelism) x top_k 2 x h 1024 x 2 bytes.
  EXPECT_EQ(positions[1].a2a_bytes, 512.0 * 2 * 1024 * 2);
  // Tensor-parallel collectives: two a layer, but the dispatcher's token all-gather and
  // reduce-scatter replace the MLP's on MoE layers, and the shared expert keeps one.
  EXPECT_EQ(positions[1].tp_allreduces, 2u * positions[1].layers.count);
  auto no_shared = moe_config();
  no_shared["model"]["shared_experts"] = 0;
  EXPECT_EQ(parse_config(no_shared, "cfg.json").model->positions[1].tp_allreduces,
            positions[1].layers.count);
  const model::PositionCosts expected =
      model::derive_position(m, c.model->training, {.tensor = 2, .data = 4, .expert = 4},
                             model::find_device_preset("h100-sxm")->spec, positions[1].layers);
  EXPECT_EQ(positions[1].parameters, expected.parameters);
  EXPECT_EQ(positions[1].dp_gradient_bytes, expected.dp_gradient_bytes);
  EXPECT_EQ(positions[1].forward_ns, expected.forward_ns);

  // first_dense_layers says the same; a MoE preset made dense keeps no expert field.
  auto doc = moe_config();
  doc["model"].erase("moe_layers");
  doc["model"]["first_dense_layers"] = 2;
  EXPECT_EQ(parse_config(doc, "cfg.json").model->transformer.first_dense_layers, 2u);
  doc = model_config();
  doc["model"]["preset"] = "deepseek-v3";
  doc["model"]["experts"] = 0;
  const model::Transformer dense = parse_config(doc, "cfg.json").model->transformer;
  EXPECT_EQ(dense.top_k, 0u);
  EXPECT_EQ(dense.first_dense_layers, 0u);
  EXPECT_EQ(dense.moe_layers(), 0u);
}

// parallelism.moe_dispatcher: a MoE position's all-to-all time is its layers' dispatches and
// combines as the dispatcher moves them, over the expert- and tensor-parallel groups' NCCL
// networks; a2a_bytes given by hand keeps the hand's all-to-alls.
TEST(ModelConfig, MoeDispatcherPricesEachMoeLayer) {
  TimeNs by_dispatcher[2] = {};
  for (const MoeDispatcher dispatcher : {MoeDispatcher::AllToAll, MoeDispatcher::DeepEp}) {
    auto doc = moe_config();  // tp 2 x ep 4 (of dp 4) x pp 4 on 8-GPU nodes
    doc["parallelism"]["moe_dispatcher"] = std::string(to_string(dispatcher));
    const Config c = parse_config(doc, "cfg.json");
    const model::PositionCosts& p = c.model->positions[1];  // MoE layers 2-3
    ASSERT_EQ(p.moe_routing.layers, 2u);
    EXPECT_EQ(p.moe_routing.tokens, 2.0 * 512 / 2);  // b s / tp (sequence parallelism)
    ASSERT_TRUE(c.expert_parallel_nccl.has_value());
    EXPECT_EQ(c.expert_parallel_nccl->ranks_per_node, 4u);  // 8 GPUs / tp 2
    const parallel::MoeGroups groups{.expert_parallel = 4,
                                     .expert_network = *c.expert_parallel_nccl,
                                     .tensor_parallel = 2,
                                     .tensor_network = *c.tensor_parallel_nccl};
    const TimeNs layer = parallel::moe_dispatch_cost(dispatcher, p.moe_routing, groups).total();
    EXPECT_GT(layer, 0);
    EXPECT_EQ(c.costs.at(StageId{1}, 0).all_to_all, 2 * layer);
    EXPECT_EQ(c.costs.at(StageId{0}, 0).all_to_all, 0);  // the dense layers
    by_dispatcher[dispatcher == MoeDispatcher::DeepEp] = layer;
  }
  EXPECT_NE(by_dispatcher[0], by_dispatcher[1]);
  // Bytes by hand: four NCCL all-to-alls of them (two per MoE layer), whatever the dispatcher.
  auto doc = moe_config();
  doc["parallelism"]["moe_dispatcher"] = "deepep";
  doc["costs"]["a2a_bytes"] = 1000000;
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.costs.at(StageId{1}, 0).all_to_all,
            4 * parallel::nccl_all_to_all_time(1e6, 4, *c.expert_parallel_nccl));
}

// parallelism.moe_a2a_overlap on interleaved 1F1B: each device's steady-state forwards run
// with the backward after them as pairs, which hide all-to-all time.
TEST(ModelConfig, MoeA2aOverlapRunsMegatronCoresPairs) {
  auto doc = moe_config();
  doc["pipeline"] = {{"schedule", "interleaved-1f1b"}, {"stages", 2}, {"chunks", 2}};
  doc["parallelism"]["data_parallel"] = 8;
  doc["training"]["global_batch_size"] = 256;  // 16 microbatches of 2
  const auto run = [](const nlohmann::json& d) {
    const Config c = parse_config(d, "cfg.json");
    const EventGraph g = build_graph(c);
    return std::pair{parallel::overlapped_pair_count(g),
                     simulator::simulate(g, c.simulation).metrics.makespan};
  };
  const auto [plain_pairs, plain] = run(doc);
  doc["parallelism"]["moe_a2a_overlap"] = true;
  const auto [pairs, overlapped] = run(doc);
  EXPECT_EQ(plain_pairs, 0u);
  // 16 microbatches x 2 chunks = 32 forwards a device, of which the warm-up's run alone:
  // Megatron's 2 (p - r - 1) + (v - 1) p (4 and 2) and the one more the overlap adds.
  EXPECT_EQ(pairs, std::size_t{(32 - 5) + (32 - 3)});
  EXPECT_LT(overlapped, plain);
}

TEST(ModelConfig, MixtureOfExpertsErrorsNameThePointer) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](auto& d) {
         d["model"].erase("experts");
         d["parallelism"].erase("expert_parallel");
       },
       "cfg.json:/model/top_k: top_k describes MoE layers, but there is no /model/experts: give "
       "/model/experts (routed experts per MoE layer) above 0"},
      {[](auto& d) {
         d["model"]["experts"] = 0;
         d["parallelism"].erase("expert_parallel");
       },
       "cfg.json:/model/top_k: top_k describes MoE layers, but experts is 0: give "
       "/model/experts (routed experts per MoE layer) above 0"},
      {[](auto& d) { d["model"].erase("top_k"); },
       "cfg.json:/model: missing required key 'top_k' (routed experts per token) with experts"},
      {[](auto& d) { d["model"]["top_k"] = 9; },
       "cfg.json:/model/top_k: top_k 9 is more than the 8 experts"},
      {[](auto& d) { d["model"]["top_k"] = 0; },
       "cfg.json:/model/top_k: expected an integer in [1, 1024], got 0"},
      {[](auto& d) {
         d["model"].erase("moe_layers");
         d["model"]["first_dense_layers"] = 9;
       },
       "cfg.json:/model/first_dense_layers: first_dense_layers 9 is more than layers 8"},
      {[](auto& d) { d["model"]["moe_layers"] = 9; },
       "cfg.json:/model/moe_layers: moe_layers 9 is more than layers 8"},
      {[](auto& d) { d["model"]["first_dense_layers"] = 3; },
       "cfg.json:/model/moe_layers: first_dense_layers 3 + moe_layers 6 is not layers 8: give "
       "one of them"},
      {[](auto& d) { d["model"]["capacity_factor"] = 0.5; },
       "cfg.json:/model/capacity_factor: expected a number in [1, 1000], got 0.5"},
      {[](auto& d) {
         d["model"]["capacity_factor"] = 1.25;
         d["model"]["expert_imbalance"] = 1.5;
       },
       "cfg.json:/model/expert_imbalance: capacity_factor pads every expert to its capacity, "
       "which sets the slowest expert's load; expert_imbalance does not apply: give one of them"},
      {[](auto& d) {
         d["parallelism"]["data_parallel"] = 6;
         d["parallelism"]["expert_parallel"] = 3;
       },
       "cfg.json:/parallelism/expert_parallel: 3 expert-parallel ranks do not split the 8 "
       "experts of /model"},
      {[](auto& d) { d["parallelism"]["expert_parallel"] = 8; },
       "cfg.json:/parallelism/expert_parallel: expert-parallel ranks come from the "
       "data-parallel replicas: data_parallel 4 is not a multiple of expert_parallel 8"},
      {[](auto& d) { d["model"]["expert_groups"] = 3; },
       "cfg.json:/model/expert_groups: 3 expert groups do not split the 8 experts"},
      {[](auto& d) { d["model"]["group_top_k"] = 2; },
       "cfg.json:/model/group_top_k: group_top_k picks among expert groups: give "
       "/model/expert_groups"},
      {[](auto& d) {
         d["model"]["expert_groups"] = 4;
         d["model"]["group_top_k"] = 5;
       },
       "cfg.json:/model/group_top_k: group_top_k must pick 1 to 4 of the expert groups, got 5"},
      {[](auto& d) {
         d["model"]["expert_groups"] = 8;
         d["model"]["group_top_k"] = 1;
       },
       "cfg.json:/model/group_top_k: 1 groups of 1 experts hold fewer than top_k 2 experts"},
      {[](auto& d) { d["parallelism"]["moe_dispatcher"] = "nccl"; },
       "cfg.json:/parallelism/moe_dispatcher: expected \"alltoall\" or \"deepep\", got \"nccl\""},
      {[](auto& d) {
         d["parallelism"]["moe_dispatcher"] = "deepep";
         d["parallelism"]["expert_parallel"] = 1;
       },
       "cfg.json:/parallelism/moe_dispatcher: deepep sends tokens among the expert-parallel "
       "ranks, but expert_parallel is 1"},
      {[](auto& d) { d["training"].erase("sequence_parallel"); },
       "cfg.json:/parallelism/tensor_parallel: MoE layers with tensor parallelism need sequence "
       "parallelism"},
      {[](auto& d) { d["training"]["sequence_parallel"] = false; },
       "cfg.json:/training/sequence_parallel: MoE layers with tensor parallelism need sequence "
       "parallelism"},
      {[](auto& d) {
         d["parallelism"]["moe_dispatcher"] = "deepep";
         d["network"]["collectives"] = "ring";
       },
       "cfg.json:/parallelism/moe_dispatcher: deepep is priced over the links as NCCL reaches "
       "them"},
      {[](auto& d) {
         d["parallelism"]["moe_dispatcher"] = "deepep";
         d["device"] = "h100-pcie";
       },
       "cfg.json:/parallelism/moe_dispatcher: deepep moves tokens inside a node over NVLink, "
       "but the GPUs join over PCIe"},
      {[](auto& d) { d["parallelism"]["moe_a2a_overlap"] = true; },
       "cfg.json:/parallelism/moe_a2a_overlap: Megatron-Core overlaps the expert-parallel "
       "all-to-alls with one pipeline stage or the interleaved schedule"},
      {[](auto& d) {
         d["parallelism"]["moe_a2a_overlap"] = true;
         d["parallelism"]["expert_parallel"] = 1;
         d["pipeline"]["stages"] = 1;
       },
       "cfg.json:/parallelism/moe_a2a_overlap: there are no expert-parallel all-to-alls to "
       "overlap"},
      {[](auto& d) {
         d["parallelism"]["moe_a2a_overlap"] = true;
         d["pipeline"]["stages"] = 1;
         d["training"]["recompute"] = "full";
       },
       "cfg.json:/parallelism/moe_a2a_overlap: Megatron-Core refuses full recomputation"},
  };
  for (const auto& [edit, message] : cases) {
    auto doc = moe_config();
    edit(doc);
    const std::string error = error_of(doc);
    EXPECT_EQ(error.substr(0, message.size()), message) << error;
  }
  // Expert parallelism without experts is no error here: all-to-all costs may come by hand.
  auto dense = model_config();
  dense["parallelism"]["expert_parallel"] = 2;
  EXPECT_NO_THROW((void)parse_config(dense, "cfg.json"));
}

}  // namespace
}  // namespace perflow::study

namespace perflow::study {
namespace {

// Expert parallelism over 16 ranks, 8 to a node: 15 x 5 us + max(8/16 x 32 MB at 50 GB/s,
// 7/16 x 32 MB at 160 GB/s) = 75 + 320 us per all-to-all, twice per pass; stage 0 has none.
TEST(ExpertParallelConfig, AllToAllTimePerStage) {
  auto doc = base();
  doc["parallelism"] = {{"data_parallel", 16}, {"expert_parallel", 16}};
  doc["network"] = nlohmann::json::parse(R"({"gpus_per_node": 8,
      "intra_node": {"bandwidth": "160GB/s", "latency": "2us"},
      "inter_node": {"bandwidth": "50GB/s", "latency": "5us"}})");
  doc["costs"]["a2a_bytes"] = "32MB";
  doc["costs"]["a2a_per_pass"] = 2;
  doc["costs"]["overrides"] = nlohmann::json::parse(R"([{"stages": 0, "a2a_per_pass": 0}])");
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.expert_parallel, 16u);
  EXPECT_EQ(c.gpus_per_node, 8u);
  EXPECT_EQ(c.costs.at(StageId{0}, 0).all_to_all, 0);
  for (std::uint32_t s = 1; s < 4; ++s) EXPECT_EQ(c.costs.at(StageId{s}, 0).all_to_all, 790'000);
  // Within one node of 16: 15 x 2 us + 15/16 x 32 MB at 160 GB/s = 30 + 187.5 us.
  doc["network"]["gpus_per_node"] = 16;
  EXPECT_EQ(parse_config(doc, "cfg.json").costs.at(StageId{1}, 0).all_to_all, 2 * 217'500);
}

TEST(ExpertParallelConfig, ErrorsNameTheField) {
  auto doc = base();
  doc["costs"]["a2a_per_pass"] = 2;
  EXPECT_EQ(error_of(doc),
            "cfg.json:/costs/a2a_per_pass: a2a_per_pass is 2 but there is no expert parallelism to "
            "all-to-all "
            "over: set /parallelism/expert_parallel (the ranks of a MoE layer's all-to-all)");
  doc = base();
  doc["parallelism"] = {{"data_parallel", 4}, {"expert_parallel", 8}};
  EXPECT_EQ(error_of(doc),
            "cfg.json:/parallelism/expert_parallel: expert-parallel ranks come from the "
            "data-parallel replicas: data_parallel 4 is not a multiple of expert_parallel 8");
  // Overlapped pairs with what cannot run them.
  doc = base();
  doc["pipeline"] = {{"schedule", "dualpipe"}, {"stages", 4}, {"microbatches", 8}, {"chunks", 2}};
  doc["costs"]["forward_backward"] = 3000;
  auto blocking = doc;
  blocking["network"]["p2p_mode"] = "blocking";
  EXPECT_EQ(error_of(blocking),
            "cfg.json:/network/p2p_mode: dualpipe runs overlapped forward-backward pairs here "
            "(there are all-to-alls or a costs.forward_backward to overlap), and blocking "
            "transfers are not supported with them yet");
  auto greedy = doc;
  greedy["simulation"] = {{"mode", "greedy"}};
  EXPECT_EQ(error_of(greedy),
            "cfg.json:/simulation/mode: dualpipe runs overlapped forward-backward pairs here "
            "(there are all-to-alls or a costs.forward_backward to overlap), and greedy mode "
            "cannot run them: a pair needs its program order");
  // Without anything to overlap, the same schedule runs as before.
  greedy["costs"].erase("forward_backward");
  EXPECT_EQ(error_of(greedy), "(no error)");
}

// A measured F&B makes the pairs units; their count follows the reference (2h - 3n + r + 1,
// one fewer on the middle ranks: 3 on each of 4 devices at m = 8).
TEST(ExpertParallelConfig, ForwardBackwardMakesPairs) {
  auto doc = base();
  doc["pipeline"] = {{"schedule", "dualpipe"}, {"stages", 4}, {"microbatches", 8}, {"chunks", 2}};
  doc["costs"]["forward_backward"] = 5000;
  const Config c = parse_config(doc, "cfg.json");
  EXPECT_EQ(c.costs.at(StageId{2}, 1).forward_backward, std::optional<TimeNs>(5'000'000));
  const EventGraph g = build_graph(c);
  std::size_t paired = 0;
  for (std::uint32_t t = 0; t < g.task_count(); ++t) {
    if (!g.paired(TaskId{t})) continue;
    ++paired;
    EXPECT_EQ(g.duration(TaskId{t}), 0);
  }
  EXPECT_EQ(paired, 12u);
}

// DualPipe holds two stages per device, so twice the parameters (DeepSeek-V3 Table 2): with
// /model its devices' static memory adds up to twice 1F1B's, position for position.
TEST(ExpertParallelConfig, DualPipeHoldsTwiceTheParameters) {
  const auto with_schedule = [](const char* schedule, std::uint32_t chunks) {
    nlohmann::json doc = nlohmann::json::parse(R"({
      "model": {"preset": "llama2-7b"}, "device": "h100-sxm",
      "pipeline": {"schedule": "1f1b", "stages": 4, "microbatches": 8}})");
    doc["pipeline"]["schedule"] = schedule;
    doc["pipeline"]["chunks"] = chunks;
    return parse_config(doc, "cfg.json");
  };
  const Config one = with_schedule("1f1b", 1);
  const Config dual = with_schedule("dualpipe", 2);
  double one_total = 0;
  double dual_total = 0;
  for (std::uint32_t d = 0; d < 4; ++d) {
    one_total += one.devices[d].static_memory;
    dual_total += dual.devices[d].static_memory;
    // Device d holds positions d and 3 - d.
    EXPECT_DOUBLE_EQ(dual.devices[d].static_memory,
                     one.devices[d].static_memory + one.devices[3 - d].static_memory);
  }
  EXPECT_DOUBLE_EQ(dual_total, 2 * one_total);
}

}  // namespace
}  // namespace perflow::study

namespace perflow::study {
namespace {

// DualPipe whose pairs overlap their all-to-alls (the simulate_dualpipe_pairs golden).
nlohmann::json pairs_config() {
  return nlohmann::json::parse(R"({
    "pipeline": {"schedule": "dualpipe", "stages": 4, "microbatches": 8, "chunks": 2},
    "parallelism": {"data_parallel": 8, "expert_parallel": 8},
    "network": {"intra_node": {"bandwidth": "100GB/s", "latency": "1us"}},
    "costs": {"forward": 1000, "backward": 1000, "weight": 500, "a2a_bytes": "40MB",
              "a2a_per_pass": 2, "activation": 1}
  })");
}

struct PairRun {
  TimeNs makespan = 0;
  std::size_t pairs = 0;
};

PairRun run_pairs(const nlohmann::json& doc) {
  const Config c = parse_config(doc, "cfg.json");
  const EventGraph g = build_graph(c);
  return {simulate(c, g).metrics.makespan, parallel::overlapped_pair_count(g)};
}

// The pairs survive the other passes: /parts (filter and merge), lowered transfers (whose
// SENDs are never paired), several iterations; activation offloading is refused.
TEST(ExpertParallelConfig, PairsThroughTheOtherPasses) {
  const PairRun single = run_pairs(pairs_config());
  EXPECT_EQ(single.pairs, 12u);
  // The golden's: the 8 data-parallel replicas share a node, so their (empty) gradient
  // all-reduce pays intra_node's latency, 2 x 7 x 1 us.
  EXPECT_EQ(single.makespan, 30'377'000);

  auto parts = pairs_config();
  parts["device_types"] =
      nlohmann::json::parse(R"({"A": {"forward": 1000}, "B": {"forward": 1000}})");
  parts["parts"] = nlohmann::json::parse(
      R"([{"stages": "0-1", "device_type": "A"}, {"stages": "2-3", "device_type": "B"}])");
  const PairRun merged = run_pairs(parts);
  EXPECT_EQ(merged.pairs, single.pairs);
  EXPECT_EQ(merged.makespan, single.makespan);

  auto lowered = pairs_config();
  lowered["simulation"] = {{"lower_communication", true}};
  lowered["costs"]["boundary_bytes"] = "20MB";
  EXPECT_EQ(run_pairs(lowered).pairs, single.pairs);

  auto repeated = pairs_config();
  repeated["simulation"] = {{"iterations", 2}};
  EXPECT_EQ(run_pairs(repeated).pairs, 2 * single.pairs);

  auto offloaded = pairs_config();
  offloaded["network"]["host_link"] = {{"bandwidth", "4GB/s"}};
  offloaded["costs"]["offload"] = {{"ratio", 0.5}};
  EXPECT_EQ(error_of(offloaded),
            "cfg.json:/costs/offload: dualpipe runs overlapped forward-backward pairs here (there "
            "are all-to-alls or a costs.forward_backward to overlap), and activation offloading "
            "is not supported with them yet: a pair would start before its backward's activation "
            "is back");
}

// Measured pairs shorter than a task alone, a2a_bytes with no all-to-all to size, and
// all-to-all groups that tensor parallelism spreads over nodes.
TEST(ExpertParallelConfig, MoreChecks) {
  auto doc = pairs_config();
  doc["costs"]["forward_backward"] = 900;
  EXPECT_EQ(error_of(doc),
            "cfg.json:/costs/forward_backward: stage 0 chunk 0: forward_backward 900000 ns is "
            "shorter than its F (1000000 ns) or B (1000000 ns) alone; a pair runs both");
  doc["costs"]["forward_backward"] = 0;
  EXPECT_EQ(error_of(doc), "cfg.json:/costs/forward_backward: expected a duration above 0, got 0");
  doc = pairs_config();
  doc["costs"].erase("a2a_per_pass");
  EXPECT_EQ(error_of(doc),
            "cfg.json:/costs/a2a_bytes: a2a_bytes is given but no stage runs an all-to-all: give "
            "/costs/a2a_per_pass (2 per MoE layer), or /model with experts");
  // TP 8 on nodes of 8: the 8 EP ranks are on 8 nodes, so the all-to-all crosses the
  // inter-node link: 7 x 5 us + 7/8 x 80 MB at 50 GB/s = 35 + 1400 us (within a node it
  // would be 7 x 1 us + 7/8 x 80 MB at 160 GB/s = 444.5 us).
  nlohmann::json tp = nlohmann::json::parse(R"({
    "pipeline": {"schedule": "1f1b", "stages": 2, "microbatches": 4},
    "parallelism": {"data_parallel": 8, "expert_parallel": 8, "tensor_parallel": 8},
    "network": {"gpus_per_node": 8,
                "intra_node": {"bandwidth": "160GB/s", "latency": "1us"},
                "inter_node": {"bandwidth": "50GB/s", "latency": "5us"}},
    "costs": {"forward": 1000, "backward": 1000, "weight": 500, "a2a_bytes": "80MB",
              "a2a_per_pass": 1}
  })");
  EXPECT_EQ(parse_config(tp, "cfg.json").costs.at(StageId{0}, 0).all_to_all, 1'435'000);
  tp["parallelism"]["tensor_parallel"] = 1;
  EXPECT_EQ(parse_config(tp, "cfg.json").costs.at(StageId{0}, 0).all_to_all, 444'500);
}

}  // namespace
}  // namespace perflow::study
