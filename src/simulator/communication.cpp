#include "perflow/simulator/communication.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::simulator {

TimeNs CommunicationCost::transfer(const Link& link, TimeNs p2p_latency, double bytes) {
  constexpr double kLimit = 1e18;
  double ns = static_cast<double>(p2p_latency) + static_cast<double>(link.latency);
  if (bytes > 0 && link.bandwidth > 0) ns += std::ceil(bytes / link.bandwidth * 1e9);
  if (!(ns <= kLimit)) {
    throw ScheduleError(fmt::format(
        "a transfer of {} bytes over a link of {} bytes/s and {} ns latency (plus {} ns) would "
        "take longer than 1e18 ns",
        bytes, link.bandwidth, link.latency, p2p_latency));
  }
  return static_cast<TimeNs>(ns);
}

TimeNs CommunicationCost::max_transfer() const {
  TimeNs longest = std::max(base_[0], base_[1]);
  for (const TimeNs t : intra_) longest = std::max(longest, t);
  for (const TimeNs t : inter_) longest = std::max(longest, t);
  return longest;
}

void check_time_range(const EventGraph& graph, const CommunicationCost& comm) {
  constexpr double kLimit = 4e18;  // below 2^62 ns
  // Durations added one at a time onto the transfers' bound, as always.
  const double total = graph.total_duration(static_cast<double>(graph.edge_count()) *
                                            static_cast<double>(comm.max_transfer()));
  if (total > kLimit) {
    throw ScheduleError(fmt::format(
        "the simulated step could last up to {:.3g} ns, beyond the simulator's range (4e18 ns, "
        "about 127 years): check the units of the costs and the network",
        total));
  }
}

bool moves_data(const EventGraph& graph, TaskId from, const Adjacent& to) {
  if (to.kind() != EdgeKind::Data || graph.device(to.task()) == graph.device(from)) return false;
  const TaskKind from_kind = graph.kind(from);
  const TaskKind to_kind = graph.kind(to.task());
  return from_kind != TaskKind::Send && from_kind != TaskKind::Sync && to_kind != TaskKind::Recv &&
         to_kind != TaskKind::Sync;
}

CommunicationCost::CommunicationCost(const EventGraph& graph, const SimulationOptions& options)
    : graph_(&graph),
      devices_per_node_(options.devices_per_node),
      base_{transfer(options.intra_node, options.p2p_latency, 0),
            transfer(options.inter_node, options.p2p_latency, 0)},
      constant_(options.boundary_bytes.empty() && options.devices_per_node == 0),
      free_edges_(graph.has_kind(TaskKind::Recv) || graph.has_kind(TaskKind::Sync)) {
  intra_.reserve(options.boundary_bytes.size());
  inter_.reserve(options.boundary_bytes.size());
  for (const double bytes : options.boundary_bytes) {
    intra_.push_back(transfer(options.intra_node, options.p2p_latency, bytes));
    inter_.push_back(transfer(options.inter_node, options.p2p_latency, bytes));
  }
}

}  // namespace perflow::simulator
