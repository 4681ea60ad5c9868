#include "detail/comm_kernel.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace perflow::reader::detail {

GpuOpKind classify_kernel(std::string_view name) {
  // Only the function name counts: parameter types such as ncclDevComm* say nothing.
  const std::string_view function = name.substr(0, name.find('('));
  std::string lower(function);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find("nccl") == std::string::npos && lower.find("rccl") == std::string::npos) {
    return GpuOpKind::Kernel;
  }
  const bool p2p = function.find("Send") != std::string_view::npos ||
                   function.find("Recv") != std::string_view::npos;
  return p2p ? GpuOpKind::P2P : GpuOpKind::Collective;
}

}  // namespace perflow::reader::detail
