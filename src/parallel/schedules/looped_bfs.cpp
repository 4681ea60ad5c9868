// Looped breadth-first schedule (Lamy-Poirier, "Breadth-First Pipeline Parallelism", 2022), in
// the order of PyTorch's ScheduleLoopedBFS (pytorch/pytorch,
// torch/distributed/pipelining/schedules.py): device d owns chunks 0..v-1 (positions c*p+d)
// and runs, chunk by chunk, the forwards of all microbatches in order; then, chunk by chunk
// from the last to the first, the fused backwards of all microbatches in reverse order.
// Every device holds all m*v activations at its peak.
#include "../detail/schedules.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_looped_bfs(const PipelineSpec& spec, const CostTable& /*costs*/) {
  require_basic_sizes(spec);  // any chunk count >= 1
  PipelinePlan plan = empty_plan(spec, PipelineShape::Interleaved);
  const std::uint32_t m = spec.microbatches;
  const std::uint32_t v = spec.chunks;
  for (auto& program : plan.programs) {
    program.reserve(std::size_t{m} * v * 2);
    for (std::uint32_t c = 0; c < v; ++c) {
      for (std::uint32_t mb = 0; mb < m; ++mb) program.push_back({TaskKind::F, mb, c});
    }
    for (std::uint32_t c = v; c-- > 0;) {
      for (std::uint32_t mb = m; mb-- > 0;) program.push_back({TaskKind::BW, mb, c});
    }
  }
  return plan;
}

}  // namespace perflow::parallel::detail
