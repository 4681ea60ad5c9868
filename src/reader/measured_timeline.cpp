#include "perflow/reader/measured_timeline.hpp"

#include <algorithm>
#include <limits>
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

MeasuredTimeline measured_timeline(const ExtractedCosts& costs) {
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

  out.origin = std::numeric_limits<TimeNs>::max();
  for (const MeasuredTask& task : costs.tasks) out.origin = std::min(out.origin, task.first_start);
  if (costs.tasks.empty()) out.origin = 0;

  // Tasks in (device, start) order, so that program order is start order.
  std::vector<std::size_t> tasks(costs.tasks.size());
  std::iota(tasks.begin(), tasks.end(), std::size_t{0});
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

}  // namespace perflow::reader
