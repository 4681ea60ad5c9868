#include "perflow/study/device_display.hpp"

#include <string>

#include <fmt/format.h>

#include "perflow/study/summary.hpp"

namespace perflow::study {

DeviceDisplay device_display(const Config& config, std::uint32_t devices) {
  DeviceDisplay display;
  for (std::uint32_t d = 0; d < devices; ++d) {
    simulator::DeviceMetrics metrics;
    metrics.device = DeviceId{d};
    const DeviceInfo info = device_memory(config, metrics).info;
    display.labels.push_back(info.type);
    display.static_memory.push_back(info.static_memory);
    display.capacity.push_back(info.memory_capacity);
  }
  return display;
}

RunDisplay run_display(const Config& config, const EventGraph& graph) {
  RunDisplay display;
  display.title = config.description.empty() ? config.pipeline.schedule : config.description;
  // A description written for the file may no longer be true of what --set changed ("ZBV on
  // ..." after /pipeline/schedule=v-half): the title says what was changed.
  std::string changed;
  for (const ConfigOverride& o : config.overrides) {
    if (o.pointer == "/description" || config.description.empty()) continue;
    changed += fmt::format("{}{} {}", changed.empty() ? "" : ", ", o.origin, o.text);
  }
  if (!changed.empty()) display.title += " (with " + changed + ")";
  display.subtitle = describe_run(config, graph);
  display.devices = device_display(config, graph.device_count());
  return display;
}

}  // namespace perflow::study
