#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace perflow::parallel {

/// How model chunks map onto devices, which fixes each microbatch's path through the
/// pipeline positions (the model's layers in order, split into stages * chunks pieces).
enum class PipelineShape : std::uint8_t {
  /// chunks == 1: position == device.
  Linear,
  /// Megatron's virtual pipeline: chunk c on device d is position c*p + d (the hop from
  /// device p-1 back to device 0 between chunks crosses devices).
  Interleaved,
  /// chunks == 2: chunk 0 runs down devices 0..p-1, chunk 1 back up p-1..0 (position
  /// 2p-1-d); the turn stays on device p-1. ZBV, V-Half/V-Min, 1F1B-V, DualPipeV.
  VShape,
  /// chunks == 2, two opposite pipelines over the same devices: microbatches 0..m/2-1 are
  /// chunk 0 going down (position d), m/2..m-1 are chunk 1 going up (position p-1-d).
  DualPipe,
};

/// "linear", "interleaved", "v", "dualpipe": the names configs use.
std::string_view to_string(PipelineShape shape);
std::optional<PipelineShape> parse_pipeline_shape(std::string_view text);

/// Positions one microbatch passes through: p for DualPipe (each direction is a pipeline of
/// its own), p x chunks otherwise.
std::uint32_t position_count(PipelineShape shape, std::uint32_t stages, std::uint32_t chunks);
/// The position (device, chunk) holds, i.e. which piece of the model that chunk is
/// (DualPipe: in the pipeline its chunk runs).
std::uint32_t chunk_position(PipelineShape shape, std::uint32_t stages, std::uint32_t device,
                             std::uint32_t chunk);

/// The path of every microbatch through the devices for one shape and size.
class PipelineLayout {
 public:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  PipelineLayout(PipelineShape shape, std::uint32_t stages, std::uint32_t chunks,
                 std::uint32_t microbatches);

  [[nodiscard]] PipelineShape shape() const { return shape_; }
  [[nodiscard]] std::uint32_t stages() const { return stages_; }
  [[nodiscard]] std::uint32_t chunks() const { return chunks_; }
  [[nodiscard]] std::uint32_t microbatches() const { return microbatches_; }

  /// Positions one microbatch passes through (p for Linear and DualPipe, p*v otherwise).
  [[nodiscard]] std::uint32_t positions() const;
  /// The position of (device, chunk) on `microbatch`'s path, or kNone if that microbatch
  /// never runs there (DualPipe: each microbatch belongs to one direction).
  [[nodiscard]] std::uint32_t position(std::uint32_t microbatch, std::uint32_t device,
                                       std::uint32_t chunk) const;
  [[nodiscard]] std::uint32_t device_of(std::uint32_t microbatch, std::uint32_t position) const;
  [[nodiscard]] std::uint32_t chunk_of(std::uint32_t microbatch, std::uint32_t position) const;

 private:
  PipelineShape shape_;
  std::uint32_t stages_;
  std::uint32_t chunks_;
  std::uint32_t microbatches_;
};

}  // namespace perflow::parallel
