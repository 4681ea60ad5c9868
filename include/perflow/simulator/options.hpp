#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "perflow/core/time.hpp"

namespace perflow::simulator {

enum class SimulationMode : std::uint8_t {
  /// Each device runs its program in order (the default for built schedules).
  Ordered,
  /// Program order is ignored: whenever a device is free it starts the ready task of highest
  /// priority (see simulate_greedy), as the PerFlow-AI prototype simulated bare dependence
  /// graphs.
  Greedy,
};

std::string_view to_string(SimulationMode mode);
std::optional<SimulationMode> parse_simulation_mode(std::string_view text);

/// A point-to-point link class: latency plus bytes over bandwidth.
struct Link {
  TimeNs latency = 0;
  double bandwidth = 0;  ///< bytes per second; 0 means unlimited (latency only)
};

struct SimulationOptions {
  SimulationOptions() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): SimulationOptions{latency} reads well.
  SimulationOptions(TimeNs latency, SimulationMode simulation_mode = SimulationMode::Ordered)
      : p2p_latency(latency), mode(simulation_mode) {}

  /// Added to every data dependence whose two tasks are on different devices.
  TimeNs p2p_latency = 0;
  SimulationMode mode = SimulationMode::Ordered;
  /// Devices d and e share a node when d / devices_per_node == e / devices_per_node;
  /// 0 puts every device in one node.
  std::uint32_t devices_per_node = 0;
  Link intra_node;
  Link inter_node;
  /// Per stage: the bytes one microbatch's activation sends to the next stage; its gradient,
  /// of the same size, comes back. Empty: nothing is sent (latency only).
  std::vector<double> boundary_bytes;
};

}  // namespace perflow::simulator
