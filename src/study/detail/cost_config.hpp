#pragma once

#include <string>

#include "perflow/core/json_cursor.hpp"
#include "perflow/study/config.hpp"

namespace perflow::study::detail {

/// A registered schedule's name; an unknown one fails at its pointer with the valid names.
std::string read_schedule_name(const JsonCursor& cursor);

/// Bytes per second (a number, or "400GB/s"), between 1 B/s and 1e18 B/s.
double read_bandwidth(const JsonCursor& cursor);

/// Reads /costs, /device_types, /placement and the link part of /network into `config`
/// (costs per stage and chunk, device memory, boundary bytes, links). Needs
/// config.pipeline's sizes.
void parse_cost_sections(const JsonCursor& root, Config& config);

}  // namespace perflow::study::detail
