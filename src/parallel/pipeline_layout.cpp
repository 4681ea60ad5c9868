#include "perflow/parallel/pipeline_layout.hpp"

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::parallel {

std::string_view to_string(PipelineShape shape) {
  switch (shape) {
    case PipelineShape::Linear:
      return "linear";
    case PipelineShape::Interleaved:
      return "interleaved";
    case PipelineShape::VShape:
      return "v";
    case PipelineShape::DualPipe:
      return "dualpipe";
  }
  return "linear";
}

std::optional<PipelineShape> parse_pipeline_shape(std::string_view text) {
  for (const PipelineShape shape : {PipelineShape::Linear, PipelineShape::Interleaved,
                                    PipelineShape::VShape, PipelineShape::DualPipe}) {
    if (to_string(shape) == text) return shape;
  }
  return std::nullopt;
}

PipelineLayout::PipelineLayout(PipelineShape shape, std::uint32_t stages, std::uint32_t chunks,
                               std::uint32_t microbatches)
    : shape_(shape), stages_(stages), chunks_(chunks), microbatches_(microbatches) {
  const bool two_chunks = shape == PipelineShape::VShape || shape == PipelineShape::DualPipe;
  if (stages == 0 || chunks == 0 || (shape == PipelineShape::Linear && chunks != 1) ||
      (two_chunks && chunks != 2)) {
    throw ScheduleError(
        fmt::format("a pipeline layout cannot have {} stages and {} chunks", stages, chunks));
  }
}

std::uint32_t position_count(PipelineShape shape, std::uint32_t stages, std::uint32_t chunks) {
  return shape == PipelineShape::DualPipe ? stages : stages * chunks;
}

std::uint32_t chunk_position(PipelineShape shape, std::uint32_t stages, std::uint32_t device,
                             std::uint32_t chunk) {
  switch (shape) {
    case PipelineShape::Linear:
    case PipelineShape::Interleaved:
      return chunk * stages + device;
    case PipelineShape::VShape:
      return chunk == 0 ? device : 2 * stages - 1 - device;
    case PipelineShape::DualPipe:
      return chunk == 0 ? device : stages - 1 - device;
  }
  return PipelineLayout::kNone;
}

std::uint32_t PipelineLayout::positions() const { return position_count(shape_, stages_, chunks_); }

std::uint32_t PipelineLayout::position(std::uint32_t microbatch, std::uint32_t device,
                                       std::uint32_t chunk) const {
  // DualPipe: a microbatch runs one direction only, chunk 0 for the first half.
  if (shape_ == PipelineShape::DualPipe && chunk != (microbatch < microbatches_ / 2 ? 0u : 1u)) {
    return kNone;
  }
  return chunk_position(shape_, stages_, device, chunk);
}

std::uint32_t PipelineLayout::device_of(std::uint32_t microbatch, std::uint32_t position) const {
  switch (shape_) {
    case PipelineShape::Linear:
    case PipelineShape::Interleaved:
      return position % stages_;
    case PipelineShape::VShape:
      return position < stages_ ? position : 2 * stages_ - 1 - position;
    case PipelineShape::DualPipe:
      return chunk_of(microbatch, position) == 0 ? position : stages_ - 1 - position;
  }
  return kNone;
}

std::uint32_t PipelineLayout::chunk_of(std::uint32_t microbatch, std::uint32_t position) const {
  if (shape_ == PipelineShape::DualPipe) return microbatch < microbatches_ / 2 ? 0 : 1;
  return position / stages_;
}

}  // namespace perflow::parallel
