// 1F1B on 4 stages x 8 microbatches: simulate it and check the closed form
// (m + p - 1)(F + B + W) of its makespan.
#include <cstdio>

#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

int main() {
  using namespace perflow;
  parallel::PipelineSpec spec;
  spec.schedule = "1f1b";
  spec.stages = 4;
  spec.microbatches = 8;
  const parallel::CostTable costs({.forward = 10, .backward = 20, .weight = 30});
  const EventGraph graph = parallel::build_schedule(spec, costs);
  const TimeNs makespan = simulator::simulate(graph).metrics.makespan;
  const TimeNs expected = (8 + 4 - 1) * (10 + 20 + 30);
  std::printf("makespan %lld ns (closed form %lld ns)\n", static_cast<long long>(makespan),
              static_cast<long long>(expected));
  return makespan == expected ? 0 : 1;
}
