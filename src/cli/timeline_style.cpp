#include "detail/timeline_style.hpp"

#include "perflow/study/device_display.hpp"
#include "perflow/study/summary.hpp"

namespace perflow::cli::detail {

visualizer::TimelineOptions timeline_style(const study::Config& config, const EventGraph& graph) {
  const study::DeviceDisplay display = study::device_display(config, graph.device_count());
  visualizer::TimelineOptions style;
  style.title = config.description.empty() ? config.pipeline.schedule : config.description;
  style.subtitle = study::describe_run(config, graph);
  style.device_labels = display.labels;
  style.static_memory = display.static_memory;
  style.memory_capacity = display.capacity;
  return style;
}

}  // namespace perflow::cli::detail
