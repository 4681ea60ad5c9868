#pragma once

#include <cstdint>

#include "perflow/core/event_graph.hpp"

namespace perflow::parallel {

/// Several training iterations in a row: what a user measures as the step is the period of
/// the steady state, not one iteration run from an empty pipeline.
struct IterationSpec {
  std::uint32_t count = 1;
  /// true: synchronous optimizer step. Iteration k+1 starts nowhere before every device has
  /// finished iteration k (its optimizer step included): a global barrier, as Megatron-LM's
  /// step with gradient clipping waits for the global gradient norm. false: each device
  /// goes on as soon as its own iteration is done, as the ZeroBubble runtime's optimizer
  /// post-validation lets it.
  bool optimizer_sync = true;
};

/// `count` copies of `graph`, one per iteration (tasks of iteration k carry k; original ids
/// map to k * tasks + id), each lane running its programs one iteration after the other.
/// A device's iteration k+1 starts after all of its lanes' iteration k (its all-reduces and
/// optimizer step). Synchronous: a zero-length SYNC task per iteration boundary, on a lane
/// "iteration sync" of device 0, waits for every lane's last task of iteration k, and every
/// lane's first task of iteration k+1 waits for it; dependences to and from a SYNC cost no
/// communication. Needs program order and no transfer lanes yet (lower communication after
/// this); throws ScheduleError otherwise or for count 0. count 1 returns the graph as is.
EventGraph repeat_iterations(const EventGraph& graph, const IterationSpec& spec);

}  // namespace perflow::parallel
