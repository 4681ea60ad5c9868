#pragma once

#include <cstdint>

namespace perflow {

/// The GPU generations NCCL's tuner tells apart (its per-architecture tables). AMD parts run
/// RCCL, NCCL's fork, and are priced as Ampere.
enum class GpuGeneration : std::uint8_t { Volta, Ampere, Hopper, Blackwell };

/// What joins the GPUs of a node, as NCCL's tuner classes a hop.
enum class ScaleUp : std::uint8_t { NvLink, Pcie };

}  // namespace perflow
