// The Chrome trace event format as Perfetto and chrome://tracing read it: every event's
// fields, types and phase rules; names for processes and threads; each task's slice with
// its times and stage; flows matched in pairs and bound inside their slices; memory
// counters; exact microsecond times with no more decimals than needed; the compact layout.
#include "perflow/visualizer/chrome_trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perflow/core/error.hpp"
#include "render_helpers.hpp"

namespace perflow::visualizer {
namespace {

using namespace test_support;
using nlohmann::json;

/// Microseconds as written ("1315", "1314.999") back to integer nanoseconds.
TimeNs ns_of(const json& value) {
  if (value.is_number_integer()) return value.get<TimeNs>() * 1000;
  // nlohmann parsed it as a double; the text has at most three decimals, so rounding is
  // exact.
  return static_cast<TimeNs>(std::llround(value.get<double>() * 1000.0));
}

/// The lane a task ran on, as the trace lists it (its first).
std::uint32_t trace_lane_of(const Trace& trace, TaskId t) {
  for (std::uint32_t l = 0; l < trace.lane_count(); ++l) {
    for (const TaskId u : trace.events(LaneId{l})) {
      if (u == t) return l;
    }
  }
  ADD_FAILURE() << "task " << t.value << " is in no lane";
  return 0;
}

std::size_t cross_device_dependences(const EventGraph& graph) {
  std::size_t n = 0;
  for (std::uint32_t u = 0; u < graph.task_count(); ++u) {
    for (const Adjacent& s : graph.successors(TaskId{u})) {
      n += s.kind() == EdgeKind::Data && graph.device(s.task()) != graph.device(TaskId{u});
    }
  }
  return n;
}

/// Checks the whole document against the format's rules and the run it came from.
void check_schema(const Simulated& run, const std::string& text,
                  const std::vector<std::string>& labels = {}) {
  const EventGraph& graph = run.graph;
  const Trace& trace = run.result.trace;
  const json doc = json::parse(text);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
  ASSERT_TRUE(doc.at("traceEvents").is_array());

  // Every time is written with the decimals it needs and no more: none for whole
  // microseconds, never a trailing zero.
  const std::regex time_field(R"re("(ts|dur)":(-?[0-9]+(\.[0-9]*)?))re");
  std::size_t times = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), time_field);
       it != std::sregex_iterator(); ++it) {
    ++times;
    EXPECT_TRUE(std::regex_match((*it)[2].str(), std::regex(R"(-?[0-9]+(\.[0-9]{0,2}[1-9])?)")))
        << (*it)[0].str();
  }
  EXPECT_GT(times, graph.task_count());

  // Where each task ran: its slice is found by device and name.
  std::map<std::pair<std::uint32_t, std::string>, TaskId> task_of;
  for (std::uint32_t t = 0; t < graph.task_count(); ++t) {
    task_of[{graph.device(TaskId{t}).value + 1, graph.label(TaskId{t})}] = TaskId{t};
  }

  std::map<std::uint32_t, std::string> process_names;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> thread_names;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::pair<TimeNs, TimeNs>>>
      slices;  // per thread, [start, end)
  std::set<std::string> labels_seen;
  std::map<std::uint64_t, std::vector<json>> flows;
  std::map<std::uint32_t, double> counter_peak;
  std::size_t complete = 0;
  for (const json& e : doc.at("traceEvents")) {
    ASSERT_TRUE(e.is_object());
    ASSERT_TRUE(e.at("name").is_string()) << e;
    ASSERT_TRUE(e.at("ph").is_string()) << e;
    ASSERT_TRUE(e.at("pid").is_number_unsigned()) << e;
    ASSERT_TRUE(e.at("tid").is_number_unsigned()) << e;
    const std::string ph = e.at("ph");
    const auto pid = e.at("pid").get<std::uint32_t>();
    const auto tid = e.at("tid").get<std::uint32_t>();
    ASSERT_GE(pid, 1u);
    ASSERT_LE(pid, graph.device_count());
    if (ph == "M") {
      ASSERT_TRUE(e.at("args").is_object()) << e;
      const std::string name = e.at("name");
      if (name == "process_name") {
        process_names[pid] = e.at("args").at("name");
      } else if (name == "thread_name") {
        thread_names[{pid, tid}] = e.at("args").at("name");
      } else {
        ASSERT_TRUE(name == "process_sort_index" || name == "thread_sort_index") << e;
        ASSERT_TRUE(e.at("args").at("sort_index").is_number_unsigned()) << e;
      }
    } else if (ph == "X") {
      ++complete;
      ASSERT_TRUE(e.at("ts").is_number()) << e;
      ASSERT_TRUE(e.at("dur").is_number()) << e;
      ASSERT_TRUE(e.at("cat").is_string()) << e;
      // The name is the label (kind, microbatch, chunk), the category the kind, the one
      // argument the stage.
      const std::string label = e.at("name");
      const auto found = task_of.find({pid, label});
      ASSERT_NE(found, task_of.end()) << e;
      const TaskId t = found->second;
      EXPECT_EQ(e.at("cat"), std::string(to_string(graph.kind(t)))) << e;
      ASSERT_EQ(e.at("args").size(), 1u) << e;
      EXPECT_EQ(e.at("args").at("stage"), graph.stage(t).value) << e;
      EXPECT_TRUE(e.at("args").at("stage").is_number_unsigned()) << e;
      EXPECT_EQ(ns_of(e.at("ts")), trace.start_of(t)) << e;
      EXPECT_EQ(ns_of(e.at("dur")), trace.finish_of(t) - trace.start_of(t)) << e;
      EXPECT_EQ(tid, trace_lane_of(trace, t) + 1) << e;
      EXPECT_TRUE(labels_seen.insert(fmt::format("{}@{}", label, pid)).second) << label;
      slices[{pid, tid}].emplace_back(ns_of(e.at("ts")), ns_of(e.at("ts")) + ns_of(e.at("dur")));
    } else if (ph == "s" || ph == "f") {
      ASSERT_TRUE(e.at("id").is_number_unsigned()) << e;
      EXPECT_EQ(e.at("name"), "data") << e;
      EXPECT_FALSE(e.contains("cat")) << e;  // both ends alike: no category
      ASSERT_TRUE(e.at("ts").is_number()) << e;
      if (ph == "f") {
        EXPECT_EQ(e.at("bp"), "e") << e;
      } else {
        EXPECT_FALSE(e.contains("bp")) << e;
      }
      flows[e.at("id").get<std::uint64_t>()].push_back(e);
    } else if (ph == "C") {
      ASSERT_TRUE(e.at("ts").is_number()) << e;
      ASSERT_TRUE(e.at("args").is_object()) << e;
      ASSERT_EQ(e.at("args").size(), 1u) << e;
      for (const auto& [key, value] : e.at("args").items()) {
        EXPECT_EQ(key, "activations");
        ASSERT_TRUE(value.is_number()) << e;
        // Whole values are written as integers.
        const double v = value.get<double>();
        EXPECT_EQ(value.is_number_integer(), v == std::trunc(v)) << e;
        counter_peak[pid] = std::max(counter_peak[pid], v);
      }
    } else {
      ADD_FAILURE() << "unexpected phase " << e;
    }
  }

  // One process per device, named with its label; one thread per lane, named by the lane.
  ASSERT_EQ(process_names.size(), graph.device_count());
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    const std::string expected = d < labels.size() && !labels[d].empty()
                                     ? fmt::format("dev {} ({})", d, labels[d])
                                     : fmt::format("dev {}", d);
    EXPECT_EQ(process_names[d + 1], expected);
  }
  ASSERT_EQ(thread_names.size(), graph.lane_count());
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    const LaneInfo& lane = graph.lane_info(LaneId{l});
    EXPECT_EQ((thread_names[{lane.device.value + 1, l + 1}]), lane.name);
  }

  // Every task once; slices on one thread never overlap.
  EXPECT_EQ(complete, graph.task_count());
  for (auto& [thread, list] : slices) {
    std::sort(list.begin(), list.end());
    for (std::size_t i = 1; i < list.size(); ++i) EXPECT_GE(list[i].first, list[i - 1].second);
  }

  // Flows: one pair per dependence between devices, "s" then "f", each inside a slice of its
  // thread, the start no later than the end.
  EXPECT_EQ(flows.size(), cross_device_dependences(graph));
  for (const auto& [id, pair] : flows) {
    ASSERT_EQ(pair.size(), 2u) << id;
    EXPECT_EQ(pair[0].at("ph"), "s");
    EXPECT_EQ(pair[1].at("ph"), "f");
    EXPECT_EQ(pair[0].at("name"), pair[1].at("name"));
    EXPECT_NE(pair[0].at("pid"), pair[1].at("pid"));
    EXPECT_LE(ns_of(pair[0].at("ts")), ns_of(pair[1].at("ts")));
    for (const json& end : pair) {
      const auto& list =
          slices[{end.at("pid").get<std::uint32_t>(), end.at("tid").get<std::uint32_t>()}];
      const TimeNs ts = ns_of(end.at("ts"));
      EXPECT_TRUE(std::any_of(list.begin(), list.end(), [&](const auto& s) {
        return s.first <= ts && (ts < s.second || s.first == s.second);
      })) << end;
    }
  }

  // The memory counter peaks where the metrics say.
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    EXPECT_DOUBLE_EQ(counter_peak[d + 1], run.result.metrics.devices[d].peak_memory) << d;
  }
  (void)trace;
}

