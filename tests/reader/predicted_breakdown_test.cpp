// The predicted step in the measured breakdown's terms (compare-measured's part-for-part
// table): hand-worked 1F1B values, and parts that add up over a cut window.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "perflow/reader/compare_measured.hpp"
#include "perflow/study/config.hpp"

namespace perflow::reader {
namespace {

nlohmann::json two_stage_config() {
  return {
      {"pipeline", {{"schedule", "1f1b"}, {"stages", 2}, {"microbatches", 2}}},
      {"costs",
       {{"forward", "1ms"}, {"backward", "2ms"}, {"weight", "0ms"}, {"launch_overhead", "0.5ms"}}}};
}

TEST(PredictedBreakdown, SplitsTheLaunchOverheadFromTheKernels) {
  // F takes 1.5ms and BW 2.5ms with the overhead. Device 1: F0 1.5-3, BW0 3-5.5, F1 5.5-7,
  // BW1 7-9.5; device 0: F0 0-1.5, F1 1.5-3, BW0 5.5-8, BW1 9.5-12. Each device runs 6ms of
  // kernels and 4 x 0.5ms of launch gaps in a 12ms step, idle the other 4ms.
  const study::Config config = study::parse_config(two_stage_config(), "c.json");
  const EventGraph graph = study::build_graph(config);
  const simulator::SimulationResult run = study::simulate(config, graph);
  ASSERT_EQ(run.metrics.makespan, 12'000'000);
  const std::vector<StepBreakdown> parts = predicted_breakdown(config, graph, run);
  ASSERT_EQ(parts.size(), 2u);
  for (const StepBreakdown& b : parts) {
    SCOPED_TRACE(b.stage);
    EXPECT_EQ(b.window, 12'000'000);
    EXPECT_EQ(b.task_compute, 6'000'000);
    EXPECT_EQ(b.idle_in_tasks, 2'000'000);
    EXPECT_EQ(b.other_compute, 0);
    EXPECT_EQ(b.communication, 0);
    EXPECT_EQ(b.host_gaps, 4'000'000);
  }
  EXPECT_EQ(parts[0].stage, 0u);
  EXPECT_EQ(parts[1].stage, 1u);
}

TEST(PredictedBreakdown, PartsAddUpOverTheLastIterationsPeriod) {
  nlohmann::json document = two_stage_config();
  document["simulation"] = {{"iterations", 3}, {"optimizer_sync", false}};
  document["parallelism"] = {{"data_parallel", 2}};
  document["costs"]["gradient_bytes"] = 10'000'000;
  document["network"] = {{"data_parallel", {{"latency", "0.1ms"}, {"bandwidth", "10GB/s"}}}};
  const study::Config config = study::parse_config(document, "c.json");
  const EventGraph graph = study::build_graph(config);
  const simulator::SimulationResult run = study::simulate(config, graph);
  const std::vector<TimeNs>& finish = run.metrics.iteration_finish;
  ASSERT_EQ(finish.size(), 3u);
  const std::vector<StepBreakdown> parts = predicted_breakdown(config, graph, run);
  ASSERT_EQ(parts.size(), 2u);
  for (const StepBreakdown& b : parts) {
    SCOPED_TRACE(b.stage);
    EXPECT_EQ(b.window, finish[2] - finish[1]);
    EXPECT_EQ(b.task_compute + b.idle_in_tasks + b.other_compute + b.communication + b.host_gaps,
              b.window);
    EXPECT_GE(b.host_gaps, 0);
    // The gradient all-reduce runs on its own lane: some of it is not under compute.
    EXPECT_GT(b.communication, 0);
    EXPECT_GT(b.task_compute, 0);
  }
}

}  // namespace
}  // namespace perflow::reader
