#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perflow/reader/cost_extraction.hpp"

namespace perflow::cli::detail {

/// A complete `perflow simulate` config from measured costs.
struct MeasuredConfig {
  nlohmann::ordered_json document;
  std::vector<std::string> notes;  ///< what the config assumes beyond the measurements
};

/// The pipeline: stages = the highest stage measured + 1, microbatches = the most measured
/// in one iteration, chunks = the highest chunk + 1, `schedule` (empty: 1f1b, or
/// interleaved-1f1b with several chunks), split_backward when B and W were measured apart.
/// Costs: per (stage, chunk) forward, backward and weight as exact decimal microseconds;
/// the uniform costs are the lowest measured (stage, chunk)'s, and every other measured
/// (stage, chunk) whose costs differ gets an override. Where only a full backward was
/// measured, backward is that full backward (B + W) and weight is 0, so a fused BW costs
/// what was measured; a note says B and W could not be told apart. Unmeasured kinds are 0
/// and unmeasured stages take the uniform costs, each with a note.
MeasuredConfig measured_config(const reader::ExtractedCosts& costs, const std::string& schedule,
                               const std::string& description);

}  // namespace perflow::cli::detail
