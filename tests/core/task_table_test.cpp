#include "perflow/core/task_table.hpp"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perflow/core/error.hpp"

namespace perflow {
namespace {

// Two devices; device 0 has a communication lane whose name needs CSV quoting and JSON
// escaping. One task of every kind that leaves a field empty: ALLREDUCE (no microbatch),
// OPT (none of microbatch, chunk, stage). The trace is written by hand: the table does not
// care how it was obtained.
struct Fixture {
  EventGraph graph;
  Trace trace;
};

Fixture fixture() {
  EventGraphBuilder b(2);
  const LaneId link = b.add_lane(DeviceId{0}, "link \"a,b\"\\x");
  const TaskId f = b.add_task({TaskKind::F, DeviceId{0}, StageId{0}, 3, 1, 10});
  const TaskId send = b.add_task({TaskKind::Send, DeviceId{0}, StageId{0}, 3, 1, 5, 0.0, link});
  const TaskId w = b.add_task({TaskKind::W, DeviceId{1}, StageId{1}, 2, 0, 7});
  const TaskId reduce =
      b.add_task({TaskKind::AllReduce, DeviceId{0}, StageId{0}, 0, 1, 4, 0.0, link});
  const TaskId opt = b.add_task({TaskKind::Optimizer, DeviceId{1}, StageId{1}, 0, 0, 2});
  b.add_dependence(f, send);
  b.add_dependence(send, w);
  for (const TaskId t : {f, send, w, reduce, opt}) b.append_to_program(t);
  Fixture x{std::move(b).freeze(), {}};
  x.trace.start = {0, 10, 15, 22, 1'000'000'000'000};
  x.trace.finish = {10, 15, 22, 26, 1'000'000'000'002};
  x.trace.lane_events = {{f}, {w, opt}, {send, reduce}};
  return x;
}

TEST(TaskTable, FormatOfTheExtensionInAnyCase) {
  EXPECT_EQ(task_table_format_of("out/trace.csv"), TaskTableFormat::Csv);
  EXPECT_EQ(task_table_format_of("trace.CSV"), TaskTableFormat::Csv);
  EXPECT_EQ(task_table_format_of("trace.jsonl"), TaskTableFormat::Jsonl);
  EXPECT_EQ(task_table_format_of("trace.JsonL"), TaskTableFormat::Jsonl);
  EXPECT_EQ(task_table_format_of("trace.json"), std::nullopt);
  EXPECT_EQ(task_table_format_of("trace"), std::nullopt);
  EXPECT_EQ(task_table_format_of("csv"), std::nullopt);
}

TEST(TaskTable, CsvQuotesLaneNamesAndLeavesMissingFieldsEmpty) {
  const Fixture x = fixture();
  EXPECT_EQ(render_task_table(x.graph, x.trace, TaskTableFormat::Csv),
            "device,lane,kind,microbatch,chunk,stage,iteration,start_ns,end_ns\n"
            "0,compute,F,3,1,0,0,0,10\n"
            "1,compute,W,2,0,1,0,15,22\n"
            "1,compute,OPT,,,,0,1000000000000,1000000000002\n"
            "0,\"link \"\"a,b\"\"\\x\",SEND,3,1,0,0,10,15\n"
            "0,\"link \"\"a,b\"\"\\x\",ALLREDUCE,,1,0,0,22,26\n");
}

TEST(TaskTable, JsonLinesEscapeLaneNamesAndUseNull) {
  const Fixture x = fixture();
  EXPECT_EQ(
      render_task_table(x.graph, x.trace, TaskTableFormat::Jsonl),
      R"({"device":0,"lane":"compute","kind":"F","microbatch":3,"chunk":1,"stage":0,"iteration":0,"start_ns":0,"end_ns":10}
{"device":1,"lane":"compute","kind":"W","microbatch":2,"chunk":0,"stage":1,"iteration":0,"start_ns":15,"end_ns":22}
{"device":1,"lane":"compute","kind":"OPT","microbatch":null,"chunk":null,"stage":null,"iteration":0,"start_ns":1000000000000,"end_ns":1000000000002}
{"device":0,"lane":"link \"a,b\"\\x","kind":"SEND","microbatch":3,"chunk":1,"stage":0,"iteration":0,"start_ns":10,"end_ns":15}
{"device":0,"lane":"link \"a,b\"\\x","kind":"ALLREDUCE","microbatch":null,"chunk":1,"stage":0,"iteration":0,"start_ns":22,"end_ns":26}
)");
}

TEST(TaskTable, AppendKeepsWhatIsThere) {
  const Fixture x = fixture();
  std::string out = "before\n";
  append_task_table(out, x.graph, x.trace, TaskTableFormat::Csv);
  EXPECT_EQ(out, "before\n" + render_task_table(x.graph, x.trace, TaskTableFormat::Csv));
}

TEST(TaskTable, ParsesBothFormatsBackToTheSameRows) {
  const Fixture x = fixture();
  const auto csv = parse_task_table(render_task_table(x.graph, x.trace, TaskTableFormat::Csv),
                                    TaskTableFormat::Csv);
  const auto jsonl = parse_task_table(render_task_table(x.graph, x.trace, TaskTableFormat::Jsonl),
                                      TaskTableFormat::Jsonl);
  ASSERT_EQ(csv.size(), 5u);
  EXPECT_EQ(csv, jsonl);
  EXPECT_EQ(csv[3].lane, "link \"a,b\"\\x");
  EXPECT_EQ(csv[3].kind, TaskKind::Send);
  EXPECT_EQ(csv[4].kind, TaskKind::AllReduce);
  EXPECT_EQ(csv[4].microbatch, std::nullopt);
  EXPECT_EQ(csv[4].chunk, 1u);
  EXPECT_EQ(csv[2].stage, std::nullopt);
  EXPECT_EQ(csv[2].start_ns, 1'000'000'000'000);
  // Every JSON line is an object with exactly the columns as keys.
  const std::string text = render_task_table(x.graph, x.trace, TaskTableFormat::Jsonl);
  const auto first = nlohmann::json::parse(text.substr(0, text.find('\n')));
  ASSERT_EQ(first.size(), kTaskTableColumns.size());
  for (const std::string_view column : kTaskTableColumns) {
    EXPECT_TRUE(first.contains(column)) << column;
  }
}

TEST(TaskTable, ReaderAcceptsCrlfAndQuotedLineBreaks) {
  const auto rows = parse_task_table(
      "device,lane,kind,microbatch,chunk,stage,iteration,start_ns,end_ns\r\n"
      "2,\"two\nlines\",B,1,0,2,0,5,9\r\n"
      "\n",
      TaskTableFormat::Csv);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].lane, "two\nlines");
  EXPECT_EQ(rows[0].device, 2u);
  EXPECT_EQ(rows[0].end_ns, 9);
}

