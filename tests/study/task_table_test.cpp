// The task table of whole simulations: exact rows of hand-checked runs, communication
// lanes, JSON lines against CSV, and the round trip: a custom schedule written from the
// table alone simulates to the same table, byte for byte.
#include "perflow/core/task_table.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

namespace perflow {
namespace {

struct Simulated {
  EventGraph graph;
  simulator::SimulationResult result;

  [[nodiscard]] std::string table(TaskTableFormat format) const {
    return render_task_table(graph, result.trace, format);
  }
};

Simulated run(const nlohmann::json& document) {
  const study::Config config = study::parse_config(document, "c.json");
  Simulated r{study::build_graph(config), {}};
  r.result = simulator::simulate(r.graph, config.simulation);
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(TaskTableRun, OneFOneBTwoStagesTwoMicrobatches) {
  // F = 10, B + W = 20 + 30 = 50 (fused BW). Device 0: F0 [0,10], F1 [10,20], then BW0
  // waits for device 1's BW0 [20,70] (after its F0 [10,20]): [70,120]; device 1 runs F1
  // when free [70,80], BW1 [80,130]; device 0's BW1 follows it [130,180]. Makespan
  // (m + p - 1)(F + B + W) = 3 * 60.
  const Simulated r = run(nlohmann::json::parse(R"({
    "pipeline": {"schedule": "1f1b", "stages": 2, "microbatches": 2},
    "costs": {"forward": "10ns", "backward": "20ns", "weight": "30ns", "activation": 1}
  })"));
  ASSERT_EQ(r.result.metrics.makespan, 180);
  EXPECT_EQ(r.table(TaskTableFormat::Csv),
            "device,lane,kind,microbatch,chunk,stage,iteration,start_ns,end_ns\n"
            "0,compute,F,0,0,0,0,0,10\n"
            "0,compute,F,1,0,0,0,10,20\n"
            "0,compute,BW,0,0,0,0,70,120\n"
            "0,compute,BW,1,0,0,0,130,180\n"
            "1,compute,F,0,0,1,0,10,20\n"
            "1,compute,BW,0,0,1,0,20,70\n"
            "1,compute,F,1,0,1,0,70,80\n"
            "1,compute,BW,1,0,1,0,80,130\n");
}

TEST(TaskTableRun, CommunicationLanesAndEmptyFields) {
  // One microbatch over two stages in one node, transfers lowered to SENDs: 1000 bytes at
  // 100 GB/s is 10 ns on the link, then 5 ns of latency to the consumer. Data parallel over
  // 2 replicas: a ring all-reduce of 1000 bytes takes 2 * 1 ns + 1000 B / 100 GB/s = 12 ns;
  // then a 7 ns optimizer step.
  //   d0: F [0,10]; SEND 0>1 [10,20]; d1: F [25,35], BW [35,85]; SEND 1>0 [85,95];
  //   d0: BW [100,150]. All-reduces: d1 [85,97] (after its BW), d0 [150,162].
  //   OPT: d1 [97,104], d0 [162,169].
  const Simulated r = run(nlohmann::json::parse(R"({
    "pipeline": {"schedule": "1f1b", "stages": 2, "microbatches": 1},
    "parallelism": {"data_parallel": 2},
    "costs": {"forward": "10ns", "backward": "20ns", "weight": "30ns", "activation": 1,
              "boundary_bytes": 1000, "gradient_bytes": 1000, "optimizer": "7ns"},
    "network": {"devices_per_node": 2,
                "intra_node": {"latency": "5ns", "bandwidth": "100GB/s"},
                "data_parallel": {"latency": "1ns", "bandwidth": "100GB/s"}},
    "simulation": {"lower_communication": true}
  })"));
  // Lanes: the compute lanes, then data parallelism's, then lowering's (in (a, b) order).
  EXPECT_EQ(r.table(TaskTableFormat::Csv),
            "device,lane,kind,microbatch,chunk,stage,iteration,start_ns,end_ns\n"
            "0,compute,F,0,0,0,0,0,10\n"
            "0,compute,BW,0,0,0,0,100,150\n"
            "0,compute,OPT,,,,0,162,169\n"
            "1,compute,F,0,0,1,0,25,35\n"
            "1,compute,BW,0,0,1,0,35,85\n"
            "1,compute,OPT,,,,0,97,104\n"
            "0,dp all-reduce,ALLREDUCE,,0,0,0,150,162\n"
            "1,dp all-reduce,ALLREDUCE,,0,1,0,85,97\n"
            "0,send 0>1,SEND,0,0,0,0,10,20\n"
            "1,send 1>0,SEND,0,0,1,0,85,95\n");
  const auto jsonl = lines_of(r.table(TaskTableFormat::Jsonl));
  ASSERT_EQ(jsonl.size(), 10u);
  EXPECT_EQ(jsonl[2], R"({"device":0,"lane":"compute","kind":"OPT","microbatch":null,"chunk":null,)"
                      R"("stage":null,"iteration":0,"start_ns":162,"end_ns":169})");
  EXPECT_EQ(jsonl[6], R"({"device":0,"lane":"dp all-reduce","kind":"ALLREDUCE","microbatch":null,)"
                      R"("chunk":0,"stage":0,"iteration":0,"start_ns":150,"end_ns":162})");
}

// The 3D-parallel example: every JSON line, parsed by nlohmann::json, holds the same values
// as the CSV row in the same position (null where the CSV field is empty).
TEST(TaskTableRun, JsonLinesEqualTheCsvRows) {
  std::ifstream file(PERFLOW_SOURCE_DIR "/examples/llama70b_3d_parallel.json");
  ASSERT_TRUE(file);
  const Simulated r = run(nlohmann::json::parse(file));
  const auto csv = lines_of(r.table(TaskTableFormat::Csv));
  const auto jsonl = lines_of(r.table(TaskTableFormat::Jsonl));
  ASSERT_EQ(csv.size(), r.graph.task_count() + 1);
  ASSERT_EQ(jsonl.size(), r.graph.task_count());
  std::map<std::string, int> kinds;
  for (std::size_t i = 0; i < jsonl.size(); ++i) {
    const auto object = nlohmann::json::parse(jsonl[i]);
    // No lane name of this run needs CSV quoting, so splitting at commas is the CSV.
    std::vector<std::string> fields;
    std::istringstream row(csv[i + 1]);
    for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
    if (csv[i + 1].ends_with(',')) fields.emplace_back();
    ASSERT_EQ(fields.size(), kTaskTableColumns.size()) << csv[i + 1];
    ASSERT_EQ(object.size(), kTaskTableColumns.size()) << jsonl[i];
    for (std::size_t c = 0; c < kTaskTableColumns.size(); ++c) {
      const auto& value = object.at(std::string(kTaskTableColumns[c]));
      const std::string expected = value.is_null()     ? ""
                                   : value.is_string() ? value.get<std::string>()
                                                       : value.dump();
      ASSERT_EQ(fields[c], expected) << "row " << i << ", " << kTaskTableColumns[c];
    }
    ++kinds[object.at("kind").get<std::string>()];
  }
  // Every kind of this run appears: split backward, lowered transfers, data parallelism.
  EXPECT_EQ(kinds.size(), 6u);
  for (const char* kind : {"F", "B", "W", "SEND", "ALLREDUCE", "OPT"}) {
    EXPECT_GT(kinds[kind], 0) << kind;
  }
  EXPECT_EQ(parse_task_table(r.table(TaskTableFormat::Csv), TaskTableFormat::Csv),
            parse_task_table(r.table(TaskTableFormat::Jsonl), TaskTableFormat::Jsonl));
}

// A config for the `custom` schedule written from a table alone: each device's compute rows
// by start give its program order, each (stage, chunk)'s rows give its costs (a fused
// backward BW as backward, weight 0: the table cannot tell B from W there, and BW costs
// their sum). The shape is the model's layout, which the table does not say (stage is
// the device): it comes with the schedule.
nlohmann::json config_from_table(const std::vector<TaskTableRow>& rows, const char* shape) {
  std::uint32_t devices = 0;
  std::uint32_t microbatches = 0;
  std::uint32_t chunks = 0;
  std::vector<const TaskTableRow*> compute;
  // (stage, chunk) -> kind -> duration; every task of one kind there must agree.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::map<TaskKind, TimeNs>> durations;
  for (const TaskTableRow& row : rows) {
    EXPECT_EQ(row.lane, "compute");
    compute.push_back(&row);
    devices = std::max(devices, row.device + 1);
    microbatches = std::max(microbatches, *row.microbatch + 1);
    chunks = std::max(chunks, *row.chunk + 1);
    const auto [it, inserted] =
        durations[{*row.stage, *row.chunk}].try_emplace(row.kind, row.end_ns - row.start_ns);
    EXPECT_EQ(it->second, row.end_ns - row.start_ns) << "uneven costs";
  }
  std::stable_sort(compute.begin(), compute.end(), [](const auto* a, const auto* b) {
    return std::tie(a->device, a->start_ns) < std::tie(b->device, b->start_ns);
  });
  nlohmann::json order = nlohmann::json::array();
  for (std::uint32_t d = 0; d < devices; ++d) order.push_back(nlohmann::json::array());
  for (const TaskTableRow* row : compute) {
    order[row->device].push_back(task_label(row->kind, *row->microbatch, *row->chunk));
  }
  nlohmann::json overrides = nlohmann::json::array();
  const auto ns = [](TimeNs t) { return std::to_string(t) + "ns"; };
  for (const auto& [where, by_kind] : durations) {
    const auto duration = [&by_kind](TaskKind kind) {
      const auto it = by_kind.find(kind);
      return it == by_kind.end() ? TimeNs{0} : it->second;
    };
    const bool fused = by_kind.contains(TaskKind::BW);
    overrides.push_back({{"stages", where.first},
                         {"chunk", where.second},
                         {"forward", ns(duration(TaskKind::F))},
                         {"backward", ns(duration(fused ? TaskKind::BW : TaskKind::B))},
                         {"weight", ns(duration(TaskKind::W))}});
  }
  return {{"pipeline",
           {{"schedule", "custom"},
            {"stages", devices},
            {"microbatches", microbatches},
            {"chunks", chunks},
            {"shape", shape},
            {"order", order}}},
          {"costs",
           {{"forward", "1ns"},
            {"backward", "1ns"},
            {"weight", "1ns"},
            {"activation", 1},
            {"overrides", overrides}}}};
}

TEST(TaskTableRun, RoundTripThroughACustomScheduleForEverySchedule) {
  struct Case {
    const char* schedule;
    std::uint32_t chunks;
    bool split;
    const char* shape;
  };
  for (const Case& c :
       {Case{"1f1b", 1, false, "linear"}, Case{"1f1b", 1, true, "linear"},
        Case{"gpipe", 1, false, "linear"}, Case{"eager-1f1b", 1, false, "linear"},
        Case{"interleaved-1f1b", 2, true, "interleaved"},
        Case{"interleaved-1f1b", 3, false, "interleaved"},
        Case{"looped-bfs", 2, false, "interleaved"}, Case{"zb-h1", 1, true, "linear"},
        Case{"zb-h2", 1, true, "linear"}, Case{"zb", 1, true, "linear"}, Case{"zbv", 2, true, "v"},
        Case{"v-half", 2, true, "v"}, Case{"1f1b-v", 2, false, "v"},
        Case{"dualpipe", 2, true, "dualpipe"}, Case{"dualpipev", 2, true, "v"}}) {
    SCOPED_TRACE(c.schedule + std::string(c.split ? " split" : " fused"));
    // Costs differ per stage and chunk, so the round trip has to recover each of them.
    nlohmann::json overrides = nlohmann::json::array();
    for (std::uint32_t s = 0; s < 4; ++s) {
      for (std::uint32_t k = 0; k < c.chunks; ++k) {
        const auto ns = [](std::uint32_t t) { return std::to_string(t) + "ns"; };
        overrides.push_back({{"stages", s},
                             {"chunk", k},
                             {"forward", ns(100 + 10 * s + 3 * k)},
                             {"backward", ns(200 + 7 * s + 5 * k)},
                             {"weight", ns(150 + 11 * s + 2 * k)}});
      }
    }
    const Simulated original = run({{"pipeline",
                                     {{"schedule", c.schedule},
                                      {"stages", 4},
                                      {"microbatches", 8},
                                      {"chunks", c.chunks},
                                      {"split_backward", c.split}}},
                                    {"costs",
                                     {{"forward", "1ns"},
                                      {"backward", "1ns"},
                                      {"weight", "1ns"},
                                      {"activation", 1},
                                      {"overrides", overrides}}}});
    const std::string csv = original.table(TaskTableFormat::Csv);
    const Simulated again =
        run(config_from_table(parse_task_table(csv, TaskTableFormat::Csv), c.shape));
    EXPECT_EQ(again.result.metrics.makespan, original.result.metrics.makespan);
    EXPECT_EQ(again.table(TaskTableFormat::Csv), csv);
    EXPECT_EQ(again.table(TaskTableFormat::Jsonl), original.table(TaskTableFormat::Jsonl));
  }
}

}  // namespace
}  // namespace perflow
