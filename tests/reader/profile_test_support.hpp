#pragma once
// Helpers shared by the profile reader tests: fixture paths, temporary inputs, error text and
// small summaries of a KernelTrace.
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>

#include <gtest/gtest.h>
#include <unistd.h>

#include "perflow/reader/kernel_trace.hpp"
#include "perflow/reader/profile_error.hpp"
#include "perflow/reader/profile_reader.hpp"

namespace perflow::reader::test {

inline std::filesystem::path fixture(std::string_view relative) {
  return std::filesystem::path(PERFLOW_PROFILE_FIXTURES) / relative;
}

/// A directory of this process's inputs (ctest runs cases in parallel), removed at exit.
inline const std::filesystem::path& temp_dir() {
  struct Directory {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("perflow_reader_test_" + std::to_string(::getpid()));
    Directory() { std::filesystem::create_directories(path); }
    Directory(const Directory&) = delete;
    Directory& operator=(const Directory&) = delete;
    ~Directory() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Directory directory;
  return directory.path;
}

/// A file in temp_dir() holding `content`.
inline std::filesystem::path write_temp(const std::string& name, std::string_view content) {
  const auto path = temp_dir() / name;
  std::ofstream(path, std::ios::binary)
      .write(content.data(), static_cast<std::streamsize>(content.size()));
  return path;
}

inline const ProfileReader& reader_named(std::string_view name) {
  for (const ProfileReader& reader : profile_readers()) {
    if (reader.name == name) return reader;
  }
  throw std::logic_error("no reader named " + std::string(name));
}

/// The message of the ProfileError that `read` throws, or "no error".
template <class Read>
std::string error_of(Read&& read) {
  try {
    (void)read();
  } catch (const ProfileError& e) {
    return e.what();
  }
  return "no error";
}

inline std::size_t count_kind(const KernelTrace& trace, GpuOpKind kind) {
  return static_cast<std::size_t>(std::count_if(trace.ops.begin(), trace.ops.end(),
                                                [&](const GpuOp& op) { return op.kind == kind; }));
}

inline std::set<std::uint32_t> devices(const KernelTrace& trace) {
  std::set<std::uint32_t> out;
  for (const GpuOp& op : trace.ops) out.insert(op.device);
  return out;
}

inline std::set<std::uint64_t> streams(const KernelTrace& trace) {
  std::set<std::uint64_t> out;
  for (const GpuOp& op : trace.ops) out.insert(op.stream);
  return out;
}

inline std::size_t count_named(const KernelTrace& trace, std::string_view name) {
  return static_cast<std::size_t>(
      std::count_if(trace.ranges.begin(), trace.ranges.end(),
                    [&](const Range& range) { return trace.names[range.name] == name; }));
}

/// The first op that starts at `start` (the fixtures have no two ops starting together).
inline const GpuOp& op_at(const KernelTrace& trace, TimeNs start) {
  const auto it = std::find_if(trace.ops.begin(), trace.ops.end(),
                               [&](const GpuOp& op) { return op.start == start; });
  if (it == trace.ops.end()) throw std::logic_error("no op starts at " + std::to_string(start));
  return *it;
}

inline const Launch& launch_of(const KernelTrace& trace, std::uint64_t correlation) {
  const auto it = std::find_if(trace.launches.begin(), trace.launches.end(),
                               [&](const Launch& l) { return l.correlation == correlation; });
  if (it == trace.launches.end())
    throw std::logic_error("no launch " + std::to_string(correlation));
  return *it;
}

/// True if ops, launches and ranges are in KernelTrace's documented order.
inline bool is_ordered(const KernelTrace& trace) {
  const bool ops = std::is_sorted(trace.ops.begin(), trace.ops.end(), [](auto& a, auto& b) {
    return std::tie(a.start, a.end, a.device, a.stream) <
           std::tie(b.start, b.end, b.device, b.stream);
  });
  const bool launches = std::is_sorted(trace.launches.begin(), trace.launches.end(),
                                       [](auto& a, auto& b) { return a.start < b.start; });
  const bool ranges = std::is_sorted(
      trace.ranges.begin(), trace.ranges.end(),
      [](auto& a, auto& b) { return std::tie(a.start, a.depth) < std::tie(b.start, b.depth); });
  return ops && launches && ranges;
}

/// Range `i` of the trace has this name, interval, nesting depth and thread.
inline void expect_range(const KernelTrace& trace, std::size_t i, std::string_view name,
                         TimeNs start, TimeNs end, std::uint32_t depth, std::uint64_t thread) {
  SCOPED_TRACE(i);
  ASSERT_LT(i, trace.ranges.size());
  EXPECT_EQ(trace.names[trace.ranges[i].name], name);
  EXPECT_EQ(trace.ranges[i].start, start);
  EXPECT_EQ(trace.ranges[i].end, end);
  EXPECT_EQ(trace.ranges[i].depth, depth);
  EXPECT_EQ(trace.ranges[i].thread, thread);
}

}  // namespace perflow::reader::test
