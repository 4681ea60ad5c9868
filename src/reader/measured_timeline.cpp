#include "perflow/reader/measured_timeline.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace perflow::reader {
namespace {

TaskKind task_kind(MarkerKind kind) {
  switch (kind) {
    case MarkerKind::Forward:
      return TaskKind::F;
    case MarkerKind::Backward:
      return TaskKind::B;
    case MarkerKind::Weight:
      return TaskKind::W;
    case MarkerKind::FullBackward:
      return TaskKind::BW;
  }
  return TaskKind::F;
}

}  // namespace

MeasuredTimeline measured_timeline(const ExtractedCosts& costs,
                                   std::optional<std::int64_t> iteration) {
  MeasuredTimeline out;
  const auto profiles = static_cast<std::uint32_t>(costs.profiles.size());
  std::vector<std::uint32_t> order(profiles);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(costs.profiles[a].stage, costs.profiles[a].rank) <
           std::tie(costs.profiles[b].stage, costs.profiles[b].rank);
  });
  std::vector<std::uint32_t> device_of(profiles);
  for (std::uint32_t d = 0; d < profiles; ++d) {
    device_of[order[d]] = d;
    const ProfileSummary& profile = costs.profiles[order[d]];
    out.device_labels.push_back(fmt::format("stage {}, rank {}", profile.stage, profile.rank));
  }
  out.profile_of_device = order;

  std::vector<std::size_t> tasks;
  for (std::size_t i = 0; i < costs.tasks.size(); ++i) {
    if (!iteration || costs.tasks[i].iteration == *iteration) tasks.push_back(i);
  }
  out.origin = std::numeric_limits<TimeNs>::max();
  for (const std::size_t i : tasks) out.origin = std::min(out.origin, costs.tasks[i].first_start);
  if (tasks.empty()) out.origin = 0;

  // Tasks in (device, start) order, so that program order is start order.
  std::stable_sort(tasks.begin(), tasks.end(), [&](std::size_t a, std::size_t b) {
    const MeasuredTask& x = costs.tasks[a];
    const MeasuredTask& y = costs.tasks[b];
    return std::tie(device_of[x.profile], x.first_start, x.last_end) <
           std::tie(device_of[y.profile], y.first_start, y.last_end);
  });

  EventGraphBuilder builder(profiles);
  builder.reserve(tasks.size(), 0);
  out.trace.start.reserve(tasks.size());
  out.trace.finish.reserve(tasks.size());
  out.trace.lane_events.assign(profiles, {});
  for (const std::size_t index : tasks) {
    const MeasuredTask& task = costs.tasks[index];
    TaskSpec spec;
    spec.kind = task_kind(task.kind);
    spec.device = DeviceId{device_of[task.profile]};
    spec.stage = StageId{task.stage};
    spec.microbatch = task.microbatch;
    spec.chunk = task.chunk;
    spec.duration = task.last_end - task.first_start;
    const TaskId id = builder.add_task(spec);
    builder.append_to_program(id);
    out.trace.start.push_back(task.first_start - out.origin);
    out.trace.finish.push_back(task.last_end - out.origin);
    out.trace.lane_events[spec.device.value].push_back(id);
  }
  out.graph = std::move(builder).freeze();
  return out;
}

