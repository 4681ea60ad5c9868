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

/// Runs on several threads (a sweep's workers) share one budget: while a scope is alive on
/// a thread, what check_memory grants there is held until the scope ends, and a check on
/// any thread with a scope also counts what the other scopes hold. A run that does not fit
/// beside the others is refused like one that does not fit alone (ResourceError), so the
/// caller can wait for the others and retry it (explore::run_in_order does). Without a
/// scope check_memory is as above. Scopes do not nest.
class SharedMemoryScope {
 public:
  SharedMemoryScope();
  ~SharedMemoryScope();
  SharedMemoryScope(const SharedMemoryScope&) = delete;
  SharedMemoryScope& operator=(const SharedMemoryScope&) = delete;
};

/// The bytes every SharedMemoryScope holds now (for tests and messages).
double shared_memory_held();

}  // namespace perflow
