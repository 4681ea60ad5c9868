#include "perflow/study/report.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "perflow/core/huge_page_allocator.hpp"
#include "perflow/core/json_writer.hpp"
#include "perflow/parallel/data_parallel.hpp"
#include "perflow/parallel/expert_parallel.hpp"

// The report is streamed in the order nlohmann::json prints an object: keys sorted. Every
// key is always present (null when it does not apply), so the layout never depends on the
// run; tests/study/report_test.cpp checks the bytes against a tree dumped by nlohmann.
namespace perflow::study {
namespace {

/// A task's label as a string_view into a buffer of its own.
class LabelBuffer {
 public:
  std::string_view of(const EventGraph& graph, TaskId t) {
    return {data_, static_cast<std::size_t>(graph.put_label(data_, t) - data_)};
  }

 private:
  char data_[kMaxTaskLabel];
};

void number_or_null(JsonWriter& w, std::string_view key, std::optional<double> x) {
  w.key(key);
  if (x) {
    w.value(*x);  // NaN and infinities are written as null, as nlohmann does
  } else {
    w.value(nullptr);
  }
}

void string_or_null(JsonWriter& w, std::string_view key, std::string_view text) {
  w.key(key);
  if (text.empty()) {
    w.value(nullptr);
  } else {
    w.value(text);
  }
}

void write_model(JsonWriter& w, const ModelPlan& plan, const std::optional<Throughput>& achieved) {
  w.begin_object();
  number_or_null(w, "flops_per_token",
                 achieved ? std::optional<double>(achieved->flops_per_token) : std::nullopt);
  w.field("global_batch_size", plan.training.global_batch_size);
  w.field("gpus", achieved ? achieved->gpus : 0);
  w.field("layers", plan.transformer.layers);
  number_or_null(w, "mfu_peak_tflops",
                 achieved ? std::optional<double>(achieved->peak_tflops) : std::nullopt);
  w.field("micro_batch_size", plan.training.micro_batch_size);
  w.field("parameters", plan.transformer.parameters());
  w.field("precision", model::to_string(plan.training.precision));
  string_or_null(w, "preset", plan.preset);
  w.field("recompute", model::to_string(plan.training.recompute));
  w.field("split", plan.split);
  w.end_object();
}

/// Per chunk, the layers a device holds, and the memory the model puts on it; null without
/// a model.
void write_layers_and_breakdown(JsonWriter& w, const Config& config, DeviceId device) {
  const std::uint32_t chunks = config.pipeline.chunks;
  if (!config.model || config.model->positions.empty() || device.value >= config.pipeline.stages) {
    w.field("layers", nullptr);
    w.field("memory_breakdown", nullptr);
    return;
  }
  double weights = 0, gradients = 0, optimizer = 0, fp8_weights = 0, fsdp_buffers = 0;
  w.key("layers").begin_array();
  for (std::uint32_t c = 0; c < chunks; ++c) {
    const model::PositionCosts& p = config.model->positions[device.value * chunks + c];
    const parallel::TaskCosts& costs = config.costs.at(StageId{device.value}, c);
    w.begin_object()
        .field("activation", costs.activation)
        .field("backward_ns", costs.backward)
        .field("chunk", c)
        .field("count", p.layers.count)
        .field("embedding", p.layers.embedding)
        .field("first", p.layers.first)
        .field("forward_ns", costs.forward)
        .field("head", p.layers.head)
        .field("weight_ns", costs.weight)
        .end_object();
    weights += p.weight_bytes;
    gradients += p.gradient_bytes;
    optimizer += p.optimizer_bytes;
    fp8_weights += p.fp8_weight_bytes;
    fsdp_buffers = std::max(fsdp_buffers, p.fsdp_buffer_bytes);  // one buffer a device
  }
  w.end_array();
  w.key("memory_breakdown").begin_object().field("fp8_weight_cache", fp8_weights);
  // FSDP's gathered units, only with FSDP (reports without it stay as they were).
  if (fsdp_buffers > 0) w.field("fsdp_gathered_units", fsdp_buffers);
  w.field("gradients", gradients)
      .field("optimizer_state", optimizer)
      .field("weights", weights)
      .end_object();
}

constexpr std::size_t kLabelBlock = 64;

}  // namespace

std::string render_report(const Config& config, const EventGraph& graph,
                          const simulator::SimulationResult& result) {
  const simulator::Metrics& m = result.metrics;
  const Trace& trace = result.trace;
  TimeNs communication = 0;
  for (const simulator::DeviceMetrics& dm : m.devices) communication += dm.communication;
  const std::optional<Throughput> achieved = throughput(config, m.iteration_time);
  const auto achieved_field = [&achieved](double Throughput::*field) {
    return achieved ? std::optional<double>((*achieved).*field) : std::nullopt;
  };

  // Sized once, so the text is never copied while it grows: about 16 bytes per label in
  // `order` ("    \"BW12.0\",\n"), 100 per critical path step, little else. Only the pages
  // written are touched, and they are huge pages where the kernel agrees.
  std::string out;
  out.reserve(graph.task_count() * 24 + m.critical_path.size() * 128 + m.devices.size() * 2048 +
              4096);
  detail::advise_huge_pages(out.data(), out.capacity());
  JsonWriter w(out, 1);
  LabelBuffer label;
  w.begin_object();
  w.field("bubble_ratio", m.bubble_ratio);
  w.field("chunks", config.pipeline.chunks);
  w.field("communication_ns", communication);
  w.field("costs_per", config.costs_per);

  w.key("critical_path").begin_array();
  for (const TaskId t : m.critical_path) {
    w.begin_object()
        .field("device", graph.device(t).value)
        .field("end_ns", trace.finish_of(t))
        .field("start_ns", trace.start_of(t))
        .field("task", label.of(graph, t))
        .end_object();
  }
  w.end_array();

  w.field("data_parallel", config.data_parallel.degree);
  w.field("dependency_bound_ns", m.dependency_bound);

  bool out_of_memory = false;
  const std::vector<double> without_saving = peaks_without_saving(config, graph, trace);
  const std::vector<parallel::AllToAllTime> all_to_all =
      parallel::all_to_all_time(graph, config.costs);
  const std::vector<parallel::DataParallelTime> data_parallel =
      parallel::data_parallel_time(graph, trace);
  w.key("devices").begin_array();
  for (const simulator::DeviceMetrics& dm : m.devices) {
    const DeviceMemory memory = device_memory(config, dm, without_saving);
    const DeviceInfo& info = memory.info;
    out_of_memory = out_of_memory || memory.out_of_memory;
    const parallel::AllToAllTime& a2a = all_to_all[dm.device.value];
    w.begin_object();
    w.field("all_to_all_exposed_ns", a2a.exposed);
    w.field("all_to_all_hidden_ns", a2a.hidden());
    w.field("all_to_all_ns", a2a.total);
    w.field("blocked_ns", dm.blocked);
    w.field("bubble_ratio", dm.bubble_ratio);
    w.field("busy_ns", dm.busy);
    w.field("communication_ns", dm.communication);
    const parallel::DataParallelTime& dp = data_parallel[dm.device.value];
    w.field("data_parallel_exposed_ns", dp.exposed);
    w.field("data_parallel_hidden_ns", dp.hidden());
    w.field("data_parallel_ns", dp.total);
    w.field("device", dm.device.value);
    string_or_null(w, "device_type", info.type);
    w.field("first_start_ns", dm.first_start);
    w.field("host_copy_ns", dm.host_copy);
    w.field("last_end_ns", dm.last_finish);
    write_layers_and_breakdown(w, config, dm.device);
    number_or_null(
        w, "memory_capacity",
        info.memory_capacity > 0 ? std::optional<double>(info.memory_capacity) : std::nullopt);
    // The labels in blocks, their fields gathered first: the loads (scattered over the task
    // columns) then overlap instead of waiting one by one between the writes.
    w.key("order").begin_array();
    const std::span<const TaskId> events = trace.events(dm.device);
    const bool iterations = graph.has_iterations();
    for (std::size_t first = 0; first < events.size(); first += kLabelBlock) {
      const std::size_t count = std::min(kLabelBlock, events.size() - first);
      std::array<TaskLabel, kLabelBlock> block;
      std::array<std::uint32_t, kLabelBlock> iteration;
      for (std::size_t i = 0; i < count; ++i) {
        const TaskId t = events[first + i];
        block[i] = {graph.kind(t), graph.microbatch(t), graph.chunk(t)};
        iteration[i] = graph.iteration(t);
      }
      w.plain_strings(count, kMaxTaskLabel, [&](std::size_t i, char* p) {
        return put_task_label(p, block[i], iterations, iteration[i]);
      });
    }
    w.end_array();
    w.field("out_of_memory", memory.out_of_memory);
    w.field("peak_memory", dm.peak_memory);
    w.field("peak_memory_without_saving", memory.peak_without_saving);
    w.field("peak_total_memory", memory.total);
    w.field("peak_total_memory_without_saving", memory.total_without_saving);
    w.field("recompute_ns", dm.recompute);
    w.field("span_bubble_ns", dm.span_bubble());
    w.field("static_memory", info.static_memory);
    w.field("tasks", dm.tasks);
    w.end_object();
  }
  w.end_array();

  w.field("expert_parallel", config.expert_parallel);
  w.key("iteration_end_ns").begin_array();
  for (const TimeNs end : m.iteration_finish) w.value(end);
  w.end_array();
  w.field("iteration_time_ns", m.iteration_time);
  w.field("iterations", config.iterations.count);
  w.field("lower_communication", config.lower_communication);
  w.field("makespan_ns", m.makespan);
  number_or_null(w, "mfu", achieved_field(&Throughput::mfu));
  w.field("microbatches", config.pipeline.microbatches);
  w.field("mode", simulator::to_string(config.simulation.mode));
  w.key("model");
  if (config.model) {
    write_model(w, *config.model, achieved);
  } else {
    w.value(nullptr);
  }
  number_or_null(w, "model_tflops_per_gpu", achieved_field(&Throughput::model_tflops_per_gpu));
  w.field("optimizer_sync", config.iterations.optimizer_sync);
  w.field("out_of_memory", out_of_memory);
  w.field("overlapped_pairs", parallel::overlapped_pair_count(graph));
  w.field("p2p_mode", config.blocking_p2p ? "blocking" : "async");
  w.field("schedule", config.pipeline.schedule);
  w.field("split_backward", config.pipeline.split_backward);
  w.field("stages", config.pipeline.stages);
  w.field("tasks", graph.task_count());
  w.field("tensor_parallel", config.tensor_parallel);
  number_or_null(w, "tokens_per_s", achieved_field(&Throughput::tokens_per_s));
  w.field("total_work_ns", m.total_work);
  w.end_object();
  out += '\n';
  return out;
}

}  // namespace perflow::study
