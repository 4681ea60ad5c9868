#include "perflow/cli/summary.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace perflow::cli {
namespace {

std::string format_memory(double value) {
  if (value == std::floor(value) && std::abs(value) < 1e15) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  return fmt::format("{:.3f}", value);
}

std::string count(std::uint32_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

std::string describe_run(const Config& config, const EventGraph& graph) {
  const parallel::PipelineSpec& p = config.pipeline;
  return fmt::format(
      "{}{}, {} x {} x {} ({} tasks)", p.schedule, p.split_backward ? " (split backward)" : "",
      count(p.stages, "stage", "stages"), count(p.microbatches, "microbatch", "microbatches"),
      count(p.chunks, "chunk", "chunks"), graph.task_count());
}

std::string format_summary(const Config& config, const EventGraph& graph,
                           const simulator::Metrics& metrics) {
  std::string out;
  auto line = [&out](std::string_view key, const std::string& value) {
    out += fmt::format("{:<15}{}\n", key, value);
  };
  line("run", describe_run(config, graph));
  line("makespan", fmt::format("{} ({} ns)", format_duration(metrics.makespan), metrics.makespan));
  line("bubble ratio", fmt::format("{:.2f}%", metrics.bubble_ratio * 100));
  line("critical path", fmt::format("{} tasks", metrics.critical_path.size()));
  out += '\n';
  out += fmt::format("{:>6}  {:>12}  {:>12}  {:>8}  {:>12}\n", "device", "busy", "bubble",
                     "bubble%", "peak memory");
  for (const simulator::DeviceMetrics& d : metrics.devices) {
    out += fmt::format("{:>6}  {:>12}  {:>12}  {:>7.2f}%  {:>12}\n", d.device.value,
                       format_duration(d.busy), format_duration(metrics.makespan - d.busy),
                       d.bubble_ratio * 100, format_memory(d.peak_memory));
  }
  return out;
}

}  // namespace perflow::cli
