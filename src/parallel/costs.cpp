#include "perflow/parallel/costs.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "perflow/core/error.hpp"
#include "perflow/parallel/pipeline.hpp"

namespace perflow::parallel {

TimeNs TaskCosts::duration(TaskKind kind) const {
  switch (kind) {
    case TaskKind::F:
      return forward + launch_overhead;
    case TaskKind::B:
      return backward + launch_overhead;
    case TaskKind::W:
      return weight + launch_overhead;
    case TaskKind::BW:
      return backward_weight.value_or(backward + weight) + launch_overhead;
    case TaskKind::R:
      return recompute ? recompute_forward + launch_overhead : 0;
    case TaskKind::A2A:
      return all_to_all;
    case TaskKind::Send:  // communication and optimizer costs come from their own models
    case TaskKind::AllReduce:
    case TaskKind::Optimizer:
    case TaskKind::Recv:
    case TaskKind::Sync:
    case TaskKind::D2H:
    case TaskKind::H2D:
    case TaskKind::ReduceScatter:
    case TaskKind::AllGather:
      return 0;
  }
  return 0;
}

double TaskCosts::memory_delta(TaskKind kind) const {
  const double freed_by_b = activation * backward_frees;
  switch (kind) {
    case TaskKind::F:
      return activation;
    case TaskKind::B:
      return -freed_by_b;
    case TaskKind::W:
      return -(activation - freed_by_b);
    case TaskKind::BW:
      return -activation;
    case TaskKind::Send:
    case TaskKind::AllReduce:
    case TaskKind::Optimizer:
    case TaskKind::Recv:
    case TaskKind::Sync:
    case TaskKind::R:
    case TaskKind::D2H:
    case TaskKind::H2D:
    case TaskKind::A2A:
    case TaskKind::ReduceScatter:
    case TaskKind::AllGather:
      return 0.0;
  }
  return 0.0;
}

TimeNs TaskCosts::pair_duration(TaskKind backward_kind, const TaskCosts& paired) const {
  if (forward_backward) return *forward_backward;
  const TimeNs f = duration(TaskKind::F);
  const TimeNs b = paired.duration(backward_kind);
  // One compute stream, one communication stream, and each task's own chain (its compute
  // waits for its own dispatch and combine): the longest of the four.
  return std::max({f + b, all_to_all + paired.all_to_all, f + all_to_all, b + paired.all_to_all});
}

double TaskCosts::recomputed_memory_delta(TaskKind kind) const {
  if (!recompute) return memory_delta(kind);
  const double held = kept_activation() + rebuilt_activation();
  const double for_w = activation * (1.0 - backward_frees);
  switch (kind) {
    case TaskKind::F:
      return kept_activation();
    case TaskKind::R:
      return rebuilt_activation();
    case TaskKind::B:
      return -(held - for_w);
    case TaskKind::BW:
      return -held;
    default:
      return memory_delta(kind);
  }
}

void CostTable::reserve(std::uint32_t stages, std::uint32_t chunks) {
  if (stages > 0 && chunks > 0) set_size(stages - 1, chunks - 1);
}

void CostTable::set(StageId stage, std::uint32_t chunk, TaskCosts costs) {
  set_size(stage.value, chunk);
  entries_[std::size_t{stage.value} * chunks_ + chunk] = costs;
  present_[std::size_t{stage.value} * chunks_ + chunk] = true;
}

void CostTable::set_size(std::uint32_t stage, std::uint32_t chunk) {
  // No pipeline has more (stage, chunk) pairs than tasks; this also keeps stage + 1 and
  // chunk + 1 from wrapping around.
  if ((std::uint64_t{stage} + 1) * (std::uint64_t{chunk} + 1) > kMaxPipelineTasks) {
    throw ScheduleError(fmt::format(
        "costs for stage {}, chunk {}: beyond the largest pipeline ({} stage-chunk pairs)", stage,
        chunk, kMaxPipelineTasks));
  }
  const std::uint32_t stages =
      chunks_ == 0 ? 0 : static_cast<std::uint32_t>(entries_.size()) / chunks_;
  const std::uint32_t new_chunks = std::max(chunks_, chunk + 1);
  const std::uint32_t new_stages = std::max(stages, stage + 1);
  if (new_chunks == chunks_ && new_stages == stages) return;
  std::vector<TaskCosts> entries(std::size_t{new_stages} * new_chunks, uniform_);
  std::vector<bool> present(entries.size(), false);
  for (std::uint32_t s = 0; s < stages; ++s) {
    for (std::uint32_t c = 0; c < chunks_; ++c) {
      entries[std::size_t{s} * new_chunks + c] = entries_[std::size_t{s} * chunks_ + c];
      present[std::size_t{s} * new_chunks + c] = present_[std::size_t{s} * chunks_ + c];
    }
  }
  entries_ = std::move(entries);
  present_ = std::move(present);
  chunks_ = new_chunks;
}

const TaskCosts& CostTable::at(StageId stage, std::uint32_t chunk) const {
  if (chunk < chunks_) {
    const std::size_t index = std::size_t{stage.value} * chunks_ + chunk;
    if (index < entries_.size() && present_[index]) return entries_[index];
  }
  return uniform_;
}

}  // namespace perflow::parallel
