#include "perflow/core/memory_budget.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <sys/resource.h>

#include "perflow/core/error.hpp"
#include "perflow/core/units.hpp"

namespace perflow {
namespace {

// A "key: value kB" line of a /proc file, in bytes.
std::optional<std::uint64_t> proc_kilobytes(const char* path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0 || line.size() <= key.size() ||
        line[key.size()] != ':') {
      continue;
    }
    std::istringstream fields(line.substr(key.size() + 1));
    std::uint64_t kilobytes = 0;
    if (fields >> kilobytes) return kilobytes * 1024;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> file_number(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// cgroup v2: the process's group is the "0::/path" line of /proc/self/cgroup.
std::optional<std::uint64_t> cgroup_headroom() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    const std::string dir = "/sys/fs/cgroup" + line.substr(3);
    const std::optional<std::uint64_t> max = file_number(dir + "/memory.max");
    const std::optional<std::uint64_t> used = file_number(dir + "/memory.current");
    if (!max) return std::nullopt;
    const std::uint64_t current = used.value_or(0);
    return *max > current ? *max - current : 0;
  }
  return std::nullopt;
}

// The budget SharedMemoryScopes share: what they hold in total, and this thread's part.
std::mutex shared_mutex;
double shared_held = 0;
thread_local bool in_scope = false;
thread_local double held_here = 0;

void tighten(std::optional<MemoryLimit>& limit, std::optional<std::uint64_t> bytes,
             const char* source) {
  if (bytes && (!limit || *bytes < limit->bytes)) limit = MemoryLimit{*bytes, source};
}

}  // namespace

std::optional<MemoryLimit> memory_limit() {
  if (const char* text = std::getenv("PERFLOW_MEMORY_LIMIT"); text != nullptr && *text != 0) {
    double bytes = 0;
    try {
      bytes = parse_bytes(text);
    } catch (const std::invalid_argument& e) {
      throw ConfigError("PERFLOW_MEMORY_LIMIT", "",
                        fmt::format("expected {}, found \"{}\"", e.what(), text));
    }
    return MemoryLimit{static_cast<std::uint64_t>(bytes), "PERFLOW_MEMORY_LIMIT"};
  }
  std::optional<MemoryLimit> limit;
  rlimit address_space{};
  if (::getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t mapped = proc_kilobytes("/proc/self/status", "VmSize").value_or(0);
    const auto cap = static_cast<std::uint64_t>(address_space.rlim_cur);
    tighten(limit, cap > mapped ? cap - mapped : 0, "ulimit -v");
  }
  tighten(limit, cgroup_headroom(), "the cgroup's memory.max");
  tighten(limit, proc_kilobytes("/proc/meminfo", "MemAvailable"), "available memory");
  return limit;
}

void check_memory(double bytes, std::string_view what) {
  // Reading the limits costs a few /proc reads, more than a small run (sweeps run thousands
  // per second): below 64 MiB only PERFLOW_MEMORY_LIMIT is looked at.
  constexpr double kProbeFrom = 64.0 * (1 << 20);
  const char* variable = std::getenv("PERFLOW_MEMORY_LIMIT");
  if (bytes < kProbeFrom && (variable == nullptr || *variable == 0)) return;
  std::unique_lock<std::mutex> lock(shared_mutex, std::defer_lock);
  double others = 0;  // what runs on other threads hold
  if (in_scope) {
    lock.lock();  // the check and the grant at once, for every thread
    others = shared_held - held_here;
  }
  const std::optional<MemoryLimit> limit = memory_limit();
  const double available =
      limit ? std::max(0.0, static_cast<double>(limit->bytes) - others) : bytes;
  if (bytes <= available) {
    if (in_scope && bytes > held_here) {
      shared_held += bytes - held_here;
      held_here = bytes;
    }
    return;
  }
  throw ResourceError(fmt::format(
      "this run would need about {} of memory ({}), more than the {} this process may take "
      "({}); make the pipeline smaller or raise the limit",
      format_bytes(bytes), what, format_bytes(available),
      others > 0 ? limit->source + ", less what other runs hold" : limit->source));
}

SharedMemoryScope::SharedMemoryScope() {
  in_scope = true;
  held_here = 0;
}

SharedMemoryScope::~SharedMemoryScope() {
  const std::lock_guard lock(shared_mutex);
  shared_held -= held_here;
  if (shared_held < 0.5) shared_held = 0;  // rounding
  held_here = 0;
  in_scope = false;
}

double shared_memory_held() {
  const std::lock_guard lock(shared_mutex);
  return shared_held;
}

}  // namespace perflow
