#include "perflow/reader/kernel_trace.hpp"

#include <array>

namespace perflow::reader {

std::string_view to_string(GpuOpKind kind) {
  static constexpr std::array<std::string_view, 5> kNames = {"kernel", "memcpy", "memset",
                                                             "collective", "p2p"};
  return kNames[static_cast<std::size_t>(kind)];
}

std::string_view to_string(RangeSource source) {
  static constexpr std::array<std::string_view, 4> kNames = {"annotation", "nvtx", "roctx",
                                                             "python"};
  return kNames[static_cast<std::size_t>(source)];
}

std::uint32_t NameTable::intern(std::string_view name) {
  const auto [it, inserted] =
      index_.try_emplace(std::string(name), static_cast<std::uint32_t>(names_.size()));
  if (inserted) names_.push_back(it->first);
  return it->second;
}

}  // namespace perflow::reader