TEST(ChromeTrace, SchemaOfASchedule) {
  const Simulated run = run_schedule("1f1b", 4, 8, true);
  check_schema(run, render_chrome_trace(run.graph, run.result.trace));
}

TEST(ChromeTrace, SchemaOfAChunkedSchedule) {
  const Simulated run = run_schedule("zbv", 4, 8, false, 2);
  check_schema(run, render_chrome_trace(run.graph, run.result.trace, {{"H100", "", "A100"}}),
               {"H100", "", "A100"});
}

TEST(ChromeTrace, StreamsAreThreadsOfTheirDevice) {
  const Simulated run = run_with_streams();
  const std::string text = render_chrome_trace(run.graph, run.result.trace);
  check_schema(run, text);
  const json doc = json::parse(text);
  // Sort indices put each device's compute lane first, then its streams.
  std::map<std::pair<int, int>, int> sort_index;
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("name") == "thread_sort_index") {
      sort_index[{e.at("pid"), e.at("tid")}] = e.at("args").at("sort_index");
    }
  }
  EXPECT_EQ((sort_index[{1, 1}]), 0);  // dev 0 compute
  EXPECT_EQ((sort_index[{1, 4}]), 1);  // dev 0 "send 0>1" (lane 3)
  EXPECT_EQ((sort_index[{2, 2}]), 0);  // dev 1 compute
  EXPECT_EQ((sort_index[{2, 3}]), 1);  // dev 1 "send 1>0" (lane 2)
}

