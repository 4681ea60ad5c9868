// Simulated traces as Kineto JSON (the layout of FORMATS.md section 1), for round trips
// through the readers and for opening simulations in trace viewers.
#include "perflow/reader/kineto_writer.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
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
constexpr std::string_view kSendRecv =
    "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)";

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
  // `bytes` >= 0: a communication kernel's message, as Kineto's `In msg nelems` and dtype.
  void kernel(std::string_view name, std::uint64_t thread, TimeNs at, int stream, TimeNs start,
              TimeNs end, std::int64_t bytes = -1) {
    const std::uint64_t correlation = next_correlation_++;
    Json launch = complete("cuda_runtime", "cudaLaunchKernel", kPid, thread, at, 0);
    launch["args"] = {{"correlation", correlation}, {"External id", correlation}};
    events_.push_back(std::move(launch));
    Json op = complete("kernel", name, 0, static_cast<std::uint64_t>(stream), start, end - start);
    op["args"] = {{"External id", correlation},
                  {"device", 0},
                  {"stream", stream},
                  {"correlation", correlation}};
    if (bytes >= 0) {
      const bool half = bytes % 2 == 0;
      op["args"]["In msg nelems"] = half ? bytes / 2 : bytes;
      op["args"]["dtype"] = half ? "BFloat16" : "Byte";
      op["args"]["Group size"] = 2;
    }
    events_.push_back(std::move(op));
  }

 private:
  Json& events_;
  std::uint64_t next_correlation_ = 1;
};

}  // namespace

std::string kineto_trace_json(const EventGraph& graph, const Trace& trace, DeviceId device,
                              const KinetoWriteOptions& options) {
  const bool transfers = options.transfer_bytes.has_value();
  if (options.launch_overhead < 0 || options.transfer_time < 0 ||
      (transfers && *options.transfer_bytes < 0)) {
    throw Error(
        "kineto_trace_json: launch overhead, transfer bytes and transfer time must not be "
        "negative");
  }
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
  const auto cover = [&](TaskId t, TimeNs start, TimeNs finish) {
    if (start < 0 || finish >= kLimit) {
      throw Error(
          fmt::format("kineto_trace_json: task {} on device {} lies outside "
                      "[0, 1000 s), which the writer keeps exact",
                      graph.label(t), device.value));
    }
    first = any ? std::min(first, start) : start;
    last = any ? std::max(last, finish) : finish;
    any = true;
  };
  bool blocking = false;  // the graph's transfers are SEND / RECV tasks on the compute lanes
  // An R (recomputation) is written as the start of the backward right after it, as a
  // checkpointed backward shows in a profile: its kernels run inside the backward's range.
  std::optional<TimeNs> recompute_start;
  for (const TaskId t : trace.events(device)) {
    const TaskKind kind = graph.kind(t);
    TimeNs start = trace.start_of(t);
    const TimeNs finish = trace.finish_of(t);
    if (kind == TaskKind::R) {
      recompute_start = start;
      continue;
    }
    if (recompute_start && (kind == TaskKind::B || kind == TaskKind::BW)) {
      start = *recompute_start;
      recompute_start.reset();
    }
    if (transfers && (kind == TaskKind::Send || kind == TaskKind::Recv)) {
      blocking = true;
      cover(t, start, finish);
      writer.kernel(kSendRecv, kMainThread, start, kComputeStream, start, finish,
                    *options.transfer_bytes);
      continue;
    }
    if (!is_compute(kind)) continue;  // communication lanes are not written
    cover(t, start, finish);
    const TimeNs duration = finish - start;
    const TimeNs cpu = duration / 2;  // the host is done before the GPU
    const std::uint32_t stage = graph.stage(t).value + graph.chunk(t) * graph.device_count();
    events.push_back(
        complete("user_annotation",
                 fmt::format("PP:{}{}{}", stage, marker_letter(kind), graph.microbatch(t)), kPid,
                 kMainThread, start, cpu));
    const std::uint64_t thread = kind == TaskKind::F ? kMainThread : kAutogradThread;
    const std::string stem = fmt::format("perflow_{}_kernel", to_string(kind));
    if (options.launch_overhead == 0) {
      writer.kernel(stem + "_a", thread, start, kComputeStream, start, start + cpu);
      writer.kernel(stem + "_b", thread, start + cpu / 2, kComputeStream, start + cpu, finish);
      if (duration >= 4) {  // overlaps the others: the union must not count it twice
        writer.kernel(stem + "_side", thread, start + cpu, kSideStream, start + duration / 4,
                      start + duration / 4 + cpu);
      }
    } else {
      // busy = duration - overhead, split in two kernels around one idle gap of the overhead.
      const TimeNs busy = duration - options.launch_overhead;
      if (busy < 0) {
        throw Error(
            fmt::format("kineto_trace_json: task {} on device {} lasts {} ns, less than the launch "
                        "overhead of {} ns folded into it",
                        graph.label(t), device.value, duration, options.launch_overhead));
      }
      const TimeNs head = busy / 2;
      const TimeNs tail_start = start + head + options.launch_overhead;
      writer.kernel(stem + "_a", thread, start, kComputeStream, start, start + head);
      writer.kernel(stem + "_b", thread, start + cpu / 2, kComputeStream, tail_start, finish);
      if (finish - tail_start >= 2) {  // inside the second: the union must not count it twice
        writer.kernel(stem + "_side", thread, start + cpu, kSideStream, tail_start,
                      tail_start + (finish - tail_start) / 2);
      }
    }
    if (!transfers) {
      writer.kernel(kSendRecv, thread, start + cpu, kNcclStream, finish, finish + 500);
    }
  }
  if (transfers && !blocking) {
    // Asynchronous transfers: every result that crosses to or from this device, once per
    // (producer, receiving device), from the producer's finish on both devices' NCCL stream.
    std::vector<std::uint32_t> receivers;
    // A gradient is received by the R that starts its backward, when there is one.
    const auto computes = [&](TaskId t) {
      return is_compute(graph.kind(t)) || graph.kind(t) == TaskKind::R;
    };
    for (std::uint32_t u = 0; u < graph.task_count(); ++u) {
      const TaskId from{u};
      if (!is_compute(graph.kind(from))) continue;
      receivers.clear();
      for (const Adjacent& s : graph.successors(from)) {
        const DeviceId to = graph.device(s.task());
        if (s.kind() == EdgeKind::Data && computes(s.task()) && to != graph.device(from) &&
            (graph.device(from) == device || to == device)) {
          receivers.push_back(to.value);
        }
      }
      std::sort(receivers.begin(), receivers.end());
      receivers.erase(std::unique(receivers.begin(), receivers.end()), receivers.end());
      const TimeNs at = trace.finish_of(from);
      for (std::size_t i = 0; i < receivers.size(); ++i) {
        cover(from, at, at + options.transfer_time);
        writer.kernel(kSendRecv, kMainThread, at, kNcclStream, at, at + options.transfer_time,
                      *options.transfer_bytes);
      }
    }
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
                         const Trace& trace, const KinetoWriteOptions& options) {
  std::vector<std::string> texts;
  texts.reserve(graph.device_count());
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    texts.push_back(kineto_trace_json(graph, trace, DeviceId{d}, options));
  }
  std::vector<std::pair<std::filesystem::path, std::string_view>> files;
  for (std::uint32_t d = 0; d < graph.device_count(); ++d) {
    files.emplace_back(directory / fmt::format("rank-{}.json", d), texts[d]);
  }
  write_files_atomically(files);
}

}  // namespace perflow::reader
