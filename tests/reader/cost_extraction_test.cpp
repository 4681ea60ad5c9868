// extract_costs: medians over microbatches and steady iterations, busy time as a union of
// compute intervals, the B-versus-W refusal, stage and chunk mapping, communication costs,
// errors; a real DDP fixture checked against values computed independently; and the round
// trip simulate -> Kineto JSON -> read_profile -> costs, which must give back the exact costs.
#include "perflow/reader/cost_extraction.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/reader/kineto_writer.hpp"
#include "perflow/reader/measured_timeline.hpp"
#include "perflow/reader/profile_reader.hpp"
#include "perflow/simulator/simulate.hpp"
#include "trace_builder.hpp"

namespace perflow::reader {
namespace {

using test::TraceBuilder;
using K = MarkerKind;

const MarkerClassifier& torch() {
  static const MarkerClassifier kClassifier = MarkerClassifier::preset("torch-pipelining");
  return kClassifier;
}

ExtractedCosts extract_one(const KernelTrace& trace, const MarkerClassifier& classifier,
                           const ExtractionOptions& options = {}) {
  return extract_costs(std::span<const KernelTrace>(&trace, 1), classifier, options);
}

bool has_note(const ExtractedCosts& costs, const std::string& note) {
  return std::find(costs.notes.begin(), costs.notes.end(), note) != costs.notes.end();
}

std::string error_of(std::span<const KernelTrace> traces, const MarkerClassifier& classifier,
                     const ExtractionOptions& options = {}) {
  try {
    (void)extract_costs(traces, classifier, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(CostExtraction, LowerMedianOverMicrobatchesAndSteadyIterations) {
  TraceBuilder b("r.json", 0);
  // F durations per (iteration, microbatch); iteration 0 (ProfilerStep#10) is warm-up.
  const TimeNs durations[3][3] = {{900, 900, 900}, {100, 300, 200}, {150, 250, 50}};
  for (int k = 0; k < 3; ++k) {
    const TimeNs step = 1000 * k;
    b.range("ProfilerStep#" + std::to_string(10 + k), 1, step, step + 999);
    for (int j = 0; j < 3; ++j) {
      const TimeNs at = step + 100 * j;
      b.range("PP:0F" + std::to_string(j), 1, at + 10, at + 50);
      const TimeNs gpu = 10000 * k + 1000 * j;
      b.kernel(1, at + 20, gpu, gpu + durations[k][j]);
    }
  }
  const ExtractedCosts costs = extract_one(b.finish(), torch());
  ASSERT_EQ(costs.stages.size(), 1u);
  // Steady: 100 300 200 150 250 50 -> sorted 50 100 150 200 250 300 -> lower median 150.
  EXPECT_EQ(costs.stages[0].of(K::Forward), 150);
  EXPECT_EQ(costs.stages[0].samples[0], 6u);
  EXPECT_EQ(costs.tasks.size(), 9u);
  EXPECT_EQ(std::count_if(costs.tasks.begin(), costs.tasks.end(),
                          [](const MeasuredTask& t) { return t.warmup && t.iteration == 10; }),
            3);
  EXPECT_TRUE(costs.profiles[0].warmup_dropped);
  EXPECT_EQ(costs.profiles[0].iterations, (std::vector<std::int64_t>{10, 11, 12}));
  EXPECT_EQ(costs.microbatches, 3u);
  EXPECT_EQ(costs.stage_count, 1u);
  EXPECT_FALSE(costs.split_backward);
}

TEST(CostExtraction, TwoIterationsAreBothUsed) {
  TraceBuilder b;
  b.range("ProfilerStep#1", 1, 0, 99);
  b.range("ProfilerStep#2", 1, 100, 199);
  b.range("PP:0F0", 1, 10, 20);
  b.kernel(1, 15, 1000, 1100);
  b.range("PP:0F0", 1, 110, 120);
  b.kernel(1, 115, 2000, 2300);
  const ExtractedCosts costs = extract_one(b.finish(), torch());
  EXPECT_FALSE(costs.profiles[0].warmup_dropped);
  EXPECT_EQ(costs.stages[0].of(K::Forward), 100);  // lower median of {100, 300}
  EXPECT_EQ(costs.stages[0].samples[0], 2u);
  EXPECT_EQ(costs.microbatches, 1u);
}

TEST(CostExtraction, BusyTimeIsTheUnionOfComputeOps) {
  TraceBuilder b;
  b.range("PP:0F0", 1, 0, 100);
  b.kernel(1, 10, 1000, 1100, "gemm", 7);
  b.kernel(2, 20, 1050, 1200, "gemm", 8);  // overlaps on another stream, another thread
  b.kernel(1, 30, 1300, 1400, "gemm", 7);
  b.kernel(1, 40, 1000, 5000, "ncclDevKernel_AllReduce_Sum_f32(ncclDevComm*)", 20,
           GpuOpKind::Collective);
  b.kernel(1, 50, 1390, 1450, "Memcpy DtoD", 7, GpuOpKind::Memcpy);
  b.kernel(1, 500, 6000, 6100);  // launched after the range
  const ExtractedCosts costs = extract_one(b.finish(), torch());
  ASSERT_EQ(costs.tasks.size(), 1u);
  const MeasuredTask& task = costs.tasks[0];
  EXPECT_EQ(task.busy, 200 + 150);  // [1000, 1200] and [1300, 1450]
  EXPECT_EQ(task.ops, 4u);
  EXPECT_EQ(task.first_start, 1000);
  EXPECT_EQ(task.last_end, 1450);
  EXPECT_EQ(costs.profiles[0].communication_ops, 1u);
  EXPECT_EQ(costs.profiles[0].compute_ops_outside, 1u);
  ASSERT_EQ(costs.communication.size(), 1u);
  EXPECT_EQ(costs.communication[0].name, "ncclDevKernel_AllReduce_Sum_f32");
  EXPECT_EQ(costs.communication[0].median, 4000);
  EXPECT_EQ(costs.communication[0].count, 1u);
  EXPECT_EQ(costs.communication[0].method, "one rank");
}

TEST(CostExtraction, RangesOfOneMicrobatchAreOneTask) {
  TraceBuilder b("zb.json", 3);
  b.range("F0.0.0", 1, 0, 10);  // two sequence splits of microbatch 0
  b.kernel(1, 5, 100, 150);
  b.range("F0.0.1", 1, 20, 30);
  b.kernel(1, 25, 160, 200);
  b.range("F1.0.0", 1, 40, 50);
  b.kernel(1, 45, 300, 340);
  const ExtractedCosts costs = extract_one(b.finish(), MarkerClassifier::preset("zb-nvtx"));
  ASSERT_EQ(costs.tasks.size(), 2u);
  EXPECT_EQ(costs.tasks[0].ranges, 2u);
  EXPECT_EQ(costs.tasks[0].busy, 90);
  EXPECT_EQ(costs.tasks[1].busy, 40);
  EXPECT_EQ(costs.stages[0].stage, 3u);  // no stage in the marker: the rank
  EXPECT_EQ(costs.stages[0].of(K::Forward), 40);
  EXPECT_EQ(costs.stage_count, 4u);
  EXPECT_EQ(costs.microbatches, 2u);
  EXPECT_TRUE(has_note(costs, "stage 3: no backward was measured"));
}

TEST(CostExtraction, FullBackwardIsNotSplitIntoBAndW) {
  TraceBuilder b;
  b.range("## forward ##", 1, 0, 10);
  b.kernel(1, 5, 100, 200);
  b.range("## backward ##", 1, 20, 30);
  b.kernel(2, 25, 300, 550);  // autograd thread
  const ExtractedCosts costs = extract_one(b.finish(), MarkerClassifier::preset("ddp"));
  ASSERT_EQ(costs.stages.size(), 1u);
  EXPECT_EQ(costs.stages[0].of(K::Forward), 100);
  EXPECT_EQ(costs.stages[0].of(K::FullBackward), 250);
  EXPECT_EQ(costs.stages[0].of(K::Backward), std::nullopt);
  EXPECT_EQ(costs.stages[0].of(K::Weight), std::nullopt);
  EXPECT_FALSE(costs.split_backward);
  EXPECT_TRUE(has_note(costs,
                       "stage 0: only full backward (B + W in one range) was measured: the "
                       "profile cannot tell B from W, so no ratio is assumed"));
}

TEST(CostExtraction, SeparateBAndWWinOverAFullBackward) {
  TraceBuilder b;
  b.range("PP:0F0", 1, 0, 10);
  b.kernel(1, 5, 100, 110);
  b.range("PP:0I0", 1, 20, 30);
  b.kernel(2, 25, 200, 220);
  b.range("PP:0W0", 1, 40, 50);
  b.kernel(2, 45, 300, 330);
  b.range("PP:0B1", 1, 60, 70);
  b.kernel(2, 65, 400, 450);
  const ExtractedCosts costs = extract_one(b.finish(), torch());
  EXPECT_EQ(costs.stages[0].of(K::Backward), 20);
  EXPECT_EQ(costs.stages[0].of(K::Weight), 30);
  EXPECT_EQ(costs.stages[0].of(K::FullBackward), 50);
  EXPECT_TRUE(costs.split_backward);
  EXPECT_TRUE(has_note(costs,
                       "stage 0: full-backward tasks not used: B and W come from the separate B "
                       "and W tasks (1 in all)"));
}

TEST(CostExtraction, StagesComeFromMarkersRanksOrTheUsersMap) {
  // One marker stage per profile: the marker decides, whatever the rank.
  std::vector<KernelTrace> traces;
  for (const auto& [rank, name] : {std::pair{0, "PP:1F0"}, std::pair{1, "PP:0F0"}}) {
    TraceBuilder b("rank" + std::to_string(rank) + ".json", rank);
    b.range(name, 1, 0, 10);
    b.kernel(1, 5, 100, 100 + 10 * (rank + 1));
    traces.push_back(b.finish());
  }
  ExtractedCosts costs = extract_costs(traces, torch());
  EXPECT_EQ(costs.profiles[0].stage, 1u);
  EXPECT_EQ(costs.profiles[1].stage, 0u);
  EXPECT_EQ(costs.stages[0].of(K::Forward), 20);  // stage 0 is rank 1's
  EXPECT_EQ(costs.stage_count, 2u);

  // Several marker stages per profile (interleaved): the rank is the stage, and the marker
  // stages become chunks in order.
  traces.clear();
  for (const int rank : {0, 1}) {
    TraceBuilder b("r" + std::to_string(rank) + ".json", rank);
    b.range("PP:" + std::to_string(rank) + "F0", 1, 0, 10);
    b.kernel(1, 5, 100, 110 + rank);
    b.range("PP:" + std::to_string(rank + 2) + "F0", 1, 20, 30);
    b.kernel(1, 25, 200, 220 + rank);
    traces.push_back(b.finish());
  }
  costs = extract_costs(traces, torch());
  ASSERT_EQ(costs.stages.size(), 4u);
  EXPECT_EQ(costs.chunk_count, 2u);
  const std::vector<std::tuple<std::uint32_t, std::uint32_t, TimeNs>> expected = {
      {0, 0, 10}, {0, 1, 20}, {1, 0, 11}, {1, 1, 21}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(
        std::tuple(costs.stages[i].stage, costs.stages[i].chunk, *costs.stages[i].of(K::Forward)),
        expected[i]);
  }
  EXPECT_EQ(costs.profiles[1].marker_stages, (std::vector<std::uint32_t>{1, 3}));
  EXPECT_TRUE(has_note(costs,
                       "each profile's stage is its rank (one rank = one pipeline stage); for "
                       "data-parallel replicas of one stage, say so with --rank-stage RANK=STAGE"));
  EXPECT_TRUE(has_note(costs,
                       "stages 0 chunk 0, 0 chunk 1, 1 chunk 0, 1 chunk 1: no backward "
                       "was measured"));

  // --rank-stage overrides both.
  ExtractionOptions options;
  options.rank_stage = {{0, 1}, {1, 0}};
  costs = extract_costs(traces, torch(), options);
  EXPECT_EQ(costs.profiles[0].stage, 1u);
  EXPECT_EQ(costs.profiles[1].stage, 0u);
  options.rank_stage = {{0, 1}};
  EXPECT_EQ(error_of(traces, torch(), options),
            "r1.json: rank 1 has no --rank-stage (give one for every profile)");
}

TEST(CostExtraction, ProfilesOfOneStageArePooledAndRankFallsBackToPosition) {
  std::vector<KernelTrace> traces;
  for (const TimeNs duration : {100, 300, 200}) {
    TraceBuilder b("dp" + std::to_string(duration) + ".json");  // no rank in the file
    b.range("## forward ##", 1, 0, 10);
    b.kernel(1, 5, 100, 100 + duration);
    traces.push_back(b.finish());
  }
  ExtractionOptions options;
  options.rank_stage = {{0, 0}, {1, 0}, {2, 0}};
  const ExtractedCosts costs = extract_costs(traces, MarkerClassifier::preset("ddp"), options);
  EXPECT_EQ(costs.stages[0].of(K::Forward), 200);
  EXPECT_EQ(costs.stages[0].samples[0], 3u);
  EXPECT_TRUE(costs.profiles[2].rank_from_position);
  EXPECT_EQ(costs.profiles[2].rank, 2);
  EXPECT_TRUE(has_note(costs, "stage 0: 3 profiles pooled (dp100.json, dp300.json, dp200.json)"));
  EXPECT_TRUE(has_note(costs,
                       "dp300.json: the profile does not give its rank: rank 1 by its position "
                       "on the command line"));
}

TEST(CostExtraction, CommunicationTakesTheMinimumOverRanks) {
  const auto rank_with = [](const std::string& path, std::vector<TimeNs> durations) {
    TraceBuilder b(path, static_cast<std::int64_t>(path[1] - '0'));
    b.range("## forward ##", 1, 0, 10);
    b.kernel(1, 5, 100, 200);
    TimeNs at = 1000;
    for (const TimeNs d : durations) {
      b.kernel(1, 50, at, at + d, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", 20,
               GpuOpKind::Collective);
      at += 1000;
    }
    return b.finish();
  };
  std::vector<KernelTrace> traces = {rank_with("r0.json", {10, 50}),
                                     rank_with("r1.json", {30, 20})};
  ExtractionOptions options;
  options.rank_stage = {{0, 0}, {1, 0}};
  ExtractedCosts costs = extract_costs(traces, MarkerClassifier::preset("ddp"), options);
  ASSERT_EQ(costs.communication.size(), 1u);
  EXPECT_EQ(costs.communication[0].name, "ncclKernel_AllReduce_RING_LL_Sum_float");
  EXPECT_EQ(costs.communication[0].median, 10);  // per call: min(10, 30), min(50, 20)
  EXPECT_EQ(costs.communication[0].method, "min over ranks per call");
  EXPECT_EQ(costs.communication[0].ranks, 2u);
  EXPECT_EQ(costs.communication[0].count, 2u);

  traces[1] = rank_with("r1.json", {5, 100, 100});  // counts differ: min of medians
  costs = extract_costs(traces, MarkerClassifier::preset("ddp"), options);
  EXPECT_EQ(costs.communication[0].median, 10);  // min(lower median {10, 50}, median 100)
  EXPECT_EQ(costs.communication[0].method, "min of rank medians");
  EXPECT_EQ(costs.communication[0].count, 3u);
}

TEST(CostExtraction, ErrorsNameTheFiles) {
  TraceBuilder b("a.json");
  b.range("ProfilerStep#1", 1, 0, 100);
  b.range("foo", 1, 10, 20);
  b.range("foo", 1, 30, 40);
  const KernelTrace trace = b.finish();
  EXPECT_EQ(error_of(std::span<const KernelTrace>(&trace, 1), MarkerClassifier::preset("ddp")),
            "a.json: no range matched the 'ddp' markers (PyTorch DDP examples: ## forward ## / "
            "## backward ## (full backward)); most frequent range names: 'foo' (2), "
            "'ProfilerStep#1' (1)");
  EXPECT_EQ(
      error_of(std::span<const KernelTrace>(&trace, 1), MarkerClassifier::pattern("^(?<kind>W)$")),
      "a.json: no range matched the pattern '^(?<kind>W)$'; most frequent range names: 'foo' (2), "
      "'ProfilerStep#1' (1)");

  TraceBuilder idle("idle.json");
  idle.range("## forward ##", 1, 0, 10);
  const KernelTrace idle_trace = idle.finish();
  EXPECT_EQ(error_of(std::span<const KernelTrace>(&idle_trace, 1), MarkerClassifier::preset("ddp")),
            "idle.json: ranges matched the 'ddp' markers, but none owns GPU compute work (no "
            "kernel was launched inside them)");
}

// hta_a100_ddp2_nccl_data_rank0: values computed with python3 on the file (gzip + json with
// Decimal; ns = baseTimeNanoseconds + round-half-up(ts * 1000); launches are cuda_runtime /
// cuda_driver events with args.correlation; an op belongs to a range when its launch's ts
// lies in [ts, ts + dur]; compute ops are kernels whose name (before '(') has no nccl/rccl,
// gpu_memcpy and gpu_memset; busy = union of their intervals), not with this code.
//   ## forward ##  ProfilerStep#4: 450 compute ops, busy 12896854 (warm-up)
//                  #5: 12878104, #6: 12878730            -> lower median 12878104
//   ## backward ## #4: 792 compute ops, busy 25801995 (warm-up)
//                  #5: 25726744, #6: 26048640            -> lower median 25726744
//   3774 ops, 21 NCCL kernels, 27 compute ops in no marked range, every op has a launch;
//   ncclKernel_AllReduce_RING_LL_Sum_float: 15 calls, lower median 2520607 ns;
//   ncclKernel_Broadcast_RING_LL_Sum_int8_t: 6 calls, lower median 7904 ns.
TEST(CostExtraction, RealDdpProfile) {
  const KernelTrace trace = read_profile(std::filesystem::path(PERFLOW_PROFILE_FIXTURES) /
                                         "kineto/hta_a100_ddp2_nccl_data_rank0.json.gz");
  const ExtractedCosts costs = extract_one(trace, MarkerClassifier::preset("ddp"));
  const ProfileSummary& p = costs.profiles[0];
  EXPECT_EQ(p.matched, (std::array<std::size_t, 4>{3, 0, 0, 3}));
  EXPECT_EQ(p.rank, 0);
  EXPECT_EQ(p.ops, 3774u);
  EXPECT_EQ(p.communication_ops, 21u);
  EXPECT_EQ(p.compute_ops_outside, 27u);
  EXPECT_EQ(p.ops_without_launch, 0u);
  EXPECT_EQ(p.empty_ranges, 0u);
  EXPECT_EQ(p.method, AttributionMethod::Launch);
  EXPECT_EQ(p.iterations, (std::vector<std::int64_t>{4, 5, 6}));
  EXPECT_TRUE(p.warmup_dropped);
  ASSERT_EQ(costs.tasks.size(), 6u);
  const std::vector<std::tuple<K, std::int64_t, std::size_t, TimeNs>> tasks = {
      {K::Forward, 4, 450, 12896854}, {K::FullBackward, 4, 792, 25801995},
      {K::Forward, 5, 450, 12878104}, {K::FullBackward, 5, 792, 25726744},
      {K::Forward, 6, 450, 12878730}, {K::FullBackward, 6, 792, 26048640}};
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const MeasuredTask& t = costs.tasks[i];
    EXPECT_EQ(std::tuple(t.kind, t.iteration, t.ops, t.busy), tasks[i]) << i;
  }
  ASSERT_EQ(costs.stages.size(), 1u);
  EXPECT_EQ(costs.stages[0].of(K::Forward), 12878104);
  EXPECT_EQ(costs.stages[0].of(K::FullBackward), 25726744);
  EXPECT_EQ(costs.stages[0].samples, (std::array<std::size_t, 4>{2, 0, 0, 2}));
  ASSERT_EQ(costs.communication.size(), 2u);
  EXPECT_EQ(std::tuple(costs.communication[0].name, costs.communication[0].count,
                       costs.communication[0].median),
            std::tuple(std::string("ncclKernel_AllReduce_RING_LL_Sum_float"), std::size_t{15},
                       TimeNs{2520607}));
  EXPECT_EQ(std::tuple(costs.communication[1].name, costs.communication[1].count,
                       costs.communication[1].median),
            std::tuple(std::string("ncclKernel_Broadcast_RING_LL_Sum_int8_t"), std::size_t{6},
                       TimeNs{7904}));
}

// ---------------------------------------------------------------------------------------
// Round trip: simulate, write every device as a Kineto trace with torch pipelining markers,
// read them back, extract: the costs that produced the run come back exactly.

struct RoundTrip {
  EventGraph graph;
  simulator::SimulationResult result;
  ExtractedCosts costs;
};

RoundTrip round_trip(const parallel::PipelineSpec& spec, const parallel::CostTable& table,
                     const std::string& name) {
  RoundTrip out;
  out.graph = parallel::build_schedule(spec, table);
  out.result = simulator::simulate(out.graph);
  const auto directory = std::filesystem::temp_directory_path() /
                         ("perflow_roundtrip_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  write_kineto_traces(directory, out.graph, out.result.trace);
  std::vector<KernelTrace> traces;
  for (std::uint32_t d = 0; d < spec.stages; ++d) {
    traces.push_back(read_profile(directory / ("rank-" + std::to_string(d) + ".json")));
    EXPECT_EQ(traces.back().format, "kineto");
  }
  std::filesystem::remove_all(directory);
  out.costs = extract_costs(traces, torch());
  return out;
}

// Every measured task lies exactly where the simulation put it.
void expect_same_timeline(const RoundTrip& run) {
  const MeasuredTimeline measured = measured_timeline(run.costs);
  ASSERT_EQ(measured.graph.task_count(), run.graph.task_count());
  std::map<std::tuple<std::uint32_t, TaskKind, std::uint32_t, std::uint32_t>,
           std::pair<TimeNs, TimeNs>>
      simulated;
  for (std::uint32_t t = 0; t < run.graph.task_count(); ++t) {
    const TaskId id{t};
    simulated[{run.graph.device(id).value, run.graph.kind(id), run.graph.microbatch(id),
               run.graph.chunk(id)}] = {run.result.trace.start_of(id),
                                        run.result.trace.finish_of(id)};
  }
  for (std::uint32_t t = 0; t < measured.graph.task_count(); ++t) {
    const TaskId id{t};
    const auto key = std::tuple(measured.graph.device(id).value, measured.graph.kind(id),
                                measured.graph.microbatch(id), measured.graph.chunk(id));
    ASSERT_TRUE(simulated.contains(key)) << measured.graph.label(id);
    EXPECT_EQ(std::pair(measured.trace.start_of(id), measured.trace.finish_of(id)),
              simulated.at(key))
        << measured.graph.label(id);
  }
}

TEST(CostExtraction, RoundTripThroughKinetoGivesTheExactCosts) {
  parallel::PipelineSpec spec;
  spec.schedule = "1f1b";
  spec.stages = 4;
  spec.microbatches = 8;
  spec.split_backward = true;
  parallel::CostTable table(parallel::TaskCosts{.forward = 1, .backward = 1, .weight = 1});
  for (std::uint32_t s = 0; s < spec.stages; ++s) {
    table.set(StageId{s}, 0,
              parallel::TaskCosts{.forward = 1'315'123 + 1'001 * s,
                                  .backward = 2'733'457 - 7'919 * s,
                                  .weight = 2'650'001 + 313 * s * s});
  }
  const RoundTrip run = round_trip(spec, table, "1f1b");
  const ExtractedCosts& costs = run.costs;
  EXPECT_EQ(costs.stage_count, 4u);
  EXPECT_EQ(costs.chunk_count, 1u);
  EXPECT_EQ(costs.microbatches, 8u);
  EXPECT_TRUE(costs.split_backward);
  ASSERT_EQ(costs.stages.size(), 4u);
  for (std::uint32_t s = 0; s < spec.stages; ++s) {
    const StageCost& cost = costs.stages[s];
    const parallel::TaskCosts& truth = table.at(StageId{s}, 0);
    EXPECT_EQ(cost.stage, s);
    EXPECT_EQ(cost.of(K::Forward), truth.forward) << "stage " << s;
    EXPECT_EQ(cost.of(K::Backward), truth.backward) << "stage " << s;
    EXPECT_EQ(cost.of(K::Weight), truth.weight) << "stage " << s;
    EXPECT_EQ(cost.of(K::FullBackward), std::nullopt);
    EXPECT_EQ(cost.samples, (std::array<std::size_t, 4>{8, 8, 8, 0}));
    EXPECT_EQ(costs.profiles[s].stage, s);
    EXPECT_EQ(costs.profiles[s].rank, s);
    EXPECT_EQ(costs.profiles[s].matched, (std::array<std::size_t, 4>{8, 8, 8, 0}));
    EXPECT_EQ(costs.profiles[s].compute_ops_outside, 0u);
  }
  ASSERT_EQ(costs.communication.size(), 1u);
  EXPECT_EQ(costs.communication[0].name, "ncclDevKernel_SendRecv");
  EXPECT_EQ(costs.communication[0].count, 24u);
  EXPECT_EQ(costs.communication[0].median, 500);
  expect_same_timeline(run);
}

TEST(CostExtraction, RoundTripOfAnInterleavedPipelineGivesEveryChunksCosts) {
  parallel::PipelineSpec spec;
  spec.schedule = "interleaved-1f1b";
  spec.stages = 2;
  spec.chunks = 2;
  spec.microbatches = 4;
  spec.split_backward = true;
  parallel::CostTable table(parallel::TaskCosts{.forward = 1, .backward = 1, .weight = 1});
  for (std::uint32_t s = 0; s < spec.stages; ++s) {
    for (std::uint32_t c = 0; c < spec.chunks; ++c) {
      table.set(StageId{s}, c,
                parallel::TaskCosts{.forward = 700'001 + 10'007 * s + 3'331 * c,
                                    .backward = 1'400'003 + 999 * s + 77 * c,
                                    .weight = 650'017 + 13 * s + 5'003 * c});
    }
  }
  const RoundTrip run = round_trip(spec, table, "interleaved");
  const ExtractedCosts& costs = run.costs;
  EXPECT_EQ(costs.stage_count, 2u);
  EXPECT_EQ(costs.chunk_count, 2u);
  EXPECT_EQ(costs.microbatches, 4u);
  ASSERT_EQ(costs.stages.size(), 4u);
  for (const StageCost& cost : costs.stages) {
    const parallel::TaskCosts& truth = table.at(StageId{cost.stage}, cost.chunk);
    EXPECT_EQ(cost.of(K::Forward), truth.forward);
    EXPECT_EQ(cost.of(K::Backward), truth.backward);
    EXPECT_EQ(cost.of(K::Weight), truth.weight);
  }
  expect_same_timeline(run);
}

}  // namespace
}  // namespace perflow::reader

namespace perflow::reader {
namespace {

const MarkerClassifier& ddp() {
  static const MarkerClassifier kClassifier = MarkerClassifier::preset("ddp");
  return kClassifier;
}

// One F and one full backward on one rank; every number below is checked by hand.
KernelTrace step_to_break_down() {
  TraceBuilder b("r0.json", 0);
  b.range("## forward ##", 1, 3, 100);
  b.kernel(1, 4, 10, 20);
  b.kernel(1, 5, 40, 50);
  b.kernel(1, 1, 25, 30, "copy");  // launched before any range: other compute
  b.range("## backward ##", 1, 100, 200);
  b.kernel(1, 110, 120, 150);
  b.kernel(1, 120, 150, 170, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", 20,
           GpuOpKind::Collective);
  b.kernel(1, 130, 160, 180);
  return b.finish();
}

TEST(MeasuredBreakdown, PartitionsTheStepExactly) {
  const ExtractedCosts costs = extract_one(step_to_break_down(), ddp());
  const std::vector<StepBreakdown> parts = measured_breakdown(costs);
  ASSERT_EQ(parts.size(), 1u);
  const StepBreakdown& b = parts[0];
  EXPECT_EQ(b.stage, 0u);
  EXPECT_EQ(b.iteration, -1);
  EXPECT_EQ(b.window, 170);        // the first task op's start (10) to the last one's end (180)
  EXPECT_EQ(b.task_compute, 70);   // [10,20] [40,50] [120,150] [160,180]
  EXPECT_EQ(b.other_compute, 5);   // [25,30]
  EXPECT_EQ(b.communication, 10);  // [150,170] less the compute in [160,170]
  EXPECT_EQ(b.idle_in_tasks, 15);  // F's span [10,50] less 25 busy; BW's span has no gap
  EXPECT_EQ(b.host_gaps, 70);      // [50,120]
  EXPECT_EQ(b.task_compute + b.other_compute + b.communication + b.idle_in_tasks + b.host_gaps,
            b.window);
  // Launch overhead: per task, span less busy: F 40 - 20, BW 60 - 50; the lower median.
  ASSERT_TRUE(costs.launch_overhead.has_value());
  EXPECT_EQ(*costs.launch_overhead, 10);
}

TEST(MeasuredBreakdown, UsesTheMedianSteadyIteration) {
  TraceBuilder b("r0.json", 0);
  // Three steps; the first is warm-up. Steady steps last 50 and 30: the lower median is 30.
  const TimeNs lengths[3] = {500, 50, 30};
  for (int k = 0; k < 3; ++k) {
    const TimeNs at = 1000 * k;
    b.range(fmt::format("ProfilerStep#{}", k + 1), 1, at, at + 900);
    b.range("## forward ##", 1, at + 1, at + 5);
    b.kernel(1, at + 2, at + 10, at + 10 + lengths[k]);
  }
  const ExtractedCosts costs = extract_one(b.finish(), ddp());
  const std::vector<StepBreakdown> parts = measured_breakdown(costs);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].iteration, 3);
  EXPECT_EQ(parts[0].window, 30);
  EXPECT_EQ(parts[0].task_compute, 30);
}

TEST(CostExtraction, ActivationFromMemoryEventsInsideForwards) {
  TraceBuilder b("r0.json", 0);
  b.range("## forward ##", 1, 0, 100);
  b.kernel(1, 1, 10, 20);
  b.range("## forward ##", 1, 200, 300);
  b.kernel(1, 201, 210, 220);
  b.range("## backward ##", 1, 400, 500);
  b.kernel(1, 401, 410, 420);
  KernelTrace trace = b.finish();
  // Net 1000 - 300 in the first F, 900 in the second, a free in the backward, and one
  // allocation outside every range.
  trace.memory = {{10, 1000, 0}, {20, -300, 0}, {150, 5000, 0}, {210, 900, 0}, {450, -1600, 0}};
  const ExtractedCosts costs = extract_one(trace, ddp());
  ASSERT_EQ(costs.stages.size(), 1u);
  ASSERT_TRUE(costs.stages[0].activation.has_value());
  EXPECT_EQ(*costs.stages[0].activation, 700);  // the lower median of {700, 900}
  EXPECT_EQ(costs.profiles[0].memory_events, 5u);

  // Without memory events there is no activation, not 0.
  trace.memory.clear();
  EXPECT_FALSE(extract_one(trace, ddp()).stages[0].activation.has_value());
}

TEST(CostExtraction, CollectivesBecomeGradientAndTensorParallelBytesAndLinks) {
  TraceBuilder b("r0.json", 0);
  const auto comm = [&](std::uint64_t thread, TimeNs launch, TimeNs start, TimeNs duration,
                        std::int64_t bytes, std::uint32_t group) {
    b.kernel(thread, launch, start, start + duration,
             "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", 20, GpuOpKind::Collective);
    b.trace.ops.back().bytes = bytes;
    b.trace.ops.back().group_size = group;
  };
  // Two microbatches' F, each with two tensor-parallel all-reduces of 512 bytes over 4 ranks
  // taking 768 ns: 6 latency steps + 1.5 x 512 bytes / B, all taken as bandwidth time:
  // B = 1.5e9 x 512 / 768 = 1e9 bytes/s.
  for (int mb = 0; mb < 2; ++mb) {
    const TimeNs at = 10'000 * mb;
    b.range("## forward ##", 1, at, at + 1000);
    b.kernel(1, at + 1, at + 10, at + 100);
    comm(1, at + 2, at + 100, 768, 512, 4);
    comm(1, at + 3, at + 900, 768, 512, 4);
  }
  // The backward all-reduces gradients over 2 ranks: 2 a + S / B with a = 500 ns and
  // B = 1e9 bytes/s gives 2000 ns for 1000 bytes and 4000 ns for 3000 bytes.
  b.range("## backward ##", 1, 30'000, 40'000);
  b.kernel(1, 30'001, 30'010, 30'100);
  comm(1, 30'002, 31'000, 2000, 1000, 2);
  comm(1, 30'003, 34'000, 4000, 3000, 2);
  const ExtractedCosts costs = extract_one(b.finish(), ddp());
  const MeasuredCommunication& net = costs.network;
  ASSERT_TRUE(net.gradient_bytes.has_value());
  EXPECT_EQ(*net.gradient_bytes, 4000);
  EXPECT_EQ(net.data_parallel, 2u);
  ASSERT_TRUE(net.data_parallel_link.has_value());
  EXPECT_EQ(net.data_parallel_link->latency, 500);
  EXPECT_EQ(net.data_parallel_link->bandwidth, 1'000'000'000);
  EXPECT_EQ(net.data_parallel_link->samples, 2u);
  ASSERT_TRUE(net.tp_allreduce_bytes.has_value());
  EXPECT_EQ(*net.tp_allreduce_bytes, 512);
  EXPECT_EQ(net.tp_allreduces, 2u);
  EXPECT_EQ(net.tensor_parallel, 4u);
  ASSERT_TRUE(net.tensor_parallel_link.has_value());
  EXPECT_EQ(net.tensor_parallel_link->latency, 0);
  EXPECT_EQ(net.tensor_parallel_link->bandwidth, 1'000'000'000);
  EXPECT_FALSE(net.boundary_bytes.has_value());
  EXPECT_FALSE(net.p2p_link.has_value());
}

TEST(CostExtraction, CommunicationWithoutSizesGivesNoLinks) {
  const ExtractedCosts costs = extract_one(step_to_break_down(), ddp());
  EXPECT_FALSE(costs.network.gradient_bytes.has_value());
  EXPECT_FALSE(costs.network.data_parallel_link.has_value());
  EXPECT_TRUE(has_note(costs,
                       "1 communication kernel without message sizes in the profile: no link or "
                       "bytes measured"));
}

}  // namespace
}  // namespace perflow::reader
