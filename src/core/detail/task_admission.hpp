#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "perflow/core/event_graph.hpp"

namespace perflow::detail {

/// Checks a task before it joins a graph of `devices` devices and `task_count` tasks, for
/// EventGraphBuilder::add_task and GraphExtension::add_task alike: its device exists, its
/// duration is not negative, its lane (if any) exists and is its device's (`lane_owner`:
/// the lane's device, or nothing when there is no such lane), and the graph has room.
/// Throws ScheduleError naming the task.
void check_new_task(const TaskSpec& spec, std::uint32_t devices, std::size_t task_count,
                    std::optional<DeviceId> lane_owner);

}  // namespace perflow::detail
