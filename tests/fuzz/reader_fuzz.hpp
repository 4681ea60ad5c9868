#pragma once
// What the fuzz targets of the path-based profile readers share: the input goes to a scratch
// file (the readers take a path), the named readers' accepts() and read() run on it, and a
// perflow::Error is the only acceptable failure. A trace that is read must keep the readers'
// promises: intervals with start <= end and interned names. Anything else aborts, which is
// the fuzzer's crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <system_error>

#include <unistd.h>

#include "perflow/core/error.hpp"
#include "perflow/reader/profile_reader.hpp"

namespace perflow::reader::fuzz {

inline void check_trace(const KernelTrace& trace) {
  const auto named = [&](std::uint32_t name) { return name < trace.names.size(); };
  for (const GpuOp& op : trace.ops) {
    if (op.end < op.start || !named(op.name)) std::abort();
  }
  for (const Launch& launch : trace.launches) {
    if (launch.end < launch.start) std::abort();
  }
  for (const Range& range : trace.ranges) {
    if (range.end < range.start || !named(range.name)) std::abort();
  }
}

/// Writes the input to this process's scratch file `perflow_<stem>_<pid><extension>` (removed
/// at exit) and runs the readers named in `readers` on it.
inline int run_readers(const std::uint8_t* data, std::size_t size, std::string_view stem,
                       std::string_view extension,
                       std::initializer_list<std::string_view> readers) {
  struct ScratchFile {
    std::filesystem::path path;
    ~ScratchFile() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  };
  static const ScratchFile scratch{
      std::filesystem::temp_directory_path() /
      ("perflow_" + std::string(stem) + "_" + std::to_string(::getpid()) + std::string(extension))};
  const std::filesystem::path& path = scratch.path;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The SQLite readers open profiles immutable, so no journal or WAL file outlives an input.
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const FileSniff sniff{path, bytes.substr(0, 64 * 1024), bytes.starts_with("\x1f\x8b")};
  for (const ProfileReader& reader : profile_readers()) {
    bool wanted = false;
    for (const std::string_view name : readers) wanted = wanted || reader.name == name;
    if (!wanted) continue;
    (void)reader.accepts(sniff);
    try {
      check_trace(reader.read(path));
    } catch (const Error&) {
      // The expected outcome for bad input.
    }
  }
  return 0;
}

}  // namespace perflow::reader::fuzz
