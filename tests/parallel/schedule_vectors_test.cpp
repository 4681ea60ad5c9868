// Runs every case of the reference schedule vectors (tests/data/schedule_vectors.json, a
// copy of shared/fixtures/schedules/vectors.json) through the config layer exactly as
// `perflow simulate` would, and checks the result:
//  - `exact` cases: per-device orders, makespan, busy, bubble ratio, span bubble, peak
//    memory and every task's start/end in the reference timeline (where the case has one);
//  - `at_most` cases (automatic schedulers): peak within memory_limit, makespan no later.
// Inputs are abstract units; as the fixture README says, they are microseconds in a config.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support/schedule_helpers.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

namespace perflow {
namespace {

using nlohmann::json;

const json& vectors() {
  static const json document = [] {
    std::ifstream in(PERFLOW_TEST_DATA_DIR "/schedule_vectors.json");
    return json::parse(in);
  }();
  return document;
}

std::vector<std::size_t> case_indices() {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < vectors()["cases"].size(); ++i) out.push_back(i);
  return out;
}

bool is_registered(const json& c) {
  return parallel::builtin_schedules().find(c["schedule"].get<std::string>()) != nullptr;
}

TimeNs ns(const json& units) { return std::llround(units.get<double>() * 1000.0); }

bool close(double actual, double expected, double tolerance) {
  return std::abs(actual - expected) <= tolerance * std::max(1.0, std::abs(expected));
}

/// The config the fixture README's table maps a case to.
json config_for(const json& c) {
  const json& in = c["inputs"];
  json pipeline = {{"schedule", c["schedule"]},
                   {"stages", in["p"]},
                   {"microbatches", in["m"]},
                   {"chunks", in["v"]}};
  if (in.contains("split_bw")) pipeline["split_backward"] = in["split_bw"].get<int>() != 0;
  if (in.contains("group")) pipeline["microbatch_group_size"] = in["group"];
  if (c.contains("memory_limit")) pipeline["memory_limit"] = c["memory_limit"];
  return {{"pipeline", pipeline},
          {"costs",
           {{"forward", in["F"]},
            {"backward", in["B"]},
            {"weight", in["W"]},
            {"activation", in["act"]},
            {"backward_frees", in["b_free"]}}},
          {"network", {{"p2p_latency", in["C"]}}}};
}

class ScheduleVector : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ScheduleVector, MatchesReference) {
  const json& c = vectors()["cases"][GetParam()];
  if (!is_registered(c)) GTEST_SKIP() << c["schedule"] << " is not implemented yet";
  const double tolerance = vectors()["tolerance"].get<double>();
  const study::Config config = study::parse_config(config_for(c), c["id"].get<std::string>());
  const EventGraph graph = study::build_graph(config);
  const simulator::SimulationResult r = simulator::simulate(graph, config.simulation);
  const simulator::Metrics& m = r.metrics;
  const std::uint32_t p = c["inputs"]["p"].get<std::uint32_t>();
  ASSERT_EQ(m.devices.size(), p);

  if (c["match"] == "at_most") {
    const double limit = c["memory_limit"].get<double>() * c["inputs"]["act"].get<double>();
    for (const auto& d : m.devices) EXPECT_LE(d.peak_memory, limit * (1 + tolerance));
    EXPECT_LE(m.makespan, ns(c["makespan"]));
    return;
  }
  ASSERT_EQ(c["match"], "exact");
  EXPECT_EQ(m.makespan, ns(c["makespan"]));
  for (std::uint32_t d = 0; d < p; ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    EXPECT_EQ(testing::order_string(graph, r.trace, d), c["orders"][d].get<std::string>());
    EXPECT_EQ(m.devices[d].busy, ns(c["busy"][d]));
    EXPECT_EQ(m.devices[d].span_bubble(), ns(c["span_bubble"][d]));
    EXPECT_TRUE(close(m.devices[d].bubble_ratio, c["bubble_rate"][d].get<double>(), tolerance))
        << m.devices[d].bubble_ratio << " vs " << c["bubble_rate"][d];
    EXPECT_TRUE(close(m.devices[d].peak_memory, c["peak_mem"][d].get<double>(), tolerance))
        << m.devices[d].peak_memory << " vs " << c["peak_mem"][d];
    if (!c.contains("timeline")) continue;  // the largest cases omit it
    const auto events = r.trace.events(DeviceId{d});
    const json& timeline = c["timeline"][d];
    ASSERT_EQ(events.size(), timeline.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(r.trace.start_of(events[i]), ns(timeline[i][1])) << timeline[i][0];
      EXPECT_EQ(r.trace.finish_of(events[i]), ns(timeline[i][2])) << timeline[i][0];
    }
  }
}

// Memory in bytes: the same case with each activation 1.5 GB (x act) peaks at the
// reference's unit peaks times 1.5 GB, plus nothing else (no static memory given).
TEST_P(ScheduleVector, PeaksInBytes) {
  const json& c = vectors()["cases"][GetParam()];
  if (c["match"] != "exact") GTEST_SKIP() << "at_most cases bound memory by their limit";
  json doc = config_for(c);
  doc["costs"]["activation"] = c["inputs"]["act"].get<double>() * 1.5e9;
  const study::Config config = study::parse_config(doc, c["id"].get<std::string>());
  const simulator::SimulationResult r =
      simulator::simulate(study::build_graph(config), config.simulation);
  for (std::size_t d = 0; d < r.metrics.devices.size(); ++d) {
    const double expected = c["peak_mem"][d].get<double>() * 1.5e9;
    EXPECT_NEAR(r.metrics.devices[d].peak_memory, expected, 1e-6 * expected) << "device " << d;
  }
}

std::string case_name(const ::testing::TestParamInfo<std::size_t>& info) {
  std::string id = vectors()["cases"][info.param]["id"].get<std::string>();
  for (char& ch : id) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return id;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ScheduleVector, ::testing::ValuesIn(case_indices()), case_name);

// Guards against a silently skipped suite: the schedules implemented so far must all run.
TEST(ScheduleVectors, ImplementedSchedulesAreCovered) {
  std::size_t gpipe = 0;
  std::size_t one_f_one_b = 0;
  for (const json& c : vectors()["cases"]) {
    const bool is_gpipe = c["schedule"] == "gpipe";
    const bool is_1f1b = c["schedule"] == "1f1b";
    gpipe += is_gpipe ? 1u : 0u;
    one_f_one_b += is_1f1b ? 1u : 0u;
    if (is_gpipe || is_1f1b) {
      EXPECT_TRUE(is_registered(c));
    }
  }
  EXPECT_EQ(gpipe, 2u);
  EXPECT_EQ(one_f_one_b, 8u);
}

}  // namespace
}  // namespace perflow