TEST(ChromeTrace, TimesAreExactMicroseconds) {
  const Simulated run =
      run_program({task(TaskKind::F, 0, 0, 1), task(TaskKind::B, 0, 0, 1315),
                   task(TaskKind::W, 0, 0, 4'000'000'000'000'123), task(TaskKind::F, 1, 0, 500),
                   task(TaskKind::B, 1, 0, 1'999'990), task(TaskKind::W, 1, 0, 3'000'000)});
  const std::string text = render_chrome_trace(run.graph, run.result.trace);
  EXPECT_NE(text.find(R"("ts":0,"dur":0.001)"), std::string::npos);
  EXPECT_NE(text.find(R"("ts":0.001,"dur":1.315)"), std::string::npos);
  // Beyond a double's exact integers: written digit for digit.
  EXPECT_NE(text.find(R"("ts":1.316,"dur":4000000000000.123)"), std::string::npos);
  // No trailing zeros; whole microseconds as integers.
  EXPECT_NE(text.find(R"("ts":4000000000001.439,"dur":0.5)"), std::string::npos);
  EXPECT_NE(text.find(R"("ts":4000000000001.939,"dur":1999.99)"), std::string::npos);
  EXPECT_NE(text.find(R"("ts":4000000002001.929,"dur":3000)"), std::string::npos);
}

// One event per line, no spaces, only the fields a viewer needs: pinned, since a million
// tasks make hundreds of megabytes.
TEST(ChromeTrace, CompactEvents) {
  const Simulated run = run_schedule("1f1b", 2, 2);  // F 1 us, BW 2 us, activation 1
  const std::string text = render_chrome_trace(run.graph, run.result.trace);
  EXPECT_TRUE(text.starts_with(
      R"({"displayTimeUnit":"ns","otherData":{"generator":"perflow"},"traceEvents":[)"
      "\n"
      R"({"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"dev 0"}},)"))
      << text.substr(0, 300);
  EXPECT_NE(text.find("\n"
                      R"({"name":"F1.0","ph":"X","pid":2,"tid":2,"cat":"F","ts":4,"dur":1,)"
                      R"("args":{"stage":1}},)"
                      "\n"),
            std::string::npos);
  EXPECT_NE(text.find("\n"
                      R"({"name":"data","ph":"s","pid":1,"tid":1,"id":1,"ts":0.999},)"
                      "\n"
                      R"({"name":"data","ph":"f","pid":2,"tid":2,"id":1,"bp":"e","ts":1.001},)"
                      "\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("\n"
                R"({"name":"memory","ph":"C","pid":1,"tid":1,"ts":1,"args":{"activations":2}})"),
      std::string::npos);
  EXPECT_TRUE(text.ends_with("}\n]}\n"));
  EXPECT_EQ(text.find(' ', text.find("traceEvents")), text.find("dev 0") + 3);  // no spaces
}

