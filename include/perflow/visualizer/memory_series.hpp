#pragma once

#include "perflow/simulator/memory_timeline.hpp"

namespace perflow::visualizer {

// The memory curve is the simulator's (its peak is a metric); the charts draw it.
using simulator::activation_memory;
using simulator::MemoryPoint;

}  // namespace perflow::visualizer
