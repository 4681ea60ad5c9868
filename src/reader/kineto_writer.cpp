// Simulated traces as Kineto JSON (the layout of FORMATS.md section 1), for round trips
// through the readers and for opening simulations in trace viewers.
#include "perflow/reader/kineto_writer.hpp"

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "perflow/core/atomic_file.hpp"
#include "perflow/core/error.hpp"

namespace perflow::reader {
namespace {

using Json = nlohmann::ordered_json;  // Kineto writes "ph" and "cat" first

constexpr std::int64_t kBaseTime = 1'700'000'000'000'000'000;  // 2023-11-14, as a base
constexpr TimeNs kLimit = 1'000'000'000'000;
constexpr std::uint64_t kPid = 4242;
constexpr std::uint64_t kMainThread = 4242;
constexpr std::uint64_t kAutogradThread = 4250;
constexpr int kComputeStream = 7;
constexpr int kSideStream = 8;
constexpr int kNcclStream = 20;

// Microseconds as Kineto writes them (ns precision); exact for times below kLimit.
double us(TimeNs ns) { return static_cast<double>(ns) / 1000.0; }

char marker_letter(TaskKind kind) {
  switch (kind) {
    case TaskKind::F:
      return 'F';
    case TaskKind::B:
      return 'I';
    case TaskKind::W:
      return 'W';
    default:
      return 'B';  // BW: the full backward
  }
}

Json complete(std::string_view cat, std::string_view name, std::uint64_t pid, std::uint64_t tid,
              TimeNs start, TimeNs duration) {
  Json event;
  event["ph"] = "X";
  event["cat"] = cat;
  event["name"] = name;
  event["pid"] = pid;
  event["tid"] = tid;
  event["ts"] = us(start);
  event["dur"] = us(duration);
  return event;
}

class EventWriter {
 public:
  explicit EventWriter(Json& events) : events_(events) {}

  // A launch on `thread` at `at` and its kernel on `stream` over [start, end].
  void kernel(std::string_view name, std::uint64_t thread, TimeNs at, int stream, TimeNs start,
              TimeNs end) {
    const std::uint64_t correlation = next_correlation_++;
    Json launch = complete("cuda_runtime", "cudaLaunchKernel", kPid, thread, at, 0);
    launch["args"] = {{"correlation", correlation}, {"External id", correlation}};
    events_.push_back(std::move(launch));
    Json op = complete("kernel", name, 0, static_cast<std::uint64_t>(stream), start, end - start);
    op["args"] = {{"External id", correlation},
                  {"device", 0},
                  {"stream", stream},
                  {"correlation", correlation}};
    events_.push_back(std::move(op));
  }

 private:
  Json& events_;
  std::uint64_t next_correlation_ = 1;
};

}  // namespace

std::string kineto_trace_json(const EventGraph& graph, const Trace& trace, DeviceId device) {
  Json events = Json::array();
  Json process;
  process["ph"] = "M";
  process["name"] = "process_name";
  process["pid"] = kPid;
  process["tid"] = 0;
  process["args"] = {{"name", "python"}};
  events.push_back(std::move(process));
  Json autograd;
  autograd["ph"] = "M";
  autograd["name"] = "thread_name";
  autograd["pid"] = kPid;
  autograd["tid"] = kAutogradThread;
  autograd["args"] = {{"name", fmt::format("thread {} (pt_autograd_0)", kAutogradThread)}};
  events.push_back(std::move(autograd));

  EventWriter writer(events);
  TimeNs first = 0;
  TimeNs last = 0;
  bool any = false;
  for (const TaskId t : trace.events(device)) {
    const TaskKind kind = graph.kind(t);
    if (!is_compute(kind)) continue;  // communication lanes are not written
    const TimeNs start = trace.start_of(t);
    const TimeNs finish = trace.finish_of(t);
    if (start < 0 || finish >= kLimit) {
      throw Error(
          fmt::format("kineto_trace_json: task {} on device {} lies outside "
                      "[0, 1000 s), which the writer keeps exact",
                      graph.label(t), device.value));
    }
    first = any ? std::min(first, start) : start;
    last = any ? std::max(last, finish) : finish;
    any = true;
    const TimeNs duration = finish - start;
    const TimeNs cpu = duration / 2;  // the host is done before the GPU
    const std::uint32_t stage = graph.stage(t).value + graph.chunk(t) * graph.device_count();
    events.push_back(
        complete("user_annotation",
                 fmt::format("PP:{}{}{}", stage, marker_letter(kind), graph.microbatch(t)), kPid,
                 kMainThread, start, cpu));
    const std::uint64_t thread = kind == TaskKind::F ? kMainThread : kAutogradThread;
    const std::string stem = fmt::format("perflow_{}_kernel", to_string(kind));
    writer.kernel(stem + "_a", thread, start, kComputeStream, start, start + cpu);
    writer.kernel(stem + "_b", thread, start + cpu / 2, kComputeStream, start + cpu, finish);
    if (duration >= 4) {  // overlaps the others: the union must not count it twice
      writer.kernel(stem + "_side", thread, start + cpu, kSideStream, start + duration / 4,
                    start + duration / 4 + cpu);
    }
    writer.kernel("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", thread,
                  start + cpu, kNcclStream, finish, finish + 500);
  }
  if (any) {
    events.push_back(
        complete("user_annotation", "ProfilerStep#1", kPid, kMainThread, first, last - first));
  }

  Json document;
  document["schemaVersion"] = 1;
  document["deviceProperties"] = Json::array({{{"id", 0}, {"name", "PerFlow simulated GPU"}}});
  document["distributedInfo"] = {
      {"backend", "nccl"}, {"rank", device.value}, {"world_size", graph.device_count()}};
  document["traceEvents"] = std::move(events);
  document["displayTimeUnit"] = "ms";
  document["baseTimeNanoseconds"] = kBaseTime;
  return document.dump() + "\n";
}

void write_kineto_traces(const std::filesystem::path& directory, const EventGraph& graph,
                         const Trace& trace) {
  std::vector<std::string> texts;
  texts.reserve(graph.device_count());
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    texts.push_back(kineto_trace_json(graph, trace, DeviceId{d}));
  }
  std::vector<std::pair<std::filesystem::path, std::string_view>> files;
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    files.emplace_back(directory / fmt::format("rank-{}.json", d), texts[d]);
  }
  write_files_atomically(files);
}

}  // namespace perflow::reader
