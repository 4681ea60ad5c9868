#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/pipeline.hpp"

namespace perflow::parallel {

/// Options beyond the sizes that a schedule honours (a bit set). `split_backward` is
/// accepted by every schedule (a no-op where the backward is already split).
enum ScheduleOptions : unsigned {
  kNoOptions = 0,
  kMicrobatchGroupSize = 1u << 0,  ///< PipelineSpec::microbatch_group_size
  kMemoryLimit = 1u << 1,          ///< PipelineSpec::memory_limit
  kProgramOrder = 1u << 2,         ///< PipelineSpec::order
  kShape = 1u << 3,                ///< PipelineSpec::shape
};

/// A named pipeline schedule: it checks the sizes and produces each device's program.
struct ScheduleInfo {
  std::string name;
  std::string description;        ///< one line
  std::string constraints;        ///< the sizes it accepts, e.g. "chunks = 1"
  unsigned options = kNoOptions;  ///< ScheduleOptions it honours; others are refused
  /// Throws ScheduleError (with the offending field) for sizes the schedule refuses.
  PipelinePlan (*plan)(const PipelineSpec& spec, const CostTable& costs) = nullptr;
};

/// Schedules by name, in registration order. Filled by register_builtin_schedules(), or by
/// users adding their own.
class ScheduleRegistry {
 public:
  /// Throws std::invalid_argument if the name is taken.
  void add(ScheduleInfo info);
  [[nodiscard]] const ScheduleInfo* find(std::string_view name) const;
  /// Throws UnknownNameError listing the valid names and the closest match.
  [[nodiscard]] const ScheduleInfo& get(std::string_view name) const;
  [[nodiscard]] std::span<const ScheduleInfo> all() const { return schedules_; }
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  std::vector<ScheduleInfo> schedules_;
};

void register_builtin_schedules(ScheduleRegistry& registry);

/// The registry holding every built-in schedule (built once, on first use).
const ScheduleRegistry& builtin_schedules();

/// Plans `spec.schedule` (refusing options it does not honour, applying split_backward)
/// and builds its event graph.
EventGraph build_schedule(const PipelineSpec& spec, const CostTable& costs,
                          const ScheduleRegistry& registry = builtin_schedules());

/// Where `spec`'s chunks run: the shape its schedule's plan has (`custom`: its shape), known
/// before planning (a cost model places layers by it).
PipelineShape schedule_shape(const PipelineSpec& spec);

/// The plan alone, with split_backward applied.
PipelinePlan plan_schedule(const PipelineSpec& spec, const CostTable& costs,
                           const ScheduleRegistry& registry = builtin_schedules());

}  // namespace perflow::parallel
