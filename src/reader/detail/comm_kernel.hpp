#pragma once

#include <string_view>

#include "perflow/reader/kernel_trace.hpp"

namespace perflow::reader::detail {

/// The kind of a GPU kernel by its name: NCCL/RCCL kernels ("nccl" or "rccl" in the function
/// name, before its parameter list) are Collective, or P2P when the name says Send or Recv
/// (ncclKernel_SendRecv_*, ncclDevKernel_Send_*, ...); every other kernel is a Kernel.
GpuOpKind classify_kernel(std::string_view name);

}  // namespace perflow::reader::detail
