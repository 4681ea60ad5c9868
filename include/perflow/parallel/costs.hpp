#pragma once

#include <cstdint>
#include <vector>

#include "perflow/core/id.hpp"
#include "perflow/core/task.hpp"
#include "perflow/core/time.hpp"

namespace perflow::parallel {

/// The cost of one chunk of one stage, per microbatch.
struct TaskCosts {
  TimeNs forward = 0;
  TimeNs backward = 0;  ///< input gradient (B)
  TimeNs weight = 0;    ///< weight gradient (W)
  /// Activation memory one F allocates (memory units: bytes, or abstract units).
  double activation = 0.0;
  /// Fraction of an F's activation that B frees; W frees the rest; BW frees all of it.
  double backward_frees = 0.0;

  [[nodiscard]] TimeNs duration(TaskKind kind) const;
  /// Signed memory change when a task of `kind` runs.
  [[nodiscard]] double memory_delta(TaskKind kind) const;

  friend bool operator==(const TaskCosts&, const TaskCosts&) = default;
};

/// Costs for every (stage, chunk): a uniform default with per-entry overrides.
class CostTable {
 public:
  CostTable() = default;
  explicit CostTable(TaskCosts uniform) : uniform_(uniform) {}

  /// Sets the costs of one (stage, chunk), growing the table as needed.
  void set(StageId stage, std::uint32_t chunk, TaskCosts costs);
  [[nodiscard]] const TaskCosts& at(StageId stage, std::uint32_t chunk) const;
  [[nodiscard]] const TaskCosts& uniform() const { return uniform_; }

 private:
  TaskCosts uniform_;
  std::uint32_t chunks_ = 0;
  std::vector<TaskCosts> entries_;  // stage-major, chunks_ per stage
  std::vector<bool> present_;
};

}  // namespace perflow::parallel
