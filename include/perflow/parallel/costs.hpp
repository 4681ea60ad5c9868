#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
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
  /// What the runtime adds to every compute task (F, B, W, BW: once each, a fused BW once):
  /// kernel launches and host work a profile shows as gaps between a task's kernels.
  TimeNs launch_overhead = 0;
  /// Activation recomputation, applied by parallel::add_recompute (a schedule's graph is
  /// built without it): F keeps only `recompute_activation` until its backward, and an R
  /// task right before the backward reruns the forward for `recompute_forward` (plus the
  /// launch overhead), holding `recompute_rebuilt` until the backward is done with it.
  bool recompute = false;
  TimeNs recompute_forward = 0;
  double recompute_activation = 0.0;
  /// What R rebuilds at once: by default the rest of the activation (the chunk recomputed
  /// as one checkpoint); less with finer checkpoints (one layer's, as Megatron-LM's full
  /// recomputation holds).
  std::optional<double> recompute_rebuilt = std::nullopt;
  /// Expert parallelism: the all-to-all time of one F (its MoE layers' dispatches and
  /// combines, one after the other); each backward (B or BW) runs as much, mirrored (the
  /// gradient of a dispatch is a combine and the other way round); W none. An A2A task
  /// holds it (parallel::add_all_to_all).
  TimeNs all_to_all = 0;
  /// A fused BW's own time where it is not backward + weight: with /model's host floor, the
  /// longer of the GPU's B and W together and the host's (each of backward and weight is
  /// floored on its own for the schedules that split them). Unset: backward + weight.
  std::optional<TimeNs> backward_weight = std::nullopt;
  /// An overlapped forward-backward pair whose F is this chunk's: its measured time
  /// (DeepSeek-V3's F&B); unset: derived (see pair_duration).
  std::optional<TimeNs> forward_backward = std::nullopt;

  /// What one F keeps until its backward: `activation`, or with recomputation
  /// `recompute_activation` (at most `activation`).
  [[nodiscard]] double kept_activation() const {
    return recompute ? std::min(recompute_activation, activation) : activation;
  }
  /// What an R task allocates (0 without recomputation).
  [[nodiscard]] double rebuilt_activation() const {
    if (!recompute) return 0.0;
    return std::clamp(recompute_rebuilt.value_or(activation), 0.0, activation - kept_activation());
  }

  /// The task's time, its launch overhead included (an A2A's: all_to_all).
  [[nodiscard]] TimeNs duration(TaskKind kind) const;
  /// The time of an overlapped pair of this chunk's F and a backward (`backward_kind`, with
  /// costs `paired`): forward_backward when given; else the longest of the two
  /// computations back to back, the two all-to-alls back to back, and each task's compute
  /// with its own all-to-all (which it waits for): each all-to-all hides behind the other
  /// task's compute, as far as there is compute to hide it (DeepSeek-V3 report section
  /// 3.2.1; Megatron-LM's EP all-to-all overlap). Never more than the two tasks with their
  /// all-to-alls in sequence.
  [[nodiscard]] TimeNs pair_duration(TaskKind backward_kind, const TaskCosts& paired) const;
  /// Signed memory change when a task of `kind` runs, without recomputation: F allocates
  /// the activation, B frees `backward_frees` of it, W the rest (BW all of it).
  [[nodiscard]] double memory_delta(TaskKind kind) const;
  /// The same once add_recompute has inserted R tasks: F keeps kept_activation(), R adds
  /// rebuilt_activation(), B frees both but what W needs (W's share of the activation,
  /// which B may have to allocate), W frees that, BW frees both.
  [[nodiscard]] double recomputed_memory_delta(TaskKind kind) const;

  friend bool operator==(const TaskCosts&, const TaskCosts&) = default;
};

/// Costs for every (stage, chunk): a uniform default with per-entry overrides, and the time
/// one point-to-point transfer between stages takes (automatic schedulers plan with it).
class CostTable {
 public:
  CostTable() = default;
  explicit CostTable(TaskCosts uniform, TimeNs p2p_latency = 0)
      : uniform_(uniform), p2p_latency_(p2p_latency) {}

  /// Makes room for stages x chunks entries at once (set() grows the table otherwise).
  void reserve(std::uint32_t stages, std::uint32_t chunks);
  /// Sets the costs of one (stage, chunk), growing the table as needed.
  void set(StageId stage, std::uint32_t chunk, TaskCosts costs);
  [[nodiscard]] const TaskCosts& at(StageId stage, std::uint32_t chunk) const;
  [[nodiscard]] const TaskCosts& uniform() const { return uniform_; }
  [[nodiscard]] TimeNs p2p_latency() const { return p2p_latency_; }
  void set_p2p_latency(TimeNs latency) { p2p_latency_ = latency; }

 private:
  void set_size(std::uint32_t stage, std::uint32_t chunk);  // grow to hold (stage, chunk)

  TaskCosts uniform_;
  TimeNs p2p_latency_ = 0;
  std::uint32_t chunks_ = 0;
  std::vector<TaskCosts> entries_;  // stage-major, chunks_ per stage
  std::vector<bool> present_;
};

/// True when `pred` holds for the costs of some (stage, chunk) of `stages` x `chunks`.
template <typename Pred>
bool any_costs(const CostTable& costs, std::uint32_t stages, std::uint32_t chunks, Pred pred) {
  for (std::uint32_t s = 0; s < stages; ++s) {
    for (std::uint32_t c = 0; c < chunks; ++c) {
      if (pred(costs.at(StageId{s}, c))) return true;
    }
  }
  return false;
}

}  // namespace perflow::parallel
