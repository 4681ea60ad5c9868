#pragma once

#include <optional>
#include <span>

#include "perflow/core/json_cursor.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/study/config.hpp"

namespace perflow::study::detail {

/// Reads /model and /training into config.model; derives /pipeline/microbatches from
/// /training/global_batch_size. /training without /model is refused. Needs the pipeline
/// and parallelism read.
void parse_model_sections(const JsonCursor& root, Config& config);

/// The device preset named at `cursor` (a string); an unknown name fails with the valid ones.
const model::DevicePreset& read_device_preset(const JsonCursor& cursor);

/// A device type's specs: its preset's, then the fields it gives itself; nullopt if it
/// names neither a preset nor a peak.
std::optional<model::DeviceSpec> read_device_type_spec(const JsonCursor& type);

/// Splits the model's layers over the pipeline positions (/pipeline/layers) and derives
/// every (stage, chunk)'s costs on its device into config.model->positions. `devices` has
/// one entry per stage; nothing is derived unless every stage has one.
void derive_model_costs(const JsonCursor& root, Config& config,
                        std::span<const std::optional<model::DeviceSpec>> devices);

}  // namespace perflow::study::detail
