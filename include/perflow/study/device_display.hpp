#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "perflow/study/config.hpp"

namespace perflow::study {

/// What the pictures (timelines, Chrome traces) show per device, as the config says: its GPU type
/// (empty when none is placed), the memory its stage holds throughout, and its capacity (0 when
/// unknown).
struct DeviceDisplay {
  std::vector<std::string> labels;
  std::vector<double> static_memory;
  std::vector<double> capacity;
};

DeviceDisplay device_display(const Config& config, std::uint32_t devices);

/// How a config's run is captioned in its timeline (`perflow simulate --timeline`, Python's
/// Run.to_svg): the description (or the schedule) as title, the run's sizes as subtitle
/// (describe_run), and per device what device_display gives.
struct RunDisplay {
  std::string title;
  std::string subtitle;
  DeviceDisplay devices;
};

RunDisplay run_display(const Config& config, const EventGraph& graph);

}  // namespace perflow::study
