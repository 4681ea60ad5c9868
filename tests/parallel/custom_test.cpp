#include <string>

#include <gtest/gtest.h>

#include "../support/schedule_helpers.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

namespace perflow {
namespace {

nlohmann::json custom_config(nlohmann::json order, std::uint32_t stages = 2,
                             std::uint32_t microbatches = 2) {
  return {{"pipeline",
           {{"schedule", "custom"},
            {"stages", stages},
            {"microbatches", microbatches},
            {"order", std::move(order)}}},
          {"costs", {{"forward", 1}, {"backward", 1}, {"weight", 1}, {"activation", 1}}}};
}

std::string error_of(const nlohmann::json& doc) {
  try {
    (void)study::build_graph(study::parse_config(doc, "c.json"));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CustomSchedule, RunsTheGivenOrderAsStringsOrArrays) {
  // 1F1B for p=2, m=2, once as strings and once as arrays of labels.
  for (const auto& order :
       {nlohmann::json{"F0.0 F1.0 BW0.0 BW1.0", "F0.0 BW0.0 F1.0 BW1.0"},
        nlohmann::json{{"F0.0", "F1.0", "BW0.0", "BW1.0"}, {"F0.0", "BW0.0", "F1.0", "BW1.0"}}}) {
    const study::Config config = study::parse_config(custom_config(order), "c.json");
    const EventGraph g = study::build_graph(config);
    const auto r = simulator::simulate(g);
    EXPECT_EQ(r.metrics.makespan, 9000);  // (m + p - 1)(F + B + W)
    EXPECT_EQ(testing::order_string(g, r.trace, 1), "F0.0 BW0.0 F1.0 BW1.0");
  }
}

TEST(CustomSchedule, SplitBackwardAndInterleavedChunks) {
  auto doc =
      custom_config({"F0.0 F0.1 B0.1 W0.1 B0.0 W0.0", "F0.0 F0.1 B0.1 B0.0 W0.1 W0.0"}, 2, 1);
  doc["pipeline"]["chunks"] = 2;
  const EventGraph g = study::build_graph(study::parse_config(doc, "c.json"));
  EXPECT_EQ(g.task_count(), 12u);
  // Interleaved positions: F0.0@d0 [0,1], F0.0@d1 [1,2], F0.1@d0 [2,3], F0.1@d1 [3,4], then
  // B0.1@d1 [4,5], B0.1@d0 [5,6], B0.0@d1 [6,7] (its W0.1 waits), B0.0@d0 [7,8]; the Ws
  // fill in behind: d0 W0.1 [6,7] W0.0 [8,9]; d1 W0.1 [7,8] W0.0 [8,9].
  EXPECT_EQ(simulator::simulate(g).metrics.makespan, 9000);
}

TEST(CustomSchedule, ErrorsPointAtTheOrder) {
  EXPECT_EQ(error_of(custom_config({"F0.0 F1.0 BW0.0 BW1.0"})),
            "c.json:/pipeline/order: custom needs one program per stage: 2 stages, 1 programs");
  EXPECT_EQ(error_of(custom_config({"F0.0 F1.0 BW0.0 BW1.0", "F0.0 BW0.0 F1.0"})),
            "c.json:/pipeline/order: BW1.0 is missing from the program of device 1");
  EXPECT_EQ(error_of(custom_config({"F0.0 F1.0 BW0.0 BW1.0 F1.0", "F0.0 BW0.0 F1.0 BW1.0"})),
            "c.json:/pipeline/order: F1.0 on device 0: appears more than once");
  EXPECT_EQ(error_of(custom_config({"F0.0 F1.0 BW0.0 BW1.0", "F0.0 X0.0 F1.0 BW1.0"})),
            "c.json:/pipeline/order/1: expected task labels such as F3.0, B3.0, W3.0 or BW3.0, "
            "got 'X0.0'");
  EXPECT_EQ(error_of(custom_config({{"F0.0", 3}, {"F0.0"}})),
            "c.json:/pipeline/order/0/1: expected a string, got 3");
  EXPECT_EQ(error_of(custom_config({"F0.0 F1.0 BW0.0 BW1.0", "F0.0 BW0.0 F1.0 BW1.0 F2.0"})),
            "c.json:/pipeline/order: F2.0 on device 1: microbatch or chunk out of range (m=2, "
            "chunks=1)");
}

TEST(CustomSchedule, DeadlockNamesTheWaitingTasks) {
  // Device 1 wants microbatch 1's forward first: F1.0@d1 waits for F1.0@d0, which device 0
  // runs after BW0.0@d0, which needs BW0.0@d1, which device 1 runs after F1.0@d1. Only
  // F0.0@d0 can ever start.
  const auto doc = custom_config({"F0.0 BW0.0 F1.0 BW1.0", "F1.0 F0.0 BW0.0 BW1.0"});
  try {
    (void)study::build_graph(study::parse_config(doc, "c.json"));
    FAIL();
  } catch (const CycleError& e) {
    EXPECT_EQ(std::string(e.what()),
              "c.json:/pipeline/order: dependence cycle (the schedule deadlocks): F1.0@d0 -> "
              "F1.0@d1 -> F0.0@d1 -> BW0.0@d1 -> BW0.0@d0 -> F1.0@d0 (7 of 8 tasks can never "
              "start)");
  }
}

TEST(CustomSchedule, OtherSchedulesRefuseAnOrder) {
  auto doc = custom_config({"F0.0 F1.0 BW0.0 BW1.0", "F0.0 BW0.0 F1.0 BW1.0"});
  doc["pipeline"]["schedule"] = "1f1b";
  EXPECT_EQ(error_of(doc),
            "c.json:/pipeline/order: 1f1b does not take order (schedules that do: "
            "custom)");
}

// A V-shape or DualPipe schedule written out as a custom order (with its shape) runs exactly
// as the built-in schedule: the same orders and the same timeline.
TEST(CustomSchedule, VShapeAndDualPipeOrdersReproduceTheSchedules) {
  for (const auto& [schedule, shape] :
       {std::pair{"zbv", "v"}, std::pair{"dualpipe", "dualpipe"}, std::pair{"v-min", "v"}}) {
    SCOPED_TRACE(schedule);
    const std::uint32_t p = 4;
    const std::uint32_t m = 8;
    auto doc = custom_config(nlohmann::json::array(), p, m);
    doc["pipeline"]["schedule"] = schedule;
    doc["pipeline"]["chunks"] = 2;
    doc["costs"] = {{"forward", 1}, {"backward", 2}, {"weight", 1}, {"activation", 1}};
    const EventGraph reference = study::build_graph(study::parse_config(doc, "c.json"));
    const auto expected = simulator::simulate(reference);
    nlohmann::json order = nlohmann::json::array();
    for (std::uint32_t d = 0; d < p; ++d) {
      order.push_back(testing::order_string(reference, expected.trace, d));
    }
    doc["pipeline"]["schedule"] = "custom";
    doc["pipeline"]["order"] = order;
    doc["pipeline"]["shape"] = shape;
    const EventGraph g = study::build_graph(study::parse_config(doc, "c.json"));
    const auto r = simulator::simulate(g);
    EXPECT_EQ(r.metrics.makespan, expected.metrics.makespan);
    for (std::uint32_t d = 0; d < p; ++d) {
      EXPECT_EQ(testing::order_string(g, r.trace, d), order[d].get<std::string>());
    }
    ASSERT_EQ(g.task_count(), reference.task_count());
    for (std::uint32_t t = 0; t < g.task_count(); ++t) {
      EXPECT_EQ(r.trace.start[t], expected.trace.start[t]);
    }
    // Without the shape the chunks would be interleaved: another pipeline, which deadlocks
    // or differs; with a wrong chunk count the shape is refused.
    doc["pipeline"]["shape"] = "linear";
    EXPECT_EQ(error_of(doc),
              "c.json:/pipeline/shape: custom: shape linear needs exactly 1 chunks, got 2");
  }
  auto doc = custom_config({"F0.0 F1.0 BW0.0 BW1.0", "F0.0 BW0.0 F1.0 BW1.0"});
  doc["pipeline"]["shape"] = "w";
  EXPECT_EQ(error_of(doc),
            "c.json:/pipeline/shape: expected \"linear\", \"interleaved\", \"v\" or "
            "\"dualpipe\", got \"w\"");
  doc["pipeline"]["shape"] = "v";
  doc["pipeline"]["schedule"] = "1f1b";
  doc["pipeline"].erase("order");
  EXPECT_EQ(error_of(doc),
            "c.json:/pipeline/shape: 1f1b does not take shape (schedules that do: custom)");
}

TEST(TaskLabel, ParsesWhatTaskLabelWrites) {
  for (const TaskKind kind : {TaskKind::F, TaskKind::B, TaskKind::W, TaskKind::BW}) {
    const auto parsed = parse_task_label(task_label(kind, 123, 4));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->kind, kind);
    EXPECT_EQ(parsed->microbatch, 123u);
    EXPECT_EQ(parsed->chunk, 4u);
  }
  for (const char* bad : {"", "F", "F1", "F1.", "F.1", "X1.0", "F1.0 ", "F-1.0", "BWW1.0", "F1.0.0",
                          "F99999999999.0"}) {
    EXPECT_FALSE(parse_task_label(bad)) << bad;
  }
}

}  // namespace
}  // namespace perflow
