#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace perflow {

/// How much more memory this process may take, and what says so.
struct MemoryLimit {
  std::uint64_t bytes = 0;
  /// "PERFLOW_MEMORY_LIMIT", "ulimit -v", "the cgroup's memory.max" or "available memory".
  std::string source;
};

/// The tightest of: the PERFLOW_MEMORY_LIMIT environment variable (a size such as "2GB";
/// overrides the rest), the address-space limit (`ulimit -v`) less what the process has
/// mapped, the cgroup v2 memory.max less its usage, and the kernel's MemAvailable.
/// nullopt when none is known. Throws ConfigError for a malformed PERFLOW_MEMORY_LIMIT.
std::optional<MemoryLimit> memory_limit();

/// Refuses, before anything is allocated, work estimated to need `bytes` when the
/// process may not take that much: throws ResourceError naming `what` (e.g. "1,048,576
/// tasks at about 110 bytes each"), the estimate and the limit. Below 64 MiB only
/// PERFLOW_MEMORY_LIMIT is checked (the other limits cost system calls to read).
void check_memory(double bytes, std::string_view what);

}  // namespace perflow
