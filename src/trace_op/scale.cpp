// scale: multiplies task durations by kind and by stage, rounding to the nearest nanosecond.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "detail/graph_copy.hpp"
#include "perflow/core/error.hpp"
#include "perflow/trace_op/operators.hpp"

namespace perflow::trace_op {
namespace {

void check_factor(double factor, std::string_view what) {
  if (!std::isfinite(factor) || factor < 0) {
    throw ScheduleError(fmt::format(
        "scale: the factor for {} is {} (factors must be finite and >= 0)", what, factor));
  }
}

}  // namespace

EventGraph scale(const EventGraph& graph, const ScaleFactors& factors) {
  detail::require_compute_lanes_only(graph, "scale");
  for (std::size_t k = 0; k < factors.by_kind.size(); ++k) {
    check_factor(factors.by_kind[k], fmt::format("kind {}", to_string(static_cast<TaskKind>(k))));
  }
  const auto n = static_cast<std::uint32_t>(graph.task_count());
  if (!factors.by_stage.empty()) {
    std::uint32_t stages = 0;
    for (std::uint32_t v = 0; v < n; ++v) {
      stages = std::max(stages, graph.stage(TaskId{v}).value + 1);
    }
    // Longer is fine: a part filtered from a bigger graph keeps its stage ids, so the
    // whole model's factors apply to it.
    if (factors.by_stage.size() < stages) {
      throw ScheduleError(fmt::format("scale: by_stage has {} factors, but the graph has {} stages",
                                      factors.by_stage.size(), stages));
    }
    for (std::size_t s = 0; s < factors.by_stage.size(); ++s) {
      check_factor(factors.by_stage[s], fmt::format("stage {}", s));
    }
  }
  // Every scaled duration below this converts to TimeNs exactly (the next double up is 2^63).
  constexpr double kLimit = 9223372036854774784.0;
  return detail::copy_graph(graph, graph.device_count(), [&](TaskId t, TaskSpec spec) {
    double factor = factors.by_kind[static_cast<std::size_t>(spec.kind)];
    if (!factors.by_stage.empty()) factor *= factors.by_stage[spec.stage.value];
    const double scaled = static_cast<double>(spec.duration) * factor;
    if (!(scaled <= kLimit)) {
      throw ScheduleError(fmt::format("scale: task {} of stage {} would last {} ns (too long)",
                                      graph.label(t), spec.stage.value, scaled));
    }
    spec.duration = std::llround(scaled);
    return spec;
  });
}

}  // namespace perflow::trace_op
