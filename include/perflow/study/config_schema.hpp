#pragma once

#include <nlohmann/json.hpp>

namespace perflow::study {

/// The config format's JSON Schema (draft 2020-12), generated from the table the config
/// parser takes its keys and bounds from. It checks keys, types, units and bounds; the
/// rules across fields (a schedule's sizes, stages within /pipeline/stages, device types
/// that exist) are the parser's alone.
nlohmann::ordered_json config_schema();

}  // namespace perflow::study
