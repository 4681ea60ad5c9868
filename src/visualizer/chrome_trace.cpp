#include "perflow/visualizer/chrome_trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "detail/pairs.hpp"
#include "detail/timeline_panel.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/core/huge_page_allocator.hpp"
#include "perflow/core/json_writer.hpp"
#include "perflow/visualizer/memory_series.hpp"

// The document is written event by event rather than built as one nlohmann::json value: a
// million tasks would cost gigabytes as a DOM, and times must be printed exactly from integer
// nanoseconds ("1315.001" us), which a double cannot promise. It is compact, since a
// million-task trace is hundreds of megabytes: no spaces, times with only the decimals they
// need, no field a viewer can rebuild (a task's kind, microbatch and chunk are its name and
// category), and flows named by what they carry ("data") without a category.
namespace perflow::visualizer {
namespace {

/// The most bytes an event of a task, a flow end or a counter takes: fixed text and numbers
/// (kind names are short; ids, times and values at most ~25 bytes each; a pair's task also
/// names its partner, ~60 bytes more).
constexpr std::size_t kEventBound = 384;

char* put(char* p, std::string_view text) {
  std::memcpy(p, text.data(), text.size());
  return p + text.size();
}

char* put(char* p, std::uint64_t value) { return std::to_chars(p, p + 24, value).ptr; }

/// Nanoseconds as microseconds, exactly, with no more decimals than they need: "1315",
/// "1315.5", "1314.999".
char* put_microseconds(char* p, TimeNs ns) {
  if (ns < 0) *p++ = '-';
  const std::uint64_t magnitude =
      ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  p = put(p, magnitude / 1000);
  if (const auto fraction = static_cast<unsigned>(magnitude % 1000); fraction != 0) {
    const char digits[] = {static_cast<char>('0' + fraction / 100),
                           static_cast<char>('0' + fraction / 10 % 10),
                           static_cast<char>('0' + fraction % 10)};
    *p++ = '.';
    const std::size_t count = fraction % 10 != 0 ? 3 : fraction % 100 != 0 ? 2 : 1;
    p = put(p, std::string_view(digits, count));
  }
  return p;
}

/// A counter's value: an integer where it is one (and a double holds it exactly), else as
/// nlohmann writes a double.
void append_counter_value(std::string& out, double value) {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (value == std::trunc(value) && std::abs(value) < kExact) {
    append_json_number(out, static_cast<std::int64_t>(value));
  } else {
    append_json_number(out, value);
  }
}

class EventWriter {
 public:
  explicit EventWriter(std::string& out) : out_(out) {}

  /// Writes one event of at most kEventBound bytes: `fill(char* p)` returns its end. The
  /// separator and a line break come first, so the file has one event per line.
  template <class Fill>
  void event(Fill fill) {
    char line[kEventBound + 2];
    char* p = line;
    if (!first_) *p++ = ',';
    first_ = false;
    *p++ = '\n';
    p = fill(p);
    out_.append(line, static_cast<std::size_t>(p - line));
  }

  /// A metadata event: {"name":..,"ph":"M","pid":..,"tid":..,"args":{<key>:<value>}}, the
  /// value a string (escaped) or a number.
  void metadata(std::string_view name, std::uint32_t pid, std::uint32_t tid, std::string_view key,
                std::string_view text) {
    begin_metadata(name, pid, tid, key);
    append_json_string(out_, text);
    out_ += "}}";
  }
  void metadata(std::string_view name, std::uint32_t pid, std::uint32_t tid, std::string_view key,
                std::uint64_t number) {
    begin_metadata(name, pid, tid, key);
    append_json_number(out_, number);
    out_ += "}}";
  }

 private:
  void begin_metadata(std::string_view name, std::uint32_t pid, std::uint32_t tid,
                      std::string_view key) {
    event([&](char* p) {
      p = put(p, R"({"name":")");
      p = put(p, name);  // process_name, thread_name, ...: plain
      p = put(p, R"(","ph":"M","pid":)");
      p = put(p, pid);
      p = put(p, R"(,"tid":)");
      p = put(p, tid);
      p = put(p, R"(,"args":{")");
      p = put(p, key);
      return put(p, "\":");
    });
  }

