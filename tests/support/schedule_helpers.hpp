#pragma once

// Helpers shared by the schedule and simulator tests.

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/parallel/data_parallel.hpp"
#include "perflow/parallel/pipeline.hpp"
#include "perflow/simulator/simulate.hpp"

namespace perflow::testing {

/// A pipeline of `schedule` with its sizes, everything else at its default.
inline parallel::PipelineSpec pipeline_spec(std::string schedule, std::uint32_t stages,
                                            std::uint32_t microbatches, std::uint32_t chunks = 1) {
  parallel::PipelineSpec spec;
  spec.schedule = std::move(schedule);
  spec.stages = stages;
  spec.microbatches = microbatches;
  spec.chunks = chunks;
  return spec;
}

/// The bucketed data parallelism worked by hand in
/// DataParallel.BucketsAreReducedAsTheBackwardProducesThem (and, over two iterations,
/// Iterations.GatheredParametersAreTheStepBefores): 2 ranks at 1 GB/s, 4000 gradient bytes in
/// buckets of 1500, 2000 parameter bytes, a 500 ns step.
inline parallel::DataParallelSpec hand_worked_buckets() {
  parallel::DataParallelSpec dp;
  dp.degree = 2;
  dp.bandwidth = 1e9;
  dp.bucket_bytes = {1500};
  dp.gradient_bytes = {4000};
  dp.parameter_bytes = {2000};
  dp.optimizer = {500};
  return dp;
}

/// A device's executed task labels joined by spaces, as the fixtures write orders.
inline std::string order_string(const EventGraph& graph, const Trace& trace, std::uint32_t d) {
  std::string out;
  for (const TaskId t : trace.events(DeviceId{d})) {
    if (!out.empty()) out += ' ';
    out += graph.label(t);
  }
  return out;
}

/// A built schedule and its simulation, as the schedule tests use them.
struct Simulated {
  EventGraph graph;
  simulator::SimulationResult result;

  [[nodiscard]] const simulator::Metrics& metrics() const { return result.metrics; }
  [[nodiscard]] std::string order(std::uint32_t d) const {
    return order_string(graph, result.trace, d);
  }
  [[nodiscard]] TimeNs makespan() const { return result.metrics.makespan; }
  [[nodiscard]] double peak(std::uint32_t d) const { return result.metrics.devices[d].peak_memory; }
};

}  // namespace perflow::testing
