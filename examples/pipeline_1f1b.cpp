// A PerFlow workflow in C++: build a 1F1B pipeline, simulate it, look at the numbers,
// draw the timeline. This is the README's "C++ API" example, compiled in every build.
// Run: build/release/examples/pipeline_1f1b [out.svg]
#include <cstdio>
#include <exception>

#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/visualizer/timeline.hpp"

int main(int argc, char** argv) {
  using namespace perflow;
  try {
    // 4 pipeline stages, 8 microbatches; per-microbatch costs of one stage (H100-like).
    parallel::PipelineSpec spec;
    spec.schedule = "1f1b";
    spec.stages = 4;
    spec.microbatches = 8;
    parallel::CostTable costs(parallel::TaskCosts{.forward = 1315 * kNsPerUs,
                                                  .backward = 2733 * kNsPerUs,
                                                  .weight = 2650 * kNsPerUs,
                                                  .activation = 1.0});
    EventGraph graph = parallel::build_schedule(spec, costs);         // plan + build + freeze
    simulator::SimulationResult result = simulator::simulate(graph);  // trace + metrics

    std::printf("makespan %s, bubble ratio %.2f%%\n",
                format_duration(result.metrics.makespan).c_str(),
                result.metrics.bubble_ratio * 100);
    for (const auto& d : result.metrics.devices) {
      std::printf("  device %u: busy %s, peak memory %.0f\n", d.device.value,
                  format_duration(d.busy).c_str(), d.peak_memory);
    }

    const char* out = argc > 1 ? argv[1] : "pipeline_1f1b.svg";
    visualizer::TimelineOptions timeline;
    timeline.title = "1F1B, 4 stages x 8 microbatches";
    visualizer::write_timeline_svg(out, graph, result.trace, result.metrics, timeline);
    std::printf("timeline written to %s\n", out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipeline_1f1b: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
