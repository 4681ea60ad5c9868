// GPipe (Huang et al., "GPipe: Efficient Training of Giant Neural Networks using Pipeline
// Parallelism", NeurIPS 2019): every device runs all forwards, then all backwards in
// microbatch order. Peak activation memory is m microbatches on every device.
#include "../detail/schedules.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_gpipe(const PipelineSpec& spec, const CostTable& /*costs*/) {
  require_sizes(spec, 1);
  PipelinePlan plan = empty_plan(spec, PipelineShape::Linear);
  for (auto& program : plan.programs) {
    program.reserve(std::size_t{spec.microbatches} * 2);
    for (std::uint32_t mb = 0; mb < spec.microbatches; ++mb)
      program.push_back({TaskKind::F, mb, 0});
    for (std::uint32_t mb = 0; mb < spec.microbatches; ++mb) {
      program.push_back({TaskKind::BW, mb, 0});
    }
  }
  return plan;
}

}  // namespace perflow::parallel::detail
