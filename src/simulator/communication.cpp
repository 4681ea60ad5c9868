#include "perflow/simulator/communication.hpp"

#include <cmath>

namespace perflow::simulator {

TimeNs CommunicationCost::transfer(const Link& link, TimeNs p2p_latency, double bytes) {
  TimeNs cost = p2p_latency + link.latency;
  if (bytes > 0 && link.bandwidth > 0) {
    cost += static_cast<TimeNs>(std::ceil(bytes / link.bandwidth * 1e9));
  }
  return cost;
}

CommunicationCost::CommunicationCost(const EventGraph& graph, const SimulationOptions& options)
    : graph_(&graph),
      devices_per_node_(options.devices_per_node),
      base_{transfer(options.intra_node, options.p2p_latency, 0),
            transfer(options.inter_node, options.p2p_latency, 0)},
      constant_(options.boundary_bytes.empty() && options.devices_per_node == 0) {
  intra_.reserve(options.boundary_bytes.size());
  inter_.reserve(options.boundary_bytes.size());
  for (const double bytes : options.boundary_bytes) {
    intra_.push_back(transfer(options.intra_node, options.p2p_latency, bytes));
    inter_.push_back(transfer(options.inter_node, options.p2p_latency, bytes));
  }
}

}  // namespace perflow::simulator
