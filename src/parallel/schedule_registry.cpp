#include "perflow/parallel/schedule_registry.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "detail/schedules.hpp"
#include "perflow/core/did_you_mean.hpp"
#include "perflow/core/error.hpp"

namespace perflow::parallel {

void ScheduleRegistry::add(ScheduleInfo info) {
  if (find(info.name) != nullptr) {
    throw std::invalid_argument(fmt::format("schedule '{}' is already registered", info.name));
  }
  schedules_.push_back(std::move(info));
}

const ScheduleInfo* ScheduleRegistry::find(std::string_view name) const {
  for (const ScheduleInfo& info : schedules_) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const ScheduleInfo& ScheduleRegistry::get(std::string_view name) const {
  if (const ScheduleInfo* info = find(name)) return *info;
  const std::vector<std::string> valid = names();
  throw UnknownNameError(fmt::format("unknown schedule '{}'{} (valid: {})", name,
                                     did_you_mean_suffix(name, valid), fmt::join(valid, ", ")));
}

std::vector<std::string> ScheduleRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(schedules_.size());
  for (const ScheduleInfo& info : schedules_) out.push_back(info.name);
  return out;
}

void register_builtin_schedules(ScheduleRegistry& registry) {
  registry.add({"gpipe", "GPipe: all forwards, then all backwards (Huang et al., 2019)",
                "chunks = 1", &detail::plan_gpipe});
  registry.add({"1f1b",
                "1F1B / PipeDream-Flush: warm-up forwards, then one forward one backward "
                "(Megatron-LM's non-interleaved schedule)",
                "chunks = 1", &detail::plan_1f1b});
}

const ScheduleRegistry& builtin_schedules() {
  static const ScheduleRegistry registry = [] {
    ScheduleRegistry r;
    register_builtin_schedules(r);
    return r;
  }();
  return registry;
}

PipelinePlan plan_schedule(const PipelineSpec& spec, const CostTable& costs,
                           const ScheduleRegistry& registry) {
  PipelinePlan plan = registry.get(spec.schedule).plan(spec, costs);
  if (spec.split_backward) split_fused_backward(plan);
  return plan;
}

EventGraph build_schedule(const PipelineSpec& spec, const CostTable& costs,
                          const ScheduleRegistry& registry) {
  return build_pipeline_graph(plan_schedule(spec, costs, registry), costs);
}

}  // namespace perflow::parallel
