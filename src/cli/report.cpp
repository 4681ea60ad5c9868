#include "perflow/cli/report.hpp"

#include <cmath>
#include <optional>

namespace perflow::cli {

nlohmann::json make_report(const Config& config, const EventGraph& graph,
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
  TimeNs communication = 0;
  for (const simulator::DeviceMetrics& dm : m.devices) communication += dm.communication;
  report["communication_ns"] = communication;

  // /model: what the step achieves, and what the model is.
  const std::optional<Throughput> achieved = throughput(config, m.makespan);
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
        {"gpus", achieved ? achieved->gpus : 0}};
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
  for (const simulator::DeviceMetrics& dm : m.devices) {
    const auto [info, total, oom] = device_memory(config, dm);
    out_of_memory = out_of_memory || oom;
    nlohmann::json order = nlohmann::json::array();
    for (const TaskId t : result.trace.events(dm.device)) order.push_back(graph.label(t));
    // Per chunk, the layers it holds and the memory the model puts on the device.
    nlohmann::json layers = nullptr;
    nlohmann::json breakdown = nullptr;
    const std::uint32_t chunks = config.pipeline.chunks;
    if (config.model && !config.model->positions.empty() &&
        dm.device.value < config.pipeline.stages) {
      layers = nlohmann::json::array();
      double weights = 0, gradients = 0, optimizer = 0;
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
      }
      breakdown = {{"weights", weights}, {"gradients", gradients}, {"optimizer_state", optimizer}};
    }
    devices.push_back(
        {{"device", dm.device.value},
         {"layers", std::move(layers)},
         {"memory_breakdown", std::move(breakdown)},
         {"tasks", dm.tasks},
         {"busy_ns", dm.busy},
         {"communication_ns", dm.communication},
         {"bubble_ratio", dm.bubble_ratio},
         {"first_start_ns", dm.first_start},
         {"last_end_ns", dm.last_finish},
         {"span_bubble_ns", dm.span_bubble()},
         {"peak_memory", dm.peak_memory},
         {"static_memory", info.static_memory},
         {"peak_total_memory", total},
         {"memory_capacity", info.memory_capacity > 0 ? nlohmann::json(info.memory_capacity)
                                                      : nlohmann::json(nullptr)},
         {"out_of_memory", oom},
         {"device_type", info.type.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.type)},
         {"order", std::move(order)}});
  }
  report["devices"] = std::move(devices);
  report["out_of_memory"] = out_of_memory;
  return report;
}

}  // namespace perflow::cli
