// The measured-to-predicted round trip: a config is simulated, its run written as Kineto
// traces (with launch overhead and transfers), read back and measured exactly as
// `perflow costs` does (reader::measure_profiles, measured_config), and the config that gives is
// simulated again: the step time and every device's busy and blocked time come back to the
// nanosecond.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "perflow/reader/kineto_writer.hpp"
#include "perflow/reader/measured_config.hpp"
#include "perflow/reader/measurement.hpp"
#include "perflow/simulator/communication.hpp"
#include "perflow/study/config.hpp"

namespace perflow::study {
namespace {

struct Run {
  Config config;
  EventGraph graph;
  simulator::SimulationResult result;
};

Run run(const nlohmann::json& document, const std::string& file) {
  Run out;
  out.config = parse_config(document, file);
  out.graph = build_graph(out.config);
  out.result = simulate(out.config, out.graph);
  return out;
}

// The same run, written, measured and turned into a config as `perflow costs` would.
struct RoundTrip {
  Run original;
  reader::MeasuredConfig measured;
  Run again;
};

RoundTrip round_trip(const nlohmann::json& document, const std::string& name,
                     const std::string& schedule) {
  RoundTrip out;
  out.original = run(document, name + ".json");
  const Config& config = out.original.config;
  const parallel::TaskCosts& uniform = config.costs.uniform();
  reader::KinetoWriteOptions write;
  write.launch_overhead = uniform.launch_overhead;
  const double bytes = config.simulation.boundary_bytes.at(0);
  write.transfer_bytes = static_cast<std::int64_t>(bytes);
  write.transfer_time = simulator::CommunicationCost::transfer(
      config.simulation.intra_node, config.simulation.p2p_latency, bytes);

  const auto directory = std::filesystem::temp_directory_path() /
                         ("perflow_measured_round_trip_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  reader::write_kineto_traces(directory, out.original.graph, out.original.result.trace, write);
  reader::ProfileRequest profiles;
  for (std::uint32_t d = 0; d < out.original.graph.device_count(); ++d) {
    profiles.profiles.push_back((directory / ("rank-" + std::to_string(d) + ".json")).string());
  }
  const reader::Measurement measurement = reader::measure_profiles(profiles);
  std::filesystem::remove_all(directory);
  reader::MeasuredConfigOptions options;
  options.schedule = schedule;
  out.measured = reader::measured_config(measurement.costs, options, "round trip");
  out.again = run(out.measured.document, name + "_measured.json");
  return out;
}

void expect_same_step(const RoundTrip& trip) {
  const simulator::Metrics& before = trip.original.result.metrics;
  const simulator::Metrics& after = trip.again.result.metrics;
  EXPECT_EQ(after.makespan, before.makespan) << trip.measured.document.dump(2);
  EXPECT_EQ(trip.again.graph.task_count(), trip.original.graph.task_count());
  ASSERT_EQ(after.devices.size(), before.devices.size());
  for (std::size_t d = 0; d < before.devices.size(); ++d) {
    EXPECT_EQ(after.devices[d].busy, before.devices[d].busy) << "device " << d;
    EXPECT_EQ(after.devices[d].blocked, before.devices[d].blocked) << "device " << d;
    EXPECT_EQ(after.devices[d].last_finish, before.devices[d].last_finish) << "device " << d;
  }
}

// Costs that differ per stage, to the nanosecond, and a link whose transfer time is no whole
// number of bytes per ns.
nlohmann::json config_of(const std::string& schedule, std::uint32_t stages,
                         std::uint32_t microbatches, bool split, const std::string& mode) {
  nlohmann::json costs = {{"forward", "1315.123us"},
                          {"backward", "2733.457us"},
                          {"weight", "1650.001us"},
                          {"launch_overhead", "7.313us"},
                          {"boundary_bytes", 3'000'017}};
  costs["overrides"] = nlohmann::json::array();
  for (std::uint32_t s = 1; s < stages; ++s) {
    costs["overrides"].push_back({{"stages", s},
                                  {"forward", fmt::format("{}ns", 1'315'123 + 1'001 * s)},
                                  {"backward", fmt::format("{}ns", 2'733'457 - 7'919 * s)},
                                  {"weight", fmt::format("{}ns", 1'650'001 + 313 * s * s)}});
  }
  nlohmann::json pipeline = {
      {"schedule", schedule}, {"stages", stages}, {"microbatches", microbatches}};
  if (split) pipeline["split_backward"] = true;
  return {{"pipeline", pipeline},
          {"costs", costs},
          {"network",
           {{"p2p_mode", mode},
            {"intra_node", {{"latency", "3.217us"}, {"bandwidth", 23'456'789'013.0}}}}}};
}

TEST(RoundTrip, BlockingOneFOneBReproducesTheStep) {
  const RoundTrip trip = round_trip(config_of("1f1b", 4, 8, false, "blocking"), "1f1b", "");
  const nlohmann::ordered_json& doc = trip.measured.document;
  EXPECT_EQ(doc["network"]["p2p_mode"], "blocking");
  EXPECT_EQ(doc["costs"]["launch_overhead"], "7.313us");
  EXPECT_EQ(doc["costs"]["boundary_bytes"], 3'000'017);
  EXPECT_EQ(doc["pipeline"]["schedule"], "1f1b");
  EXPECT_EQ(doc["pipeline"]["microbatches"], 8);
  // The fitted link charges the original transfer time exactly.
  const Config& original = trip.original.config;
  const Config& again = trip.again.config;
  EXPECT_EQ(simulator::CommunicationCost::transfer(again.simulation.intra_node,
                                                   again.simulation.p2p_latency, 3'000'017),
            simulator::CommunicationCost::transfer(original.simulation.intra_node,
                                                   original.simulation.p2p_latency, 3'000'017));
  EXPECT_TRUE(again.blocking_p2p);
  expect_same_step(trip);
  EXPECT_GT(trip.original.result.metrics.devices[1].blocked, 0);
}

TEST(RoundTrip, BlockingZeroBubbleH1ReproducesTheStep) {
  const RoundTrip trip = round_trip(config_of("zb-h1", 3, 6, true, "blocking"), "zbh1", "zb-h1");
  EXPECT_EQ(trip.measured.document["pipeline"]["split_backward"], true);
  EXPECT_EQ(trip.measured.document["network"]["p2p_mode"], "blocking");
  expect_same_step(trip);
}

TEST(RoundTrip, BlockingTwoStagesReproducesTheStep) {
  const RoundTrip trip = round_trip(config_of("1f1b", 2, 5, true, "blocking"), "two", "");
  expect_same_step(trip);
}

TEST(RoundTrip, AsynchronousTransfersReproduceTheStep) {
  for (const std::string schedule : {"1f1b", "zb-h1"}) {
    const RoundTrip trip =
        round_trip(config_of(schedule, 3, 6, true, "async"), "async_" + schedule, schedule);
    EXPECT_FALSE(trip.measured.document["network"].contains("p2p_mode")) << schedule;
    EXPECT_FALSE(trip.again.config.blocking_p2p) << schedule;
    expect_same_step(trip);
  }
}

// A recomputing run: each R is written inside its backward's range (as a checkpointed
// backward shows in a profile), so the measured backward is R + BW and the config measured
// has no R tasks; the step, every device's busy time and last finish come back exactly.
TEST(RoundTrip, RecomputationIsMeasuredAsPartOfTheBackward) {
  for (const std::string mode : {"blocking", "async"}) {
    SCOPED_TRACE(mode);
    nlohmann::json document = config_of("1f1b", 3, 6, false, mode);
    document["costs"]["activation"] = 100;
    document["costs"]["recompute"] = "full";
    document["costs"]["recompute_activation"] = 10;
    const RoundTrip trip = round_trip(document, "recompute_" + mode, "");
    const simulator::Metrics& before = trip.original.result.metrics;
    const simulator::Metrics& after = trip.again.result.metrics;
    EXPECT_GT(before.devices[0].recompute, 0);
    EXPECT_EQ(after.devices[0].recompute, 0);
    EXPECT_EQ(after.makespan, before.makespan) << trip.measured.document.dump(2);
    // 18 R tasks fewer: each is measured as part of its backward.
    EXPECT_EQ(trip.again.graph.task_count() + 18, trip.original.graph.task_count());
    for (std::size_t d = 0; d < before.devices.size(); ++d) {
      EXPECT_EQ(after.devices[d].busy, before.devices[d].busy) << "device " << d;
      EXPECT_EQ(after.devices[d].blocked, before.devices[d].blocked) << "device " << d;
      EXPECT_EQ(after.devices[d].last_finish, before.devices[d].last_finish) << "device " << d;
    }
  }
}

}  // namespace
}  // namespace perflow::study