std::string csv_error(const std::string& body) {
  try {
    (void)parse_task_table(
        "device,lane,kind,microbatch,chunk,stage,iteration,start_ns,end_ns\n" + body,
        TaskTableFormat::Csv, "t.csv");
  } catch (const FormatError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string jsonl_error(const std::string& text) {
  try {
    (void)parse_task_table(text, TaskTableFormat::Jsonl, "t.jsonl");
  } catch (const FormatError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TaskTable, ReaderErrorsNameTheLine) {
  EXPECT_EQ(csv_error("0,compute,F,0,0,0,0,0,10\n0,compute,F,0,0,0,0,10\n"),
            "t.csv:line 3: expected 9 fields, got 8");
  EXPECT_EQ(
      csv_error("0,compute,X,0,0,0,0,0,10\n"),
      "t.csv:line 2: kind: expected one of F, B, W, BW, SEND, ALLREDUCE, OPT, RECV, SYNC, R, D2H, "
      "H2D, A2A, REDUCESCATTER, ALLGATHER, got 'X'");
  EXPECT_EQ(csv_error("0,compute,F,-1,0,0,0,0,10\n"),
            "t.csv:line 2: microbatch: expected an integer in [0, 4294967295], got '-1'");
  EXPECT_EQ(csv_error("0,\"a\nb\",F,0,0,0,0,0,1x\n"),
            "t.csv:line 2: end_ns: expected an integer in [-9223372036854775808, "
            "9223372036854775807], got '1x'");
  EXPECT_EQ(csv_error("0,\"a\nb\",F,0,0,0,0,0,1\n0,compute,F\n"),
            "t.csv:line 4: expected 9 fields, got 3");
  EXPECT_EQ(csv_error("0,\"compute,F,0,0,0,0,0,1\n"), "t.csv:line 2: unterminated quoted field");
  EXPECT_EQ(csv_error("0,\"compute\"x,F,0,0,0,0,0,1\n"),
            "t.csv:line 2: text after a quoted field's closing quote");
  try {
    (void)parse_task_table("device,lane\n", TaskTableFormat::Csv, "t.csv");
    FAIL();
  } catch (const FormatError& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.csv:line 1: expected the header "
              "'device,lane,kind,microbatch,chunk,stage,iteration,start_ns,end_ns', got "
              "'device,lane'");
    EXPECT_EQ(e.line(), 1u);
    EXPECT_EQ(e.source(), "t.csv");
  }
  EXPECT_EQ(jsonl_error("{\"device\":0}\n"),
            "t.jsonl:line 1: expected the keys device, lane, kind, microbatch, chunk, stage, "
            "iteration, start_ns, end_ns, got device");
  EXPECT_EQ(jsonl_error("\n[1]\n"), "t.jsonl:line 2: expected a JSON object");
  EXPECT_EQ(jsonl_error(R"({"device":0,"lane":"compute","kind":"F","microbatch":-2,"chunk":0,)"
                        R"("stage":0,"iteration":0,"start_ns":0,"end_ns":1})"),
            "t.jsonl:line 1: microbatch: expected an integer in [0, 4294967295], got -2");
  EXPECT_EQ(jsonl_error(R"({"device":0,"lane":3,"kind":"F","microbatch":2,"chunk":0,)"
                        R"("stage":0,"iteration":0,"start_ns":0,"end_ns":1})"),
            "t.jsonl:line 1: lane: expected a string, got 3");
}

TEST(TaskTable, RefusesATraceOfAnotherGraph) {
  Fixture x = fixture();
  x.trace.lane_events[2].push_back(TaskId{99});
  std::string out = "before\n";
  EXPECT_THROW(append_task_table(out, x.graph, x.trace, TaskTableFormat::Csv),
               std::invalid_argument);
  EXPECT_EQ(out, "before\n");  // the rows before the bad one are taken back
  x.trace.start.pop_back();
  EXPECT_THROW((void)render_task_table(x.graph, x.trace, TaskTableFormat::Jsonl),
               std::invalid_argument);
}

}  // namespace
}  // namespace perflow
