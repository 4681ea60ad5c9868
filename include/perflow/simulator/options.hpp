#pragma once

#include "perflow/core/time.hpp"

namespace perflow::simulator {

struct SimulationOptions {
  /// Added to every data dependence whose two tasks are on different devices.
  TimeNs p2p_latency = 0;
};

}  // namespace perflow::simulator
