#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace perflow::study {

/// The config format's JSON Schema (draft 2020-12), generated from the table the config
/// parser takes its keys and bounds from. It checks keys, types, units and bounds; the
/// rules across fields (a schedule's sizes, stages within /pipeline/stages, device types
/// that exist) are the parser's alone.
nlohmann::ordered_json config_schema();

/// The config reference in Markdown (docs/config-reference.md), from the same table: each
/// object with the JSON pointers it sits at, and each key's type, bounds, default and
/// meaning; then the value types (durations, sizes, rates, ...) and the preset names.
std::string config_reference_markdown();

/// Why `pointer` (RFC 6901) names no place a config can hold, from the same table: "'pipline'
/// is not a key of the config; did you mean 'pipeline'?", or a member below a number. Empty
/// when some config may hold it (whether this config does, and what value fits, is the
/// parser's to say). A sweep checks its axes with it before running anything.
std::string config_pointer_problem(std::string_view pointer);

}  // namespace perflow::study
