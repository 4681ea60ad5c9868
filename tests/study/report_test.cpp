// The streamed `--report` against the document it replaced: the same values put in an
// nlohmann::json tree and dumped with dump(1), byte for byte, over every example config,
// the golden cases' configs and variants made to reach nulls, NaN, out-of-memory devices
// and device type names that need escaping.
#include "perflow/study/report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perflow/core/error.hpp"
#include "perflow/parallel/data_parallel.hpp"
#include "perflow/parallel/expert_parallel.hpp"

namespace perflow::study {
namespace {

/// The report as it was built before it was streamed (a tree, then dump(1)): the reference.
nlohmann::json reference_report(const Config& config, const EventGraph& graph,
                                const simulator::SimulationResult& result) {
  const simulator::Metrics& m = result.metrics;
  nlohmann::json report;
  report["schedule"] = config.pipeline.schedule;
  report["stages"] = config.pipeline.stages;
  report["microbatches"] = config.pipeline.microbatches;
  report["chunks"] = config.pipeline.chunks;
  report["split_backward"] = config.pipeline.split_backward;
  report["costs_per"] = config.costs_per;
  report["mode"] = simulator::to_string(config.simulation.mode);
  report["tasks"] = graph.task_count();
  report["makespan_ns"] = m.makespan;
  report["bubble_ratio"] = m.bubble_ratio;
  report["total_work_ns"] = m.total_work;
  report["dependency_bound_ns"] = m.dependency_bound;
  report["data_parallel"] = config.data_parallel.degree;
  report["tensor_parallel"] = config.tensor_parallel;
  report["lower_communication"] = config.lower_communication;
  report["iterations"] = config.iterations.count;
  report["optimizer_sync"] = config.iterations.optimizer_sync;
  report["p2p_mode"] = config.blocking_p2p ? "blocking" : "async";
  report["iteration_time_ns"] = m.iteration_time;
  report["iteration_end_ns"] = m.iteration_finish;
  TimeNs communication = 0;
  for (const simulator::DeviceMetrics& dm : m.devices) communication += dm.communication;
  report["communication_ns"] = communication;

  const std::optional<Throughput> achieved = throughput(config, m.iteration_time);
  const auto number_or_null = [](double x) {
    return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
  };
  report["tokens_per_s"] = achieved ? number_or_null(achieved->tokens_per_s) : nullptr;
  report["model_tflops_per_gpu"] =
      achieved ? number_or_null(achieved->model_tflops_per_gpu) : nullptr;
  report["mfu"] = achieved ? number_or_null(achieved->mfu) : nullptr;
  report["model"] = nullptr;
  if (config.model) {
    const ModelPlan& plan = *config.model;
    report["model"] = {
        {"preset", plan.preset.empty() ? nlohmann::json(nullptr) : nlohmann::json(plan.preset)},
        {"layers", plan.transformer.layers},
        {"parameters", plan.transformer.parameters()},
        {"split", plan.split},
        {"precision", model::to_string(plan.training.precision)},
        {"recompute", model::to_string(plan.training.recompute)},
        {"micro_batch_size", plan.training.micro_batch_size},
        {"global_batch_size", plan.training.global_batch_size},
        {"gpus", achieved ? achieved->gpus : 0},
        {"flops_per_token", achieved ? number_or_null(achieved->flops_per_token) : nullptr},
        {"mfu_peak_tflops", achieved ? number_or_null(achieved->peak_tflops) : nullptr}};
  }

  nlohmann::json path = nlohmann::json::array();
  for (const TaskId t : m.critical_path) {
    path.push_back({{"device", graph.device(t).value},
                    {"task", graph.label(t)},
                    {"start_ns", result.trace.start_of(t)},
                    {"end_ns", result.trace.finish_of(t)}});
  }
  report["critical_path"] = std::move(path);

  nlohmann::json devices = nlohmann::json::array();
  bool out_of_memory = false;
  const std::vector<double> without = peaks_without_saving(config, graph, result.trace);
  const std::vector<parallel::AllToAllTime> a2a = parallel::all_to_all_time(graph, config.costs);
  const std::vector<parallel::DataParallelTime> dpt =
      parallel::data_parallel_time(graph, result.trace);
  for (const simulator::DeviceMetrics& dm : m.devices) {
    const DeviceMemory memory = device_memory(config, dm, without);
    const DeviceInfo& info = memory.info;
    const bool oom = memory.out_of_memory;
    out_of_memory = out_of_memory || oom;
    nlohmann::json order = nlohmann::json::array();
    for (const TaskId t : result.trace.events(dm.device)) order.push_back(graph.label(t));
    nlohmann::json layers = nullptr;
    nlohmann::json breakdown = nullptr;
    const std::uint32_t chunks = config.pipeline.chunks;
    if (config.model && !config.model->positions.empty() &&
        dm.device.value < config.pipeline.stages) {
      layers = nlohmann::json::array();
      double weights = 0, gradients = 0, optimizer = 0, fp8_weights = 0, fsdp = 0;
      for (std::uint32_t c = 0; c < chunks; ++c) {
        const model::PositionCosts& p = config.model->positions[dm.device.value * chunks + c];
        const parallel::TaskCosts& costs = config.costs.at(StageId{dm.device.value}, c);
        layers.push_back({{"chunk", c},
                          {"first", p.layers.first},
                          {"count", p.layers.count},
                          {"embedding", p.layers.embedding},
                          {"head", p.layers.head},
                          {"forward_ns", costs.forward},
                          {"backward_ns", costs.backward},
                          {"weight_ns", costs.weight},
                          {"activation", costs.activation}});
        weights += p.weight_bytes;
        gradients += p.gradient_bytes;
        optimizer += p.optimizer_bytes;
        fp8_weights += p.fp8_weight_bytes;
        fsdp = std::max(fsdp, p.fsdp_buffer_bytes);
      }
      breakdown = {{"weights", weights},
                   {"gradients", gradients},
                   {"optimizer_state", optimizer},
                   {"fp8_weight_cache", fp8_weights}};
      if (fsdp > 0) breakdown["fsdp_gathered_units"] = fsdp;
    }
    devices.push_back(
        {{"device", dm.device.value},
         {"layers", std::move(layers)},
         {"memory_breakdown", std::move(breakdown)},
         {"tasks", dm.tasks},
         {"busy_ns", dm.busy},
         {"blocked_ns", dm.blocked},
         {"communication_ns", dm.communication},
         {"bubble_ratio", dm.bubble_ratio},
         {"first_start_ns", dm.first_start},
         {"last_end_ns", dm.last_finish},
         {"span_bubble_ns", dm.span_bubble()},
         {"peak_memory", dm.peak_memory},
         {"static_memory", info.static_memory},
         {"peak_total_memory", memory.total},
         {"peak_memory_without_saving", memory.peak_without_saving},
         {"peak_total_memory_without_saving", memory.total_without_saving},
         {"recompute_ns", dm.recompute},
         {"host_copy_ns", dm.host_copy},
         {"all_to_all_ns", a2a[dm.device.value].total},
         {"all_to_all_exposed_ns", a2a[dm.device.value].exposed},
         {"all_to_all_hidden_ns", a2a[dm.device.value].hidden()},
         {"data_parallel_ns", dpt[dm.device.value].total},
         {"data_parallel_exposed_ns", dpt[dm.device.value].exposed},
         {"data_parallel_hidden_ns", dpt[dm.device.value].hidden()},
         {"memory_capacity", info.memory_capacity > 0 ? nlohmann::json(info.memory_capacity)
                                                      : nlohmann::json(nullptr)},
         {"out_of_memory", oom},
         {"device_type", info.type.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.type)},
         {"order", std::move(order)}});
  }
  report["devices"] = std::move(devices);
  report["out_of_memory"] = out_of_memory;
  report["expert_parallel"] = config.expert_parallel;
  report["overlapped_pairs"] = parallel::overlapped_pair_count(graph);
  return report;
}

const std::filesystem::path kSource = PERFLOW_SOURCE_DIR;

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

/// What the configs reached, so the test knows it covered the cases it means to.
struct Coverage {
  int reports = 0;
  int with_model = 0;
  int null_mfu_with_model = 0;
  int out_of_memory = 0;
  int escaped_names = 0;
};

/// Simulates `config` and compares the streamed report with the reference tree's dump(1).
void check_report(const Config& config, const std::string& name, Coverage& coverage) {
  const EventGraph graph = build_graph(config);
  const simulator::SimulationResult result = simulate(config, graph);
  const nlohmann::json tree = reference_report(config, graph, result);
  const std::string streamed = render_report(config, graph, result);
  const std::string expected = tree.dump(1) + "\n";
  if (streamed != expected) {
    // Both are long: show where they part.
    const std::size_t at = static_cast<std::size_t>(
        std::mismatch(streamed.begin(), streamed.end(), expected.begin(), expected.end()).first -
        streamed.begin());
    const std::size_t from = at < 200 ? 0 : at - 200;
    FAIL() << name << ": the streamed report differs from byte " << at << "\nstreamed: ..."
           << streamed.substr(from, 300) << "\nnlohmann: ..." << expected.substr(from, 300);
  }
  ++coverage.reports;
  coverage.with_model += !tree.at("model").is_null();
  coverage.null_mfu_with_model += !tree.at("model").is_null() && tree.at("mfu").is_null();
  coverage.out_of_memory += tree.at("out_of_memory").get<bool>();
  for (const auto& device : tree.at("devices")) {
    const nlohmann::json& type = device.at("device_type");
    // Escaped: the literal is longer than the text and its quotes.
    coverage.escaped_names +=
        type.is_string() && type.dump().size() != type.get<std::string>().size() + 2;
  }
}

TEST(Report, StreamedAsNlohmannDumpOfEveryExampleAndGoldenConfig) {
  std::vector<std::filesystem::path> configs;
  for (const auto& entry : std::filesystem::directory_iterator(kSource / "examples")) {
    if (entry.path().extension() == ".json") configs.push_back(entry.path());
  }
  for (const auto& entry : std::filesystem::directory_iterator(kSource / "tests" / "golden")) {
    if (std::filesystem::exists(entry.path() / "config.json")) {
      configs.push_back(entry.path() / "config.json");
    }
  }
  std::sort(configs.begin(), configs.end());
  Coverage coverage;
  int refused = 0;
  for (const std::filesystem::path& path : configs) {
    std::optional<Config> config;
    try {
      config = load_config(path);
      check_report(*config, path.string(), coverage);
    } catch (const Error&) {
      ++refused;  // the golden error cases: nothing to report
    } catch (const nlohmann::json::exception&) {
      ++refused;  // a golden case of invalid JSON
    }
  }
  EXPECT_GE(coverage.reports, 12);
  EXPECT_GE(coverage.with_model, 4);
  EXPECT_GE(coverage.out_of_memory, 1);
  EXPECT_LT(refused, coverage.reports);
}

// Device type names are free text in a config: quotes, backslashes, control characters and
// UTF-8 reach the report. A model stage without a GPU makes the MFU NaN: null.
TEST(Report, StreamedAsNlohmannDumpOfEscapesAndNulls) {
  Coverage coverage;
  nlohmann::json zbv = read_json(kSource / "examples" / "heterogeneous_zbv.json");
  const std::string h100 = "H\"100\" \\ \t\x01 caf\xC3\xA9 \xF0\x9F\x98\x80";
  const std::string a100 = "A100\n/\x7F\x1F";
  zbv["device_types"][h100] = zbv["device_types"]["H100"];
  zbv["device_types"][a100] = zbv["device_types"]["A100"];
  zbv["device_types"].erase("H100");
  zbv["device_types"].erase("A100");
  zbv["placement"][0]["device_type"] = h100;
  zbv["placement"][1]["device_type"] = a100;
  check_report(parse_config(zbv, "zbv.json"), "escaped names", coverage);
  EXPECT_EQ(coverage.escaped_names, 8);

  nlohmann::json oom =
      read_json(kSource / "tests" / "golden" / "simulate_out_of_memory" / "config.json");
  check_report(parse_config(oom, "oom.json"), "out of memory", coverage);
  EXPECT_EQ(coverage.out_of_memory, 1);

  // Llama 3 70B with stages 2-3 on a device without a GPU preset: their costs come from
  // /costs (the selective recomputation's time too), and the MFU is unknown.
  nlohmann::json mixed = read_json(kSource / "examples" / "llama3_70b_h100_a100.json");
  mixed["device_types"]["A100"] = {
      {"forward", 50000}, {"backward", 90000}, {"weight", 80000}, {"recompute_forward", 5000}};
  mixed["pipeline"]["layers"] = "balanced";
  check_report(parse_config(mixed, "mixed.json"), "a stage without a GPU", coverage);
  EXPECT_EQ(coverage.null_mfu_with_model, 1);
}

}  // namespace
}  // namespace perflow::study
