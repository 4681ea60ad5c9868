#include "detail/comm_kernel.hpp"

#include <cctype>
#include <string>

namespace perflow::reader::detail {

namespace {

// "nccl" or "rccl" in any case, without copying the name (this runs once per kernel event).
bool names_a_ccl(std::string_view function) {
  const auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  for (std::size_t i = 0; i + 4 <= function.size(); ++i) {
    const char first = lower(function[i]);
    if ((first == 'n' || first == 'r') && lower(function[i + 1]) == 'c' &&
        lower(function[i + 2]) == 'c' && lower(function[i + 3]) == 'l') {
      return true;
    }
  }
  return false;
}

}  // namespace

GpuOpKind classify_kernel(std::string_view name) {
  // Only the function name counts: parameter types such as ncclDevComm* say nothing.
  const std::string_view function = name.substr(0, name.find('('));
  if (!names_a_ccl(function)) return GpuOpKind::Kernel;
  const bool p2p = function.find("Send") != std::string_view::npos ||
                   function.find("Recv") != std::string_view::npos;
  return p2p ? GpuOpKind::P2P : GpuOpKind::Collective;
}

}  // namespace perflow::reader::detail