// DualPipe's overlapped F&B: on device 0, F1.0 holds the pair's 2500 ns and BW0.0 (paired,
// no time of its own) follows it; device 1 runs F0.0 and BW0.0 before the pair can start.
TEST(ChromeTrace, OverlappedPairShowsBothTasksOverThePair) {
  const Simulated run = run_with_pair();
  const EventGraph& graph = run.graph;
  const Trace& trace = run.result.trace;
  const TaskId b0{2};  // device 0's third task
  ASSERT_EQ(trace.start_of(b0), 6500);
  ASSERT_EQ(trace.finish_of(b0), 6500);
  const std::string text = render_chrome_trace(graph, trace);

  // Both over the pair's 4-6.5 us, each naming the other; the rest as without pairs.
  EXPECT_NE(text.find("\n"
                      R"({"name":"F0.0","ph":"X","pid":1,"tid":1,"cat":"F","ts":0,"dur":1,)"
                      R"("args":{"stage":0}},)"
                      "\n"
                      R"({"name":"F1.0","ph":"X","pid":1,"tid":1,"cat":"F","ts":4,"dur":2.5,)"
                      R"("args":{"stage":0,"paired_with":"BW0.0"}},)"
                      "\n"
                      R"({"name":"BW0.0","ph":"X","pid":1,"tid":1,"cat":"BW","ts":4,"dur":2.5,)"
                      R"("args":{"stage":0,"paired_with":"F1.0"}},)"
                      "\n"
                      R"({"name":"F0.0","ph":"X","pid":2,"tid":2,"cat":"F","ts":1,"dur":1,)"
                      R"("args":{"stage":1}},)"
                      "\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(count(text, "paired_with"), 2u);
  // The gradient's flow into BW0.0 ends inside the pair's slices, not at their end.
  EXPECT_NE(text.find("\n"
                      R"({"name":"data","ph":"f","pid":1,"tid":1,"id":2,"bp":"e","ts":4.001},)"
                      "\n"),
            std::string::npos)
      << text;
  const json doc = json::parse(text);  // valid JSON
  EXPECT_TRUE(doc.at("traceEvents").is_array());

  // Without pairs nothing names a partner.
  const Simulated plain = run_schedule("1f1b", 2, 2);
  EXPECT_EQ(render_chrome_trace(plain.graph, plain.result.trace).find("paired_with"),
            std::string::npos);
}

TEST(ChromeTrace, DeterministicAndEscaped) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  const std::vector<std::string> labels = {"A\"100\n\\", "\xff"};  // quote, newline, bad UTF-8
  const std::string first = render_chrome_trace(run.graph, run.result.trace, {labels});
  EXPECT_EQ(first, render_chrome_trace(run.graph, run.result.trace, {labels}));
  const json doc = json::parse(first);  // valid JSON despite the label
  bool found = false;
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("name") == "process_name" && e.at("pid") == 1) {
      EXPECT_EQ(e.at("args").at("name"), "dev 0 (A\"100\n\\)");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(ChromeTrace, WritesAtomically) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  const TempDir dir;
  write_chrome_trace(dir.path() / "trace.json", run.graph, run.result.trace);
  EXPECT_EQ(read_bytes(dir.path() / "trace.json"),
            render_chrome_trace(run.graph, run.result.trace));
  EXPECT_THROW(write_chrome_trace(dir.path() / "no" / "trace.json", run.graph, run.result.trace),
               IoError);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"trace.json"});
}

TEST(ChromeTrace, RejectsAMismatchedTrace) {
  const Simulated run = run_schedule("1f1b", 2, 2);
  Trace truncated = run.result.trace;
  truncated.finish.pop_back();
  EXPECT_THROW((void)render_chrome_trace(run.graph, truncated), std::invalid_argument);
}

}  // namespace
}  // namespace perflow::visualizer