  std::string& out_;
  bool first_ = true;
};

}  // namespace

std::string render_chrome_trace(const EventGraph& graph, const Trace& trace,
                                const ChromeTraceOptions& options) {
  check_trace(graph, trace);
  if (trace.lane_count() > graph.lane_count()) {
    throw std::invalid_argument(fmt::format("trace has {} lanes, but the graph has {}",
                                            trace.lane_count(), graph.lane_count()));
  }
  const std::uint32_t devices = graph.device_count();
  const auto pid_of = [](DeviceId d) { return std::uint64_t{d.value} + 1; };
  const auto tid_of = [](LaneId l) { return std::uint64_t{l.value} + 1; };
  // Each task's lane as executed (the trace's), for flows.
  std::vector<LaneId> lane_of(graph.task_count());
  for (std::uint32_t l = 0; l < trace.lane_count(); ++l) {
    for (const TaskId t : trace.events(LaneId{l})) lane_of[t.value] = LaneId{l};
  }
  // A flow per data dependence between devices, lane by lane in the order things ran (so
  // the file does not depend on task ids), each from the lane its producer ran on. Listed
  // once here: the list sizes the output and is then written without a second walk over
  // the edges.
  struct Flow {
    TaskId from;
    TaskId to;
  };
  std::vector<Flow> flows;
  // Both tasks of an overlapped pair show the pair's span (the F's), so a flow's ends sit in
  // the slices as written.
  const auto span_of = [&](TaskId t) { return detail::shown_span(graph, trace, t); };
  for (std::uint32_t l = 0; l < trace.lane_count(); ++l) {
    for (const TaskId from : trace.events(LaneId{l})) {
      if (lane_of[from.value] != LaneId{l}) continue;  // listed twice: its flows leave once
      for (const Adjacent& s : graph.successors(from)) {
        const TaskId to = s.task();
        if (s.kind() == EdgeKind::Data && graph.device(to) != graph.device(from) &&
            lane_of[to.value].valid()) {
          flows.push_back({from, to});
        }
      }
    }
  }
  std::vector<std::vector<MemoryPoint>> memory(devices);
  for (std::uint32_t d = 0; d < devices; ++d) {
    memory[d] = activation_memory(graph, trace, DeviceId{d});
  }

  // Sized once from the numbers' widths, so the text is not copied while it grows (a
  // reserve short of it only costs a copy); only the pages written are touched, and they
  // are huge pages where the kernel agrees.
  const auto digits = [](std::uint64_t x) {
    std::size_t n = 1;
    for (; x >= 10; x /= 10) ++n;
    return n;
  };
  std::uint64_t longest = 1;  // the widest of the numbers in a task's event
  TimeNs last = 0;
  for (std::uint32_t t = 0; t < graph.task_count(); ++t) {
    const TaskId task{t};
    longest = std::max({longest, std::uint64_t{graph.microbatch(task)},
                        std::uint64_t{graph.chunk(task)}, std::uint64_t{graph.stage(task).value}});
    last = std::max(last, trace.finish_of(task));
  }
  const std::size_t flow_count = flows.size();
  std::size_t counter_count = 0;
  for (const auto& points : memory) counter_count += points.size();
  const std::size_t time = digits(static_cast<std::uint64_t>(std::max<TimeNs>(last, 0)) / 1000) + 4;
  const std::size_t ids = digits(graph.lane_count() + 1) * 2;  // pid and tid
  const std::size_t kind_name = 13;                            // "REDUCESCATTER"
  // With iterations: "@<k>" in the name and ,"iteration":<k> in the arguments.
  const bool iterations = graph.has_iterations();
  // With pairs: ,"paired_with":"<label>" on both tasks of each.
  const std::size_t task_event = 76 + 2 * kind_name + 3 * digits(longest) + 1 + ids + 2 * time +
                                 (iterations ? 14 + 2 * 10 : 0) +
                                 (graph.has_pairs() ? 20 + kind_name + 2 * digits(longest) : 0);
  const std::size_t flow_events = 52 + 61 + 2 * (ids + digits(flow_count) + time);
  const std::size_t counter_event = 72 + ids + time + 24;
  std::string out;
  out.reserve(graph.task_count() * task_event + flow_count * flow_events +
              counter_count * counter_event + graph.lane_count() * 256 + 4096);
  perflow::detail::advise_huge_pages(out.data(), out.capacity());

  out += R"({"displayTimeUnit":"ns","otherData":{"generator":"perflow"},"traceEvents":[)";
  EventWriter w(out);

  // Processes (devices) and threads (lanes), named and in device and lane order.
  std::vector<std::uint32_t> position(graph.lane_count(), 0);
  std::vector<std::uint32_t> lanes_of_device(devices, 1);  // the compute lane is first
  for (std::uint32_t l = devices; l < graph.lane_count(); ++l) {
    position[l] = lanes_of_device[graph.lane_info(LaneId{l}).device.value]++;
  }
  for (std::uint32_t d = 0; d < devices; ++d) {
    const std::string label = d < options.device_labels.size() && !options.device_labels[d].empty()
                                  ? fmt::format("dev {} ({})", d, options.device_labels[d])
                                  : fmt::format("dev {}", d);
    const auto pid = static_cast<std::uint32_t>(pid_of(DeviceId{d}));
    w.metadata("process_name", pid, 0, "name", std::string_view(label));
    w.metadata("process_sort_index", pid, 0, "sort_index", std::uint64_t{d});
  }
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    const LaneInfo& lane = graph.lane_info(LaneId{l});
    const auto pid = static_cast<std::uint32_t>(pid_of(lane.device));
    const auto tid = static_cast<std::uint32_t>(tid_of(LaneId{l}));
    w.metadata("thread_name", pid, tid, "name", std::string_view(lane.name));
    w.metadata("thread_sort_index", pid, tid, "sort_index", std::uint64_t{position[l]});
  }

