#pragma once

#include <nlohmann/json.hpp>

namespace perflow::explore {

/// The sweep file format's JSON Schema (draft 2020-12), generated from the table the sweep
/// parser takes its keys from; an inline base is checked against the config schema
/// (study::config_schema). Rules across fields (a step that reaches `to`, zipped axes of
/// equal length, a base file that exists) are the parser's alone.
nlohmann::ordered_json sweep_schema();

/// The search file format's JSON Schema (draft 2020-12), generated from the table the
/// search parser takes its keys and bounds from; the base and each GPU type are checked
/// against the config schema's objects. Rules across fields (a host link for offloading, a
/// base giving costs.recompute with space.recompute) are the parser's alone.
nlohmann::ordered_json search_schema();

}  // namespace perflow::explore
