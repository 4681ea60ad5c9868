#include "detail/comm_kernel.hpp"

#include <string>

namespace perflow::reader::detail {

namespace {

// "nccl" or "rccl" in any case, without copying the name (this runs once per kernel event).
// `c | 0x20` is c in lower case for letters, and equals a lower-case letter for no other byte.
bool names_a_ccl(std::string_view function) {
  const auto is = [](char c, char lower) {
    return (static_cast<unsigned char>(c) | 0x20U) == static_cast<unsigned char>(lower);
  };
  for (std::size_t i = 0; i + 4 <= function.size(); ++i) {
    if (is(function[i + 1], 'c') && is(function[i + 2], 'c') && is(function[i + 3], 'l') &&
        (is(function[i], 'n') || is(function[i], 'r'))) {
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
