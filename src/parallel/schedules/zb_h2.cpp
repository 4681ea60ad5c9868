// ZB-H2 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 3.1; reference
// runtime: github.com/sail-sg/zero-bubble-pipeline-parallelism). Like ZB-H1 with B and W
// split, but device d runs min(2(p-d)-1, m) warm-up forwards, enough to keep it busy until
// the first gradient comes back, and defers the W of its first 2d microbatches to the end:
// for each microbatch i it runs B_i, the W of microbatch i-2d and the next forward. Peak
// activation memory is min(2p-1, m) on every device, about twice 1F1B's.
//
// With uniform costs, free communication, W <= F, 2W <= F+B and m >= 2p-1 the span bubble
// is (p-1-d)(F+B-2W) on device d (the paper's (p-1)(F+B-2W) on device 0); at F=B=W it is 0
// once m >= 2p-1. The reference runtime has no handcrafted ZB-H2 (it reaches it through its
// automatic scheduler at twice 1F1B's memory, which accepts any m), so fewer microbatches
// are not refused: the warm-up is cut to m forwards and some bubble remains.
#include "../detail/schedules.hpp"

namespace perflow::parallel::detail {

PipelinePlan plan_zb_h2(const PipelineSpec& spec, const CostTable& /*costs*/) {
  return plan_zb_handcrafted(spec, 2);  // the shared loop is in zb_h1.cpp
}

}  // namespace perflow::parallel::detail
