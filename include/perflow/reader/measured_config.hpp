#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perflow/reader/cost_extraction.hpp"

namespace perflow::reader {

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
///
/// Beyond the F / B / W costs, what the profiles show: `costs.activation` (bytes) from the
/// memory events; `costs.launch_overhead`, the median gaps between a task's kernels, when
/// positive; the data-parallel gradient all-reduce (`costs.gradient_bytes`,
/// `parallelism.data_parallel`, `network.data_parallel`), tensor-parallel all-reduces
/// (`costs.tp_allreduce_bytes`, `costs.tp_allreduces`, `parallelism.tensor_parallel`,
/// `network.tensor_parallel`) and point-to-point transfers (`costs.boundary_bytes`,
/// `network.intra_node`) where the communication kernels carry their sizes;
/// `network.p2p_mode: "blocking"` when the point-to-point kernels never overlapped compute.
///
/// `options` reshape the run: stages and microbatches replace the measured counts (0: keep),
/// and `scale` multiplies every per-layer quantity (durations, launch overhead, activation,
/// gradient bytes, tensor-parallel all-reduce counts), rounding to the nearest unit.
struct MeasuredConfigOptions {
  std::string schedule;
  std::uint32_t stages = 0;
  std::uint32_t microbatches = 0;
  double scale = 1.0;
  std::string scale_origin;  ///< how scale was given, for the note ("--scale 0.5")
};

MeasuredConfig measured_config(const ExtractedCosts& costs, const MeasuredConfigOptions& options,
                               const std::string& description);

}  // namespace perflow::reader
