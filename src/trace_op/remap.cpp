// remap: moves tasks to other devices; devices mapped together run their old programs one
// after another, in the order of the old device ids.
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "detail/graph_copy.hpp"
#include "perflow/core/error.hpp"
#include "perflow/trace_op/operators.hpp"

namespace perflow::trace_op {

EventGraph remap(const EventGraph& graph, std::span<const DeviceId> device_of) {
  detail::require_compute_lanes_only(graph, "remap");
  if (device_of.size() != graph.device_count()) {
    throw ScheduleError(fmt::format("remap: device_of has {} entries, but the graph has {} devices",
                                    device_of.size(), graph.device_count()));
  }
  std::uint32_t device_count = 0;
  for (std::size_t d = 0; d < device_of.size(); ++d) {
    if (!device_of[d].valid()) {
      throw ScheduleError(fmt::format("remap: device_of[{}] is not a valid device id", d));
    }
    device_count = std::max(device_count, device_of[d].value + 1);
  }
  return detail::copy_graph(graph, device_count, [&](TaskId, TaskSpec spec) {
    spec.device = device_of[spec.device.value];
    return spec;
  });
}

}  // namespace perflow::trace_op
