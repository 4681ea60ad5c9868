// Builds and simulates a small 1F1B pipeline through the installed package and checks the
// closed form (m + p - 1)(F + B + W); exits non-zero if it does not hold.
#include <cstdio>

#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"

int main() {
  using namespace perflow;
  parallel::PipelineSpec spec;
  spec.schedule = "1f1b";
  spec.stages = 4;
  spec.microbatches = 8;
  const auto graph = parallel::build_schedule(spec, parallel::CostTable({10, 20, 30, 1.0, 0.0}));
  const auto result = simulator::simulate(graph);
  const TimeNs expected = (8 + 4 - 1) * (10 + 20 + 30);
  std::printf("makespan %lld, expected %lld\n", static_cast<long long>(result.metrics.makespan),
              static_cast<long long>(expected));
  return result.metrics.makespan == expected ? 0 : 1;
}