namespace {

// The time of [from, to) that `intervals` (disjoint, in order) cover.
TimeNs covered(const std::vector<TimeInterval>& intervals, TimeNs from, TimeNs to) {
  TimeNs total = 0;
  for (const TimeInterval& i : intervals) {
    const TimeNs start = std::max(i.start, from);
    const TimeNs end = std::min(i.end, to);
    if (start < end) total += end - start;
  }
  return total;
}

// Disjoint, in order, clipped to [from, to).
std::vector<TimeInterval> clip_union(std::vector<TimeInterval> intervals, TimeNs from, TimeNs to) {
  std::sort(intervals.begin(), intervals.end(), [](const TimeInterval& a, const TimeInterval& b) {
    return std::tie(a.start, a.end) < std::tie(b.start, b.end);
  });
  std::vector<TimeInterval> out;
  for (TimeInterval i : intervals) {
    i.start = std::max(i.start, from);
    i.end = std::min(i.end, to);
    if (i.start >= i.end) continue;
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// a minus b (both disjoint and in order).
std::vector<TimeInterval> subtract(const std::vector<TimeInterval>& a,
                                   const std::vector<TimeInterval>& b) {
  std::vector<TimeInterval> out;
  std::size_t j = 0;
  for (TimeInterval piece : a) {
    while (j < b.size() && b[j].end <= piece.start) ++j;
    std::size_t k = j;
    while (k < b.size() && b[k].start < piece.end) {
      if (b[k].start > piece.start) out.push_back({piece.start, b[k].start});
      piece.start = std::max(piece.start, b[k].end);
      ++k;
    }
    if (piece.start < piece.end) out.push_back(piece);
  }
  return out;
}

}  // namespace

std::vector<StepBreakdown> measured_breakdown(const ExtractedCosts& costs) {
  // Each iteration's window over all profiles, and which iterations are steady.
  std::map<std::int64_t, std::pair<TimeNs, TimeNs>> windows;
  std::map<std::int64_t, bool> warmup;
  for (const MeasuredTask& task : costs.tasks) {
    auto [it, inserted] =
        windows.try_emplace(task.iteration, std::pair{task.first_start, task.last_end});
    if (!inserted) {
      it->second.first = std::min(it->second.first, task.first_start);
      it->second.second = std::max(it->second.second, task.last_end);
    }
    warmup[task.iteration] = warmup[task.iteration] || task.warmup;
  }
  std::vector<std::pair<TimeNs, std::int64_t>> steady;  // (step time, iteration)
  for (const auto& [iteration, window] : windows) {
    if (!warmup[iteration]) steady.emplace_back(window.second - window.first, iteration);
  }
  if (steady.empty()) {
    for (const auto& [iteration, window] : windows) {
      steady.emplace_back(window.second - window.first, iteration);
    }
  }
  if (steady.empty()) return {};
  std::vector<std::pair<TimeNs, std::int64_t>> sorted = steady;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const TimeNs median = sorted[(sorted.size() - 1) / 2].first;
  const std::int64_t iteration = std::find_if(steady.begin(), steady.end(), [&](const auto& s) {
                                   return s.first == median;
                                 })->second;
  const auto [from, to] = windows[iteration];

  // The first profile of each stage.
  std::map<std::uint32_t, std::uint32_t> profile_of_stage;
  for (std::uint32_t p = 0; p < costs.profiles.size(); ++p) {
    profile_of_stage.try_emplace(costs.profiles[p].stage, p);
  }
  std::vector<StepBreakdown> out;
  for (const auto& [stage, profile] : profile_of_stage) {
    StepBreakdown b;
    b.stage = stage;
    b.profile = profile;
    b.iteration = iteration;
    b.window = to - from;
    if (profile >= costs.activity.size()) continue;
    const ProfileActivity& activity = costs.activity[profile];
    const std::vector<TimeInterval> tasks = clip_union(activity.task_compute, from, to);
    const std::vector<TimeInterval> other =
        subtract(clip_union(activity.other_compute, from, to), tasks);
    std::vector<TimeInterval> compute = tasks;
    compute.insert(compute.end(), other.begin(), other.end());
    compute = clip_union(std::move(compute), from, to);
    const std::vector<TimeInterval> communication =
        subtract(clip_union(activity.communication, from, to), compute);
    std::vector<TimeInterval> running = compute;
    running.insert(running.end(), communication.begin(), communication.end());
    running = clip_union(std::move(running), from, to);
    std::vector<TimeInterval> spans;
    for (const MeasuredTask& task : costs.tasks) {
      if (task.profile == profile) spans.push_back({task.first_start, task.last_end});
    }
    const std::vector<TimeInterval> idle =
        subtract(clip_union(std::move(spans), from, to), running);
    b.task_compute = covered(tasks, from, to);
    b.other_compute = covered(other, from, to);
    b.communication = covered(communication, from, to);
    b.idle_in_tasks = covered(idle, from, to);
    b.host_gaps = b.window - b.task_compute - b.other_compute - b.communication - b.idle_in_tasks;
    out.push_back(b);
  }
  return out;
}

}  // namespace perflow::reader