  // One complete event per task, lane by lane in execution order: named by its label, its
  // kind as category, its stage as the one argument. Both tasks of an overlapped pair get the
  // pair's span (so a viewer shows both names over it) and name each other ("paired_with").
  for (std::uint32_t l = 0; l < trace.lane_count(); ++l) {
    const std::uint64_t pid = pid_of(graph.lane_info(LaneId{l}).device);
    const std::uint64_t tid = tid_of(LaneId{l});
    for (const TaskId t : trace.events(LaneId{l})) {
      const TaskId partner = graph.pair_partner(t);
      const detail::Span span = span_of(t);
      w.event([&](char* p) {
        const std::string_view kind = to_string(graph.kind(t));
        p = put(p, R"({"name":")");
        p = graph.put_label(p, t);  // kind names need no escaping
        p = put(p, R"(","ph":"X","pid":)");
        p = put(p, pid);
        p = put(p, R"(,"tid":)");
        p = put(p, tid);
        p = put(p, R"(,"cat":")");
        p = put(p, kind);
        p = put(p, R"(","ts":)");
        p = put_microseconds(p, span.start);
        p = put(p, R"(,"dur":)");
        p = put_microseconds(p, span.finish - span.start);
        p = put(p, R"(,"args":{"stage":)");
        p = put(p, std::uint64_t{graph.stage(t).value});
        if (iterations) {
          p = put(p, R"(,"iteration":)");
          p = put(p, std::uint64_t{graph.iteration(t)});
        }
        if (partner.valid()) {
          p = put(p, R"(,"paired_with":")");
          p = graph.put_label(p, partner);
          *p++ = '"';
        }
        return put(p, "}}");
      });
    }
  }

  // The flows: "s" then "f", matched by id. Each end sits strictly inside its slice where
  // it can (a slice's last and first nanosecond), so that both viewers bind it there ("f"
  // to its enclosing slice).
  std::uint64_t id = 0;
  for (const auto& [from, to] : flows) {
    ++id;
    const detail::Span source = span_of(from);
    const detail::Span target = span_of(to);
    const TimeNs out_at = std::max(source.start, source.finish - 1);  // start if it has no length
    const TimeNs in_at = target.finish - target.start >= 2 ? target.start + 1 : target.start;
    const auto flow_end = [&](char* p, char phase, TaskId task, TimeNs at) {
      p = put(p, R"({"name":"data","ph":")");
      *p++ = phase;
      p = put(p, R"(","pid":)");
      p = put(p, pid_of(graph.device(task)));
      p = put(p, R"(,"tid":)");
      p = put(p, tid_of(lane_of[task.value]));
      p = put(p, R"(,"id":)");
      p = put(p, id);
      if (phase == 'f') p = put(p, R"(,"bp":"e")");
      p = put(p, R"(,"ts":)");
      p = put_microseconds(p, at);
      *p++ = '}';
      return p;
    };
    w.event([&](char* p) { return flow_end(p, 's', from, out_at); });
    w.event([&](char* p) { return flow_end(p, 'f', to, in_at); });
  }

  // Activation memory per device as a counter track.
  for (std::uint32_t d = 0; d < devices; ++d) {
    for (const MemoryPoint& point : memory[d]) {
      w.event([&](char* p) {
        p = put(p, R"({"name":"memory","ph":"C","pid":)");
        p = put(p, pid_of(DeviceId{d}));
        p = put(p, R"(,"tid":)");
        p = put(p, tid_of(LaneId{d}));
        p = put(p, R"(,"ts":)");
        p = put_microseconds(p, point.time);
        return put(p, R"(,"args":{"activations":)");
      });
      append_counter_value(out, point.value);
      out += "}}";
    }
  }
  out += "\n]}\n";
  return out;
}

void write_chrome_trace(const std::filesystem::path& path, const EventGraph& graph,
                        const Trace& trace, const ChromeTraceOptions& options) {
  write_file_atomically(path, render_chrome_trace(graph, trace, options));
}

}  // namespace perflow::visualizer
