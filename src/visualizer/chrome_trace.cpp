#include "perflow/visualizer/chrome_trace.hpp"

#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/timeline_panel.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/visualizer/memory_series.hpp"

// The document is written event by event rather than built as one nlohmann::json value: a
// million tasks would cost gigabytes as a DOM, and times must be printed exactly from integer
// nanoseconds ("1315.000" us), which a double cannot promise. Every string still goes
// through nlohmann's escaping.
namespace perflow::visualizer {
namespace {

/// Appends `text` as a JSON string literal (escaped; invalid UTF-8 replaced, never thrown).
void append_string(std::string& out, std::string_view text) {
  bool plain = true;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    plain = plain && u >= 0x20 && u < 0x80 && c != '"' && c != '\\';
  }
  if (plain) {
    out += '"';
    out += text;
    out += '"';
    return;
  }
  out += nlohmann::json(std::string(text))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_string(std::string_view text) {
  std::string out;
  append_string(out, text);
  return out;
}

/// Appends nanoseconds as microseconds with exactly three decimals, by integer arithmetic.
void append_microseconds(std::string& out, TimeNs ns) {
  const bool negative = ns < 0;
  const auto magnitude =
      negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  fmt::format_to(std::back_inserter(out), "{}{}.{:03}", negative ? "-" : "", magnitude / 1000,
                 magnitude % 1000);
}

class EventWriter {
 public:
  explicit EventWriter(std::string& out) : out_(out) {}

  /// Starts an event object: the fields every event has.
  void begin(std::string_view name, char phase, std::uint32_t pid, std::uint32_t tid) {
    out_ += first_ ? "\n{\"name\":" : ",\n{\"name\":";
    first_ = false;
    append_string(out_, name);
    fmt::format_to(std::back_inserter(out_), R"(,"ph":"{}","pid":{},"tid":{})", phase, pid, tid);
  }
  void time(std::string_view key, TimeNs ns) {
    field(key);
    append_microseconds(out_, ns);
  }
  void string(std::string_view key, std::string_view value) {
    field(key);
    append_string(out_, value);
  }
  void number(std::string_view key, std::uint64_t value) {
    field(key);
    fmt::format_to(std::back_inserter(out_), "{}", value);
  }
  /// A field whose value is already JSON.
  void raw(std::string_view key, std::string_view json) {
    field(key);
    out_ += json;
  }
  void end() { out_ += '}'; }

 private:
  void field(std::string_view key) {
    out_ += ",\"";
    out_ += key;
    out_ += "\":";
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
  const auto pid_of = [](DeviceId d) { return d.value + 1; };
  const auto tid_of = [](LaneId l) { return l.value + 1; };
  // Each task's lane as executed (the trace's), for flows.
  std::vector<LaneId> lane_of(graph.task_count());
  for (std::uint32_t l = 0; l < trace.lane_count(); ++l) {
    for (const TaskId t : trace.events(LaneId{l})) lane_of[t.value] = LaneId{l};
  }

  std::string out;
  out.reserve(graph.task_count() * 200 + 4096);
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
    w.begin("process_name", 'M', pid_of(DeviceId{d}), 0);
    w.raw("args", fmt::format(R"({{"name":{}}})", json_string(label)));
    w.end();
    w.begin("process_sort_index", 'M', pid_of(DeviceId{d}), 0);
    w.raw("args", fmt::format(R"({{"sort_index":{}}})", d));
    w.end();
  }
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    const LaneInfo& lane = graph.lane_info(LaneId{l});
    w.begin("thread_name", 'M', pid_of(lane.device), tid_of(LaneId{l}));
    w.raw("args", fmt::format(R"({{"name":{}}})", json_string(lane.name)));
    w.end();
    w.begin("thread_sort_index", 'M', pid_of(lane.device), tid_of(LaneId{l}));
    w.raw("args", fmt::format(R"({{"sort_index":{}}})", position[l]));
    w.end();
  }

  // One complete event per task, lane by lane in execution order. Kind names need no
  // escaping.
  std::string label;
  for (std::uint32_t l = 0; l < trace.lane_count(); ++l) {
    const DeviceId device = graph.lane_info(LaneId{l}).device;
    for (const TaskId t : trace.events(LaneId{l})) {
      const std::string_view kind = to_string(graph.kind(t));
      label.clear();
      fmt::format_to(std::back_inserter(label), "{}{}.{}", kind, graph.microbatch(t),
                     graph.chunk(t));  // graph.label(t), without an allocation per task
      w.begin(label, 'X', pid_of(device), tid_of(LaneId{l}));
      w.string("cat", kind);
      w.time("ts", trace.start_of(t));
      w.time("dur", trace.finish_of(t) - trace.start_of(t));
      fmt::format_to(std::back_inserter(out),
                     R"(,"args":{{"kind":"{}","microbatch":{},"chunk":{},"stage":{}}})", kind,
                     graph.microbatch(t), graph.chunk(t), graph.stage(t).value);
      w.end();
    }
  }

  // A flow per data dependence between devices. Each end sits strictly inside its slice
  // where it can (a slice's last and first nanosecond), so that both viewers bind it there.
  // Lane by lane in the order things ran, so the file does not depend on task ids.
  std::uint64_t flow = 0;
  for (std::uint32_t l = 0; l < trace.lane_count(); ++l) {
    for (const TaskId from : trace.events(LaneId{l})) {
      const std::uint32_t u = from.value;
      if (lane_of[u] != LaneId{l}) continue;  // listed twice: its flows leave from one lane
      for (const Adjacent& s : graph.successors(from)) {
        const TaskId to = s.task();
        if (s.kind() != EdgeKind::Data || graph.device(to) == graph.device(from) ||
            !lane_of[to.value].valid()) {
          continue;
        }
        ++flow;
        const TimeNs out_at =
            std::max(trace.start_of(from), trace.finish_of(from) - 1);  // start if it has no length
        const TimeNs in_at = trace.finish_of(to) - trace.start_of(to) >= 2 ? trace.start_of(to) + 1
                                                                           : trace.start_of(to);
        w.begin("dependence", 's', pid_of(graph.device(from)), tid_of(lane_of[u]));
        w.string("cat", "dependence");
        w.number("id", flow);
        w.time("ts", out_at);
        w.end();
        w.begin("dependence", 'f', pid_of(graph.device(to)), tid_of(lane_of[to.value]));
        w.string("cat", "dependence");
        w.number("id", flow);
        w.string("bp", "e");
        w.time("ts", in_at);
        w.end();
      }
    }
  }

  // Activation memory per device as a counter track.
  for (std::uint32_t d = 0; d < devices; ++d) {
    for (const MemoryPoint& p : activation_memory(graph, trace, DeviceId{d})) {
      w.begin("memory", 'C', pid_of(DeviceId{d}), tid_of(LaneId{d}));
      w.time("ts", p.time);
      w.raw("args", fmt::format(R"({{"activations":{}}})", nlohmann::json(p.value).dump()));
      w.end();
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
