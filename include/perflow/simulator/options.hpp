#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

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

struct SimulationOptions {
  /// Added to every data dependence whose two tasks are on different devices.
  TimeNs p2p_latency = 0;
  SimulationMode mode = SimulationMode::Ordered;
};

}  // namespace perflow::simulator
