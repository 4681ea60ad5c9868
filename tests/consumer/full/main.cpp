// Builds and simulates a small 1F1B pipeline through the installed package and checks the
// closed form (m + p - 1)(F + B + W); then draws it (visualizer: cairo) and lists the
// profile readers (reader: zlib, SQLite, simdjson), so every module links. Exits non-zero
// if anything is off.
#include <cstdio>

#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/reader/profile_reader.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/visualizer/timeline.hpp"

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
  const std::string svg = visualizer::render_timeline_svg(graph, result.trace, result.metrics, {});
  std::printf("timeline: %zu bytes of SVG; profile readers: %zu\n", svg.size(),
              reader::profile_readers().size());
  return result.metrics.makespan == expected && svg.find("<svg") != std::string::npos &&
                 !reader::profile_readers().empty()
             ? 0
             : 1;
}
