// Eager 1F1B: 1F1B whose warm-up runs p-d-1 extra forwards on device d, so that each
// activation send has a whole forward of slack before its receiver needs it and point-to-point
// transfers overlap compute. This is the warm-up rule of PyTorch's ScheduleInterleaved1F1B
// (pytorch/pytorch, torch/distributed/pipelining/schedules.py: 2(p-1-d) warm-up forwards,
// then forward/backward pairs) with one local stage, and PaddlePaddle's
// pipeline_scheduler_Eager1F1B pass; the "Eager 1F1B" of Qi et al., "Pipeline Parallelism
// with Controllable Memory" (2024). Device d runs min(2(p-d)-1, m) forwards before its first
// (fused) backward, then alternates backward and forward, then drains the backwards; it holds
// at most min(2(p-d)-1, m) activations (1F1B: min(p-d, m)). Fewer microbatches than the
// warm-up needs simply shorten it (as PyTorch caps it; Paddle refuses m < 2p-1).
#include "../detail/schedules.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_eager_1f1b(const PipelineSpec& spec, const CostTable& /*costs*/) {
  return plan_1f1b_with_warmup(spec, 2);  // the shared loop is in one_f_one_b.cpp
}

}  // namespace perflow::parallel::detail
