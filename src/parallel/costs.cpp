#include "perflow/parallel/costs.hpp"

#include <algorithm>

namespace perflow::parallel {

TimeNs TaskCosts::duration(TaskKind kind) const {
  switch (kind) {
    case TaskKind::F:
      return forward;
    case TaskKind::B:
      return backward;
    case TaskKind::W:
      return weight;
    case TaskKind::BW:
      return backward + weight;
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
  }
  return 0.0;
}

void CostTable::set(StageId stage, std::uint32_t chunk, TaskCosts costs) {
  const std::uint32_t stages =
      chunks_ == 0 ? 0 : static_cast<std::uint32_t>(entries_.size()) / chunks_;
  const std::uint32_t new_chunks = std::max(chunks_, chunk + 1);
  const std::uint32_t new_stages = std::max(stages, stage.value + 1);
  if (new_chunks != chunks_ || new_stages != stages) {
    std::vector<TaskCosts> entries(std::size_t{new_stages} * new_chunks, uniform_);
    std::vector<bool> present(entries.size(), false);
    for (std::uint32_t s = 0; s < stages; ++s) {
      for (std::uint32_t c = 0; c < chunks_; ++c) {
        entries[s * new_chunks + c] = entries_[s * chunks_ + c];
        present[s * new_chunks + c] = present_[s * chunks_ + c];
      }
    }
    entries_ = std::move(entries);
    present_ = std::move(present);
    chunks_ = new_chunks;
  }
  entries_[std::size_t{stage.value} * chunks_ + chunk] = costs;
  present_[std::size_t{stage.value} * chunks_ + chunk] = true;
}

const TaskCosts& CostTable::at(StageId stage, std::uint32_t chunk) const {
  if (chunk < chunks_) {
    const std::size_t index = std::size_t{stage.value} * chunks_ + chunk;
    if (index < entries_.size() && present_[index]) return entries_[index];
  }
  return uniform_;
}

}  // namespace perflow::parallel
