#pragma once

#include "perflow/core/event_graph.hpp"

namespace perflow::simulator::detail {

/// A transfer task (SEND or RECV) of `like`'s device, stage, microbatch, chunk and
/// iteration, on `lane`, lasting `duration`, changing no memory: what lowering inserts.
inline TaskSpec transfer_task(const EventGraph& graph, TaskId like, TaskKind kind, TimeNs duration,
                              LaneId lane) {
  TaskSpec spec = graph.spec(like);
  spec.kind = kind;
  spec.duration = duration;
  spec.memory_delta = 0.0;
  spec.lane = lane;
  spec.paired = false;  // a transfer is never half of an overlapped pair
  spec.release_share = 1.0;
  return spec;
}

}  // namespace perflow::simulator::detail
