#include "perflow/study/device_display.hpp"

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

}  // namespace perflow::study
