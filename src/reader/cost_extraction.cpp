// From per-rank kernel traces to per-stage F / B / W costs (FORMATS.md section 5): classify
// ranges, attribute GPU ops by launch, build tasks, take medians over steady iterations.
#include "perflow/reader/cost_extraction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::reader {
namespace {

constexpr std::uint32_t kMaxStage = 65535;  // the config's limit on pipeline stages
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

bool is_communication(GpuOpKind kind) {
  return kind == GpuOpKind::Collective || kind == GpuOpKind::P2P;
}

// NCCL / RCCL all-reduce kernels: ncclKernel_AllReduce_*, ncclDevKernel_AllReduce_*.
bool names_an_all_reduce(std::string_view name) {
  const std::string_view function = name.substr(0, name.find('('));
  static constexpr std::string_view kWord = "allreduce";
  for (std::size_t i = 0; i + kWord.size() <= function.size(); ++i) {
    bool match = true;
    for (std::size_t k = 0; k < kWord.size() && match; ++k) {
      match = (static_cast<unsigned char>(function[i + k]) | 0x20U) ==
              static_cast<unsigned char>(kWord[k]);
    }
    if (match) return true;
  }
  return false;
}

// The lower median: a measured value, never an average of two.
TimeNs lower_median(std::vector<TimeNs> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

std::int64_t lower_median_bytes(std::vector<std::int64_t> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

// A marked range of one profile.
struct Marked {
  std::uint32_t range = 0;
  const MarkerMatch* match = nullptr;
};

// Classifies each distinct range name once.
std::vector<Marked> classify_ranges(const KernelTrace& trace, const MarkerClassifier& classifier,
                                    std::vector<MarkerMatch>& storage) {
  constexpr std::int64_t kUnseen = -2;
  constexpr std::int64_t kNoMatch = -1;
  std::vector<std::int64_t> by_name(trace.names.size(), kUnseen);
  std::vector<std::pair<std::uint32_t, std::int64_t>> hits;  // (range, match index)
  for (std::size_t r = 0; r < trace.ranges.size(); ++r) {
    const std::uint32_t name = trace.ranges[r].name;
    std::int64_t& slot = by_name[name];
    if (slot == kUnseen) {
      if (auto match = classifier.classify(trace.names[name])) {
        slot = static_cast<std::int64_t>(storage.size());
        storage.push_back(std::move(*match));
      } else {
        slot = kNoMatch;
      }
    }
    if (slot >= 0) hits.emplace_back(static_cast<std::uint32_t>(r), slot);
  }
  // Pointers only once storage stops growing.
  std::vector<Marked> marked;
  marked.reserve(hits.size());
  for (const auto& [range, index] : hits) {
    marked.push_back({range, &storage[static_cast<std::size_t>(index)]});
  }
  return marked;
}

[[noreturn]] void nothing_matched(std::span<const KernelTrace> traces,
                                  const MarkerClassifier& classifier) {
  std::vector<std::string> files;
  for (const KernelTrace& trace : traces) files.push_back(trace.path);
  const std::string what =
      classifier.name() == "pattern"
          ? fmt::format("the pattern '{}'", classifier.description())
          : fmt::format("the '{}' markers ({})", classifier.name(), classifier.description());
  throw Error(fmt::format("{}: no range matched {}; {}", fmt::join(files, ", "), what,
                          most_frequent_range_names(traces)));
}

struct Step {
  TimeNs start = 0;
  TimeNs end = 0;
  std::int64_t number = 0;
};

// ProfilerStep#N ranges, by start.
std::vector<Step> profiler_steps(const KernelTrace& trace) {
  static constexpr std::string_view kPrefix = "ProfilerStep#";
  std::vector<Step> steps;
  for (const Range& range : trace.ranges) {
    const std::string& name = trace.names[range.name];
    if (!std::string_view(name).starts_with(kPrefix)) continue;
    std::int64_t number = 0;
    bool digits = name.size() > kPrefix.size();
    for (std::size_t i = kPrefix.size(); i < name.size() && digits; ++i) {
      digits = name[i] >= '0' && name[i] <= '9' && number < (std::int64_t{1} << 58);
      if (digits) number = number * 10 + (name[i] - '0');
    }
    steps.push_back(
        {range.start, range.end, digits ? number : static_cast<std::int64_t>(steps.size())});
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const Step& a, const Step& b) { return a.start < b.start; });
  return steps;
}

// The step whose [start, end] holds t, or null.
const Step* step_at(const std::vector<Step>& steps, TimeNs t) {
  auto it = std::upper_bound(steps.begin(), steps.end(), t,
                             [](TimeNs time, const Step& step) { return time < step.start; });
  if (it == steps.begin()) return nullptr;
  --it;
  return t <= it->end ? &*it : nullptr;
}

struct TaskKey {
  std::int64_t iteration;
  std::uint32_t marker_stage;
  std::uint32_t chunk;
  MarkerKind kind;
  std::uint32_t microbatch;
  std::string part;

  auto tie() const { return std::tie(iteration, marker_stage, chunk, kind, microbatch, part); }
  bool operator<(const TaskKey& other) const { return tie() < other.tie(); }
};

// Whether `op` runs (for a positive time) while one of the disjoint, sorted intervals does.
bool overlaps(const std::vector<TimeInterval>& intervals, const GpuOp& op) {
  const auto it =
      std::upper_bound(intervals.begin(), intervals.end(), op.start,
                       [](TimeNs t, const TimeInterval& interval) { return t < interval.end; });
  return it != intervals.end() && it->start < op.end && op.start < op.end;
}

// Builds one profile's tasks (appended to `tasks`) and fills its summary.
void measure_profile(const KernelTrace& trace, std::uint32_t profile, std::uint32_t stage,
                     const std::vector<Marked>& marked,
                     const std::vector<std::uint32_t>& marker_stages, ProfileSummary& summary,
                     std::vector<MeasuredTask>& tasks, ProfileActivity& activity,
                     std::vector<CommunicationCall>& calls) {
  std::vector<std::uint32_t> selected;
  selected.reserve(marked.size());
  for (const Marked& m : marked) selected.push_back(m.range);
  const Attribution attribution = attribute_ops(trace, selected);
  summary.method = attribution.method;
  summary.ops_without_launch = attribution.ops_without_launch;

  const std::vector<Step> steps = profiler_steps(trace);
  for (const Step& step : steps) summary.iterations.push_back(step.number);
  summary.warmup_dropped = steps.size() >= 3;

  std::map<TaskKey, std::size_t> by_key;     // tasks whose microbatch the marker names
  std::map<TaskKey, std::uint32_t> ordinal;  // numbering of the others (microbatch 0 in key)
  std::vector<std::vector<std::uint32_t>> task_ops;
  const std::size_t base = tasks.size();
  // Net device allocations in [start, end] of host time, from prefix sums over the events.
  summary.memory_events = trace.memory.size();
  std::vector<std::int64_t> allocated_before(trace.memory.size() + 1, 0);
  for (std::size_t e = 0; e < trace.memory.size(); ++e) {
    allocated_before[e + 1] = allocated_before[e] + trace.memory[e].bytes;
  }
  const auto allocated_in = [&](TimeNs start, TimeNs end) {
    const auto by_time = [](const MemoryEvent& event, TimeNs t) { return event.time < t; };
    const auto first = std::lower_bound(trace.memory.begin(), trace.memory.end(), start, by_time);
    const auto last =
        std::upper_bound(trace.memory.begin(), trace.memory.end(), end,
                         [](TimeNs t, const MemoryEvent& event) { return t < event.time; });
    return allocated_before[static_cast<std::size_t>(last - trace.memory.begin())] -
           allocated_before[static_cast<std::size_t>(first - trace.memory.begin())];
  };
  for (std::size_t i = 0; i < marked.size(); ++i) {
    const Range& range = trace.ranges[marked[i].range];
    const MarkerMatch& match = *marked[i].match;
    ++summary.matched[static_cast<std::size_t>(match.kind)];
    const Step* step = step_at(steps, range.start);
    const std::int64_t allocated = allocated_in(range.start, range.end);
    std::uint32_t chunk = match.chunk.value_or(0);
    if (!match.chunk && match.stage && marker_stages.size() > 1) {
      chunk = static_cast<std::uint32_t>(
          std::lower_bound(marker_stages.begin(), marker_stages.end(), *match.stage) -
          marker_stages.begin());
    }
    TaskKey key{step != nullptr ? step->number : -1,
                match.stage.value_or(kNone),
                chunk,
                match.kind,
                0,
                match.part};
    std::size_t task = 0;
    if (match.microbatch) {
      key.microbatch = *match.microbatch;
      const auto [it, inserted] = by_key.try_emplace(key, tasks.size());
      task = it->second;
      if (!inserted) {
        ++tasks[task].ranges;
        tasks[task].allocated += allocated;
        task_ops[task - base].insert(task_ops[task - base].end(), attribution.ops_of(i).begin(),
                                     attribution.ops_of(i).end());
        continue;
      }
    } else {
      key.microbatch = ordinal[key]++;
      task = tasks.size();
    }
    MeasuredTask t;
    t.profile = profile;
    t.stage = stage;
    t.chunk = chunk;
    t.kind = match.kind;
    t.microbatch = key.microbatch;
    t.part = match.part;
    t.iteration = key.iteration;
    t.warmup = summary.warmup_dropped && step == &steps.front();
    t.ranges = 1;
    t.allocated = allocated;
    if (step == nullptr && !steps.empty()) ++summary.tasks_outside_steps;
    tasks.push_back(std::move(t));
    task_ops.emplace_back(attribution.ops_of(i).begin(), attribution.ops_of(i).end());
  }
  for (std::size_t i = 0; i < marked.size(); ++i) {
    const auto ops = attribution.ops_of(i);
    if (std::none_of(ops.begin(), ops.end(),
                     [&](std::uint32_t op) { return !is_communication(trace.ops[op].kind); })) {
      ++summary.empty_ranges;
    }
  }
  for (std::size_t op = 0; op < trace.ops.size(); ++op) {
    if (is_communication(trace.ops[op].kind)) {
      ++summary.communication_ops;
    } else if (attribution.owner[op] == kNoRange) {
      ++summary.compute_ops_outside;
    }
  }

  // What the GPU did: the union of each kind of op.
  const auto add = [](std::vector<TimeInterval>& out, const GpuOp& op) {
    if (!out.empty() && op.start <= out.back().end) {
      out.back().end = std::max(out.back().end, op.end);
    } else {
      out.push_back({op.start, op.end});
    }
  };
  for (std::size_t index = 0; index < trace.ops.size(); ++index) {
    const GpuOp& op = trace.ops[index];
    add(is_communication(op.kind)              ? activity.communication
        : attribution.owner[index] != kNoRange ? activity.task_compute
                                               : activity.other_compute,
        op);
  }

  // Communication calls: the iteration and kind of the range that launched them.
  std::vector<const MarkerMatch*> match_of_range(trace.ranges.size(), nullptr);
  for (const Marked& m : marked) match_of_range[m.range] = m.match;
  for (std::size_t index = 0; index < trace.ops.size(); ++index) {
    const GpuOp& op = trace.ops[index];
    if (!is_communication(op.kind)) continue;
    const std::uint32_t owner = attribution.owner[index];
    const Step* step = step_at(steps, owner != kNoRange ? trace.ranges[owner].start : op.start);
    CommunicationCall call;
    call.profile = profile;
    call.kind = op.kind;
    call.duration = op.end - op.start;
    call.bytes = op.bytes;
    call.group_size = op.group_size > 0 ? op.group_size
                      : trace.world_size > 0 && trace.world_size <= kMaxStage
                          ? static_cast<std::uint32_t>(trace.world_size)
                          : 0;
    call.all_reduce = names_an_all_reduce(trace.names[op.name]);
    call.iteration = step != nullptr ? step->number : -1;
    call.outside_steps = step == nullptr && !steps.empty();
    call.warmup = summary.warmup_dropped && step == &steps.front();
    call.in_forward = owner != kNoRange && match_of_range[owner] != nullptr &&
                      match_of_range[owner]->kind == MarkerKind::Forward;
    call.overlaps_compute =
        overlaps(activity.task_compute, op) || overlaps(activity.other_compute, op);
    calls.push_back(call);
  }

  // Busy time: the union of the compute ops' intervals (ops are in start order).
  std::size_t kept = base;
  for (std::size_t k = base; k < tasks.size(); ++k) {
    std::vector<std::uint32_t>& ops = task_ops[k - base];
    std::sort(ops.begin(), ops.end());
    MeasuredTask& task = tasks[k];
    TimeNs open_start = 0;
    TimeNs open_end = 0;
    bool any = false;
    for (const std::uint32_t index : ops) {
      const GpuOp& op = trace.ops[index];
      if (is_communication(op.kind)) continue;
      ++task.ops;
      if (!any) {
        any = true;
        task.first_start = op.start;
        open_start = op.start;
        open_end = op.end;
      } else if (op.start > open_end) {
        task.busy += open_end - open_start;
        open_start = op.start;
        open_end = op.end;
      } else {
        open_end = std::max(open_end, op.end);
      }
      task.last_end = std::max(task.last_end, op.end);
    }
    if (!any) continue;  // launched no GPU compute: nothing to measure
    task.busy += open_end - open_start;
    if (kept != k) tasks[kept] = std::move(task);
    ++kept;
  }
  tasks.resize(kept);
  std::map<std::int64_t, std::uint32_t> forwards;  // F tasks per iteration
  for (std::size_t k = base; k < tasks.size(); ++k) {
    if (tasks[k].kind == MarkerKind::Forward) ++forwards[tasks[k].iteration];
  }
  for (CommunicationCall& call : calls) {
    if (call.profile != profile) continue;
    const auto it = forwards.find(call.iteration);
    call.forward_tasks = it == forwards.end() ? 0 : it->second;
  }
}

// Per communication kernel name, over all profiles.
std::vector<CommunicationCost> communication_costs(std::span<const KernelTrace> traces) {
  struct PerRank {
    GpuOpKind kind = GpuOpKind::Collective;
    std::vector<TimeNs> durations;
    std::vector<std::int64_t> bytes;
  };
  std::map<std::string, std::vector<PerRank>> by_name;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    std::map<std::string, PerRank> rank;
    for (const GpuOp& op : traces[i].ops) {
      if (!is_communication(op.kind)) continue;
      const std::string& full = traces[i].names[op.name];
      PerRank& entry = rank[full.substr(0, full.find('('))];
      entry.kind = op.kind;
      entry.durations.push_back(op.end - op.start);
      if (op.bytes >= 0) entry.bytes.push_back(op.bytes);
    }
    for (auto& [name, entry] : rank) by_name[name].push_back(std::move(entry));
  }
  std::vector<CommunicationCost> out;
  for (auto& [name, ranks] : by_name) {
    CommunicationCost cost;
    cost.name = name;
    cost.kind = ranks.front().kind;
    cost.ranks = static_cast<std::uint32_t>(ranks.size());
    std::vector<std::int64_t> bytes;
    bool same_count = true;
    for (const PerRank& rank : ranks) {
      cost.count = std::max(cost.count, rank.durations.size());
      same_count = same_count && rank.durations.size() == ranks.front().durations.size();
      bytes.insert(bytes.end(), rank.bytes.begin(), rank.bytes.end());
    }
    if (!bytes.empty()) cost.bytes = lower_median_bytes(std::move(bytes));
    if (ranks.size() == 1) {
      cost.median = lower_median(ranks.front().durations);
      cost.method = "one rank";
    } else if (same_count) {
      std::vector<TimeNs> fastest = ranks.front().durations;
      for (const PerRank& rank : ranks) {
        for (std::size_t k = 0; k < fastest.size(); ++k) {
          fastest[k] = std::min(fastest[k], rank.durations[k]);
        }
      }
      cost.median = lower_median(std::move(fastest));
      cost.method = "min over ranks per call";
    } else {
      cost.median = std::numeric_limits<TimeNs>::max();
      for (const PerRank& rank : ranks) {
        cost.median = std::min(cost.median, lower_median(rank.durations));
      }
      cost.method = "min of rank medians";
    }
    out.push_back(std::move(cost));
  }
  return out;
}

// The simulator's bytes time of a transfer, ceil(bytes / bandwidth x 1e9) in doubles exactly
// as simulator::CommunicationCost::transfer computes it (the reader does not link the
// simulator).
double simulated_bytes_time(double bytes, double bandwidth) {
  return std::ceil(bytes / bandwidth * 1e9);
}

// Point-to-point calls of one message size: a time T (their mean, to the ns) cannot be split
// into latency and bandwidth time, so the bandwidth is the lowest whole bytes/s whose
// simulated bytes time does not exceed T, and the latency the rest (under a few ns): the
// simulator gives T back exactly, and scaled messages scale with the bandwidth.
std::optional<FittedLink> exact_single_size_link(double bytes, double mean_ns,
                                                 std::size_t samples) {
  const double time = std::round(mean_ns);
  if (!(time >= 1)) return std::nullopt;
  double bandwidth = std::max(1.0, std::ceil(bytes * 1e9 / time));
  while (bandwidth < 1e18 && simulated_bytes_time(bytes, bandwidth) > time) bandwidth += 1;
  if (!(bandwidth < 1e18)) return std::nullopt;
  FittedLink link;
  link.samples = samples;
  link.bandwidth = static_cast<std::int64_t>(bandwidth);
  link.latency = static_cast<TimeNs>(time - simulated_bytes_time(bytes, bandwidth));
  link.method =
      "one message size: the bandwidth whose transfer time is the calls' mean time, the "
      "latency the rest to the ns";
  return link;
}

// duration = steps x latency + factor x bytes / bandwidth over the calls, by least squares
// when they have two sizes or more; otherwise (or when that fit is not physical: a negative
// latency or a non-positive slope) the whole time is bandwidth time, or, for point-to-point
// calls (`exact`: steps = factor = 1) of one size, exact_single_size_link.
std::optional<FittedLink> fit_link(const std::vector<const CommunicationCall*>& calls, double steps,
                                   double factor, bool exact = false) {
  std::vector<std::pair<double, double>> points;  // (bytes, ns)
  for (const CommunicationCall* call : calls) {
    if (call->bytes > 0 && call->duration > 0) {
      points.emplace_back(static_cast<double>(call->bytes), static_cast<double>(call->duration));
    }
  }
  if (points.empty()) return std::nullopt;
  FittedLink link;
  link.samples = points.size();
  double sum_x = 0;
  double sum_y = 0;
  for (const auto& [x, y] : points) {
    sum_x += x;
    sum_y += y;
  }
  const auto n = static_cast<double>(points.size());
  const double mean_x = sum_x / n;
  const double mean_y = sum_y / n;
  double sxx = 0;
  double sxy = 0;
  for (const auto& [x, y] : points) {
    sxx += (x - mean_x) * (x - mean_x);
    sxy += (x - mean_x) * (y - mean_y);
  }
  if (exact && sxx == 0) return exact_single_size_link(mean_x, mean_y, points.size());
  double intercept = 0;
  double slope = sum_y / sum_x;  // ns per byte
  link.method = "one message size: all of its time taken as bandwidth time";
  if (sxx > 0) {
    const double fitted_slope = sxy / sxx;
    const double fitted_intercept = mean_y - fitted_slope * mean_x;
    if (fitted_slope > 0 && fitted_intercept >= 0) {
      slope = fitted_slope;
      intercept = fitted_intercept;
      link.method = "least squares over the calls' sizes";
    } else {
      link.method = "the sizes fit no positive latency: all of the time taken as bandwidth time";
    }
  }
  link.latency = std::llround(intercept / steps);
  // bytes/s = factor x bytes / (slope x bytes) x 1e9
  const double bandwidth = factor * 1e9 / slope;
  if (!(bandwidth >= 1 && bandwidth < 1e18)) return std::nullopt;
  link.bandwidth = std::llround(bandwidth);
  return link;
}

// The lower median of the per-group sums (bytes) or counts.
template <class Key>
std::optional<std::int64_t> median_of_sums(const std::map<Key, std::int64_t>& sums) {
  if (sums.empty()) return std::nullopt;
  std::vector<std::int64_t> values;
  for (const auto& [key, value] : sums) values.push_back(value);
  return lower_median_bytes(std::move(values));
}

std::uint32_t common_group_size(const std::vector<const CommunicationCall*>& calls) {
  std::map<std::uint32_t, std::size_t> counts;
  for (const CommunicationCall* call : calls) {
    if (call->group_size > 0) ++counts[call->group_size];
  }
  std::uint32_t best = 0;
  std::size_t most = 0;
  for (const auto& [size, count] : counts) {
    if (count > most) {
      best = size;
      most = count;
    }
  }
  return best;
}

MeasuredCommunication measured_communication(const std::vector<CommunicationCall>& calls,
                                             std::vector<std::string>& notes) {
  MeasuredCommunication out;
  std::vector<const CommunicationCall*> gradient;
  std::vector<const CommunicationCall*> tensor;
  std::vector<const CommunicationCall*> p2p;
  std::size_t without_bytes = 0;
  for (const CommunicationCall& call : calls) {
    if (call.warmup || call.outside_steps) continue;
    if (call.bytes < 0) {
      ++without_bytes;
      continue;
    }
    if (call.kind == GpuOpKind::P2P) {
      p2p.push_back(&call);
    } else if (call.all_reduce) {
      (call.in_forward ? tensor : gradient).push_back(&call);
    }
  }
  if (!gradient.empty()) {
    std::map<std::pair<std::uint32_t, std::int64_t>, std::int64_t> sums;
    for (const CommunicationCall* call : gradient) {
      sums[{call->profile, call->iteration}] += call->bytes;
    }
    out.gradient_bytes = median_of_sums(sums);
    out.data_parallel = common_group_size(gradient);
    if (out.data_parallel > 1) {
      const double n = out.data_parallel;
      out.data_parallel_link = fit_link(gradient, 2 * (n - 1), 2 * (n - 1) / n);
    }
  }
  if (!tensor.empty()) {
    std::map<std::pair<std::uint32_t, std::int64_t>, std::int64_t> per_forward;
    std::vector<std::int64_t> bytes;
    for (const CommunicationCall* call : tensor) {
      ++per_forward[{call->profile, call->iteration}];
      bytes.push_back(call->bytes);
    }
    for (auto& [key, count] : per_forward) {
      const auto it = std::find_if(tensor.begin(), tensor.end(), [&](const auto* call) {
        return call->profile == key.first && call->iteration == key.second;
      });
      count = (*it)->forward_tasks > 0 ? count / (*it)->forward_tasks : count;
    }
    out.tp_allreduce_bytes = lower_median_bytes(std::move(bytes));
    out.tp_allreduces = static_cast<std::uint32_t>(median_of_sums(per_forward).value_or(0));
    out.tensor_parallel = common_group_size(tensor);
    if (out.tensor_parallel > 1) {
      const double n = out.tensor_parallel;
      out.tensor_parallel_link = fit_link(tensor, 2 * (n - 1), 2 * (n - 1) / n);
    }
  }
  if (!p2p.empty()) {
    std::vector<std::int64_t> bytes;
    for (const CommunicationCall* call : p2p) bytes.push_back(call->bytes);
    out.boundary_bytes = lower_median_bytes(std::move(bytes));
    out.p2p_link = fit_link(p2p, 1, 1, true);
  }
  std::size_t p2p_calls = 0;
  std::size_t p2p_overlapping = 0;
  for (const CommunicationCall& call : calls) {
    if (call.warmup || call.outside_steps || call.kind != GpuOpKind::P2P) continue;
    ++p2p_calls;
    if (call.overlaps_compute) ++p2p_overlapping;
  }
  if (p2p_calls > 0) out.p2p_blocking = p2p_overlapping == 0;
  if (!gradient.empty() || !tensor.empty() || !p2p.empty()) {
    notes.push_back(
        "links are fitted to the communication kernels' durations, which include waiting for "
        "peers: the bandwidths are lower bounds");
  }
  if (without_bytes > 0 && gradient.empty() && tensor.empty() && p2p.empty()) {
    notes.push_back(fmt::format(
        "{} communication kernel{} without message sizes in the profile: no link or bytes "
        "measured",
        without_bytes, without_bytes == 1 ? "" : "s"));
  }
  return out;
}

}  // namespace

