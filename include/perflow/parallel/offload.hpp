#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/time.hpp"
#include "perflow/parallel/collectives.hpp"

namespace perflow::parallel {

/// A device's link to host memory (PCIe, or a chip-to-chip link such as NVLink-C2C).
using HostLink = LinkCost;

/// What add_offload moves to host memory.
struct OffloadSpec {
  std::uint32_t chunks = 1;
  /// Per (stage, chunk), stage-major: the share of its microbatches whose activation goes to
  /// the host (0 to 1; entries past the end: 0).
  std::vector<double> ratio;
  /// Per device: the activation memory to stay under; offloads as few activations as the
  /// budget allows, instead of a ratio (nullopt or past the end: no budget).
  std::vector<std::optional<double>> budget;
  /// Per device: its host link (past the end: unlimited).
  std::vector<HostLink> host_link;
  /// Per device: optimizer state kept in host memory, read in before the device's optimizer
  /// step (OPT) and written back after it (0 or past the end: none).
  std::vector<double> optimizer_bytes;
};

/// The time a copy of `bytes` over `link` takes: latency + ceil(bytes / bandwidth). Throws
/// ScheduleError beyond 1e18 ns.
TimeNs host_copy_time(const HostLink& link, double bytes);

/// Activation offloading (PipeOffload, Wan et al. 2025): a chosen microbatch's activation (what
/// its F keeps) is copied to the host by a D2H task right after the F, freeing it on the device
/// when the copy ends, and copied back by an H2D task before its consumer (the R of
/// recomputation, or else the B or BW), allocating it when the copy starts. The reload is
/// issued while the task before the consumer runs (it waits for the task before that one), so
/// it overlaps compute and the consumer waits only for what is left of it.
///
/// Copies run one at a time per direction, on two lanes per device that offloads, "to host"
/// (D2H) and "from host" (H2D): the links (PCIe, NVLink-C2C) are full duplex and a GPU copies
/// each way on its own copy engine. Each lane runs its copies in the order the runtime issues
/// them (by the compute task each waits for), so copies one way contend for the link. Eligible are
/// activations with at least two tasks between their F and their consumer (otherwise the copy back
/// would start before or with the copy out). Chosen: per (stage, chunk), round(ratio x
/// microbatches) of the eligible ones, the longest-lived first (by program positions between F and
/// consumer; ties: the earlier F); or, with a budget, the device's program is walked in order and,
/// wherever its activation memory (counted in program order, an offloaded activation absent from
/// the second task after its F, its copy out running during the first, until the task before its
/// consumer) exceeds the budget, the live eligible activation needed latest is offloaded, until it
/// fits or none is left (Belady's rule).
///
/// With optimizer_bytes, an H2D of them precedes the device's OPT (issued as for an
/// activation) and a D2H follows it; they allocate and free those bytes like activations.
///
/// Original tasks keep their ids; copies follow, with the stage, microbatch, chunk and
/// iteration of the F (or OPT) they copy for. Needs program order (ScheduleError otherwise)
/// and no copies yet. A spec that offloads nothing returns the graph unchanged.
EventGraph add_offload(const EventGraph& graph, const OffloadSpec& spec);
/// The same, taking `graph`'s arrays instead of copying them.
EventGraph add_offload(EventGraph&& graph, const OffloadSpec& spec);

}  // namespace perflow::parallel
