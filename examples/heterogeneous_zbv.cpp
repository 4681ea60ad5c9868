// The heterogeneous workflow: a ZBV pipeline whose stages 0-3 run on H100s and 4-7 on
// A100s, composed from two graphs with the trace operators, simulated on a two-node
// network, checked against the same schedule built directly with per-stage costs, and
// drawn. The same run through the CLI: perflow simulate examples/heterogeneous_zbv.json
// Run: build/release/examples/heterogeneous_zbv [out.svg]
#include <cstdio>
#include <exception>
#include <vector>

#include "perflow/core/units.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/trace_op/operators.hpp"
#include "perflow/visualizer/timeline.hpp"

int main(int argc, char** argv) {
  using namespace perflow;
  try {
    // 1. What one pipeline stage (per chunk) costs on each GPU type; 1.5 GB per activation.
    const parallel::TaskCosts h100{.forward = 1315 * kNsPerUs,
                                   .backward = 2733 * kNsPerUs,
                                   .weight = 2650 * kNsPerUs,
                                   .activation = 1.5e9};
    const parallel::TaskCosts a100{.forward = 2743 * kNsPerUs,
                                   .backward = 4563 * kNsPerUs,
                                   .weight = 4324 * kNsPerUs,
                                   .activation = 1.5e9};

    // 2. The same ZBV schedule built twice, once with each GPU's costs.
    parallel::PipelineSpec zbv;
    zbv.schedule = "zbv";
    zbv.stages = 8;
    zbv.microbatches = 10;
    zbv.chunks = 2;
    const EventGraph on_h100 = parallel::build_schedule(zbv, parallel::CostTable(h100));
    const EventGraph on_a100 = parallel::build_schedule(zbv, parallel::CostTable(a100));

    // 3. Keep stages 0-3 of the H100 graph and 4-7 of the A100 graph and merge them: the
    //    dependences between stage 3 and 4 (both directions of the V) are reconnected.
    const std::vector<StageId> first{StageId{0}, StageId{1}, StageId{2}, StageId{3}};
    const std::vector<StageId> last{StageId{4}, StageId{5}, StageId{6}, StageId{7}};
    const std::vector<trace_op::GraphPart> parts{trace_op::filter(on_h100, first),
                                                 trace_op::filter(on_a100, last)};
    const EventGraph mixed = trace_op::merge(parts);

    // 4. Two nodes of four GPUs: NVLink inside a node, 25 GB/s between; 64 MB cross each
    //    stage boundary per microbatch.
    simulator::SimulationOptions network;
    network.devices_per_node = 4;
    network.intra_node = simulator::Link{2 * kNsPerUs, 300e9};
    network.inter_node = simulator::Link{5 * kNsPerUs, 25e9};
    network.boundary_bytes.assign(zbv.stages, 64e6);
    const simulator::SimulationResult result = simulator::simulate(mixed, network);

    // 5. Check: the merged graph behaves exactly as ZBV built with per-stage costs.
    parallel::CostTable per_stage(h100);
    for (std::uint32_t s = 4; s < 8; ++s) {
      for (std::uint32_t c = 0; c < zbv.chunks; ++c) per_stage.set(StageId{s}, c, a100);
    }
    const TimeNs direct =
        simulator::simulate(parallel::build_schedule(zbv, per_stage), network).metrics.makespan;

    std::printf("makespan %s, bubble ratio %.2f%%\n",
                format_duration(result.metrics.makespan).c_str(),
                result.metrics.bubble_ratio * 100);
    for (const auto& d : result.metrics.devices) {
      std::printf("  device %u (%s): busy %s, peak activations %s\n", d.device.value,
                  d.device.value < 4 ? "H100" : "A100", format_duration(d.busy).c_str(),
                  format_memory(d.peak_memory).c_str());
    }
    std::printf("merged H100 + A100 graphs vs per-stage costs built directly: %s vs %s: %s\n",
                format_duration(result.metrics.makespan).c_str(), format_duration(direct).c_str(),
                result.metrics.makespan == direct ? "equal" : "DIFFERENT");
    if (result.metrics.makespan != direct) return 1;

    // 6. Draw it.
    visualizer::TimelineOptions timeline;
    timeline.title = "ZBV on 4 H100s + 4 A100s";
    timeline.subtitle = "stages 0-3 H100, 4-7 A100; 8 stages x 10 microbatches x 2 chunks";
    timeline.device_labels = {"H100", "H100", "H100", "H100", "A100", "A100", "A100", "A100"};
    const char* out = argc > 1 ? argv[1] : "heterogeneous_zbv.svg";
    visualizer::write_timeline_svg(out, mixed, result.trace, result.metrics, timeline);
    std::printf("timeline written to %s\n", out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heterogeneous_zbv: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