ExtractedCosts extract_costs(std::span<const KernelTrace> traces,
                             const MarkerClassifier& classifier, const ExtractionOptions& options) {
  ExtractedCosts out;
  out.marker = classifier.name();
  if (traces.size() > kMaxStage) throw Error("too many profiles (at most 65535)");

  // Classify every profile's ranges first: the stage rule looks at all of them.
  std::vector<std::vector<MarkerMatch>> storage(traces.size());
  std::vector<std::vector<Marked>> marked(traces.size());
  std::vector<std::vector<std::uint32_t>> marker_stages(traces.size());
  bool any = false;
  bool one_marker_stage_each = true;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    marked[i] = classify_ranges(traces[i], classifier, storage[i]);
    std::set<std::uint32_t> stages;
    bool all_staged = true;
    for (const Marked& m : marked[i]) {
      if (m.match->stage) {
        stages.insert(*m.match->stage);
      } else {
        all_staged = false;
      }
    }
    marker_stages[i].assign(stages.begin(), stages.end());
    one_marker_stage_each = one_marker_stage_each && all_staged && stages.size() == 1;
    any = any || !marked[i].empty();
  }
  if (!any) nothing_matched(traces, classifier);

  for (std::size_t i = 0; i < traces.size(); ++i) {
    const KernelTrace& trace = traces[i];
    ProfileSummary summary;
    summary.path = trace.path;
    summary.format = trace.format;
    summary.rank = trace.rank;
    if (summary.rank < 0) {
      summary.rank = static_cast<std::int64_t>(i);
      summary.rank_from_position = true;
    }
    summary.ops = trace.ops.size();
    summary.ranges = trace.ranges.size();
    summary.marker_stages = marker_stages[i];
    std::int64_t stage = summary.rank;
    if (!options.rank_stage.empty()) {
      const auto it = options.rank_stage.find(summary.rank);
      if (it == options.rank_stage.end()) {
        throw Error(fmt::format("{}: rank {} has no --rank-stage (give one for every profile)",
                                trace.path, summary.rank));
      }
      stage = it->second;
    } else if (one_marker_stage_each) {
      stage = marker_stages[i].front();
    }
    if (stage < 0 || stage > kMaxStage) {
      throw Error(fmt::format("{}: stage {} is beyond the 65536 stages a pipeline may have",
                              trace.path, stage));
    }
    summary.stage = static_cast<std::uint32_t>(stage);
    ProfileActivity activity;
    measure_profile(trace, static_cast<std::uint32_t>(i), summary.stage, marked[i],
                    marker_stages[i], summary, out.tasks, activity, out.calls);
    out.activity.push_back(std::move(activity));
    if (summary.rank_from_position) {
      out.notes.push_back(
          fmt::format("{}: the profile does not give its rank: rank {} by "
                      "its position on the command line",
                      trace.path, summary.rank));
    }
    if (marked[i].empty()) {
      out.notes.push_back(
          fmt::format("{}: no range matched the markers: the profile adds nothing", trace.path));
    }
    if (summary.method == AttributionMethod::Overlap) {
      out.notes.push_back(fmt::format(
          "{}: no kernel launches in this profile: GPU ops were attributed by time overlap "
          "(the range holding each op's midpoint), which assumes the GPU keeps up with the host",
          trace.path));
    }
    out.profiles.push_back(std::move(summary));
  }
  std::stable_sort(
      out.tasks.begin(), out.tasks.end(), [](const MeasuredTask& a, const MeasuredTask& b) {
        return std::tie(a.profile, a.first_start, a.stage, a.chunk, a.kind, a.microbatch, a.part) <
               std::tie(b.profile, b.first_start, b.stage, b.chunk, b.kind, b.microbatch, b.part);
      });
  if (out.tasks.empty()) {
    std::vector<std::string> files;
    for (const KernelTrace& trace : traces) files.push_back(trace.path);
    throw Error(
        fmt::format("{}: ranges matched the '{}' markers, but none owns GPU compute "
                    "work (no kernel was launched inside them)",
                    fmt::join(files, ", "), classifier.name()));
  }

  // Sizes, and the samples of every (stage, chunk, kind, part).
  std::map<std::tuple<std::uint32_t, std::uint32_t, MarkerKind, std::string>, std::vector<TimeNs>>
      samples;
  std::map<std::tuple<std::uint32_t, std::int64_t, std::uint32_t, std::uint32_t, std::string>,
           std::set<std::uint32_t>>
      microbatches_by_kind[kMarkerKindCount];
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::string>, std::vector<std::int64_t>>
      allocations;  // steady F tasks of profiles with memory events
  std::vector<TimeNs> task_gaps;
  bool parts = false;
  for (const MeasuredTask& task : out.tasks) {
    if (!task.warmup) task_gaps.push_back(task.gaps());
    if (!task.warmup && task.kind == MarkerKind::Forward &&
        out.profiles[task.profile].memory_events > 0) {
      allocations[{task.stage, task.chunk, task.part}].push_back(task.allocated);
    }
    out.stage_count = std::max(out.stage_count, task.stage + 1);
    out.chunk_count = std::max(out.chunk_count, task.chunk + 1);
    out.split_backward =
        out.split_backward || task.kind == MarkerKind::Backward || task.kind == MarkerKind::Weight;
    parts = parts || !task.part.empty();
    microbatches_by_kind[static_cast<std::size_t>(task.kind)]
                        [{task.profile, task.iteration, task.stage, task.chunk, task.part}]
                            .insert(task.microbatch);
    if (!task.warmup) samples[{task.stage, task.chunk, task.kind, task.part}].push_back(task.busy);
  }
  for (const MarkerKind kind :
       {MarkerKind::Forward, MarkerKind::FullBackward, MarkerKind::Backward, MarkerKind::Weight}) {
    for (const auto& [group, ids] : microbatches_by_kind[static_cast<std::size_t>(kind)]) {
      out.microbatches = std::max(out.microbatches, static_cast<std::uint32_t>(ids.size()));
    }
    if (out.microbatches > 0) break;
  }
  for (const auto& [key, values] : samples) {
    const auto& [stage, chunk, kind, part] = key;
    if (out.stages.empty() || out.stages.back().stage != stage ||
        out.stages.back().chunk != chunk) {
      out.stages.push_back(StageCost{stage, chunk, {}, {}, std::nullopt});
    }
    StageCost& cost = out.stages.back();
    const auto k = static_cast<std::size_t>(kind);
    cost.cost[k] = cost.cost[k].value_or(0) + lower_median(values);
    cost.samples[k] += values.size();
    if (kind == MarkerKind::Forward) {
      if (const auto it = allocations.find({stage, chunk, part}); it != allocations.end()) {
        cost.activation =
            cost.activation.value_or(0) + std::max<std::int64_t>(lower_median_bytes(it->second), 0);
      }
    }
  }
  if (!task_gaps.empty()) out.launch_overhead = lower_median(std::move(task_gaps));

  // What the costs cannot say: one note per kind of gap, listing the stages it concerns.
  std::vector<std::pair<std::string, std::vector<const StageCost*>>> gaps;
  const auto gap = [&](std::string message, const StageCost& cost) {
    auto it = std::find_if(gaps.begin(), gaps.end(),
                           [&](const auto& entry) { return entry.first == message; });
    if (it == gaps.end()) it = gaps.insert(gaps.end(), {std::move(message), {}});
    it->second.push_back(&cost);
  };
  std::size_t unused_full = 0;
  for (const StageCost& cost : out.stages) {
    const bool f = cost.of(MarkerKind::Forward).has_value();
    const bool b = cost.of(MarkerKind::Backward).has_value();
    const bool w = cost.of(MarkerKind::Weight).has_value();
    const std::size_t full = cost.samples[static_cast<std::size_t>(MarkerKind::FullBackward)];
    if (!f) gap("no forward (F) was measured", cost);
    if ((b || w) && full > 0) {
      unused_full += full;
      gap("full-backward tasks not used: B and W come from the separate B and W tasks", cost);
    } else if (full > 0) {
      gap("only full backward (B + W in one range) was measured: the profile cannot tell B "
          "from W, so no ratio is assumed",
          cost);
    }
    if (b && !w) gap("B was measured but no W", cost);
    if (w && !b) gap("W was measured but no B", cost);
    if (!b && !w && full == 0) gap("no backward was measured", cost);
  }
  for (const auto& [message, where] : gaps) {
    std::vector<std::string> names;
    for (const StageCost* cost : where) {
      names.push_back(out.chunk_count > 1 ? fmt::format("{} chunk {}", cost->stage, cost->chunk)
                                          : fmt::format("{}", cost->stage));
    }
    const std::string count =
        message.starts_with("full-backward") ? fmt::format(" ({} in all)", unused_full) : "";
    out.notes.push_back(fmt::format("{} {}: {}{}", names.size() == 1 ? "stage" : "stages",
                                    fmt::join(names, ", "), message, count));
  }
  if (parts) {
    out.notes.push_back(
        "the markers name parts of tasks (e.g. attn, mlp): a task's cost is the sum of its "
        "parts' medians, assuming each part runs once per F / B / W");
  }
  if (options.rank_stage.empty() && !one_marker_stage_each && traces.size() > 1) {
    out.notes.push_back(
        "each profile's stage is its rank (one rank = one pipeline stage); for data-parallel "
        "replicas of one stage, say so with --rank-stage RANK=STAGE");
  }
  std::map<std::uint32_t, std::vector<std::string>> files_of_stage;
  for (const ProfileSummary& profile : out.profiles) {
    files_of_stage[profile.stage].push_back(profile.path);
  }
  for (const auto& [stage, files] : files_of_stage) {
    if (files.size() > 1) {
      out.notes.push_back(fmt::format("stage {}: {} profiles pooled ({})", stage, files.size(),
                                      fmt::join(files, ", ")));
    }
  }
  out.communication = communication_costs(traces);
  out.network = measured_communication(out.calls, out.notes);
  return out;
}

std::string most_frequent_range_names(std::span<const KernelTrace> traces, std::size_t count) {
  std::map<std::string, std::size_t> counts;
  for (const KernelTrace& trace : traces) {
    for (const Range& range : trace.ranges) ++counts[trace.names[range.name]];
  }
  if (counts.empty()) return "the profiles have no ranges at all";
  std::vector<std::pair<std::string, std::size_t>> common(counts.begin(), counts.end());
  std::stable_sort(common.begin(), common.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string seen = "most frequent range names: ";
  for (std::size_t i = 0; i < std::min(common.size(), count); ++i) {
    seen += fmt::format("{}'{}' ({})", i == 0 ? "" : ", ", common[i].first, common[i].second);
  }
  return seen;
}

}  // namespace perflow::reader
