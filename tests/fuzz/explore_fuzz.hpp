#pragma once
// What the fuzz targets of the sweep, search and --set surfaces share: a scratch directory of
// this process (the explore readers take paths), a bound on the runs they simulate, and the
// rule that a perflow::Error is the only acceptable failure. Any other exception prints what
// it says and aborts, which is the fuzzer's crash. Each target counts its inputs that ended in
// a perflow::Error and reports them to replay_main's summary by defining
// `extern "C" std::uint64_t perflow_fuzz_errors()` (replay_main declares it weak).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <unistd.h>

#include "perflow/core/error.hpp"
#include "perflow/study/config.hpp"

namespace perflow::fuzz {

/// Inputs that ended in a perflow::Error.
inline std::uint64_t& error_count() {
  static std::uint64_t count = 0;
  return count;
}

/// This process's directory `perflow_fuzz_<stem>_<pid>` in the temporary directory, created
/// on first use and removed at exit.
inline const std::filesystem::path& scratch_dir(std::string_view stem) {
  struct ScratchDir {
    std::filesystem::path path;
    explicit ScratchDir(std::filesystem::path where) : path(std::move(where)) {
      std::filesystem::create_directories(path);
    }
    ~ScratchDir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const ScratchDir dir(
      std::filesystem::temp_directory_path() /
      ("perflow_fuzz_" + std::string(stem) + "_" + std::to_string(::getpid())));
  return dir.path;
}

/// Replaces `path` with `bytes`.
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Valid but huge pipelines are legal input; the targets simulate only small ones.
inline bool small_enough(const study::Config& config, std::uint64_t max_tasks = 5'000) {
  const std::uint64_t tasks = std::uint64_t{config.pipeline.stages} * config.pipeline.microbatches *
                              config.pipeline.chunks * config.iterations.count;
  return tasks <= max_tasks;
}

/// A broken promise of the library that is not an exception: prints it and aborts.
[[noreturn]] inline void fail(std::string_view what) {
  std::fprintf(stderr, "fuzz: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

/// Runs `body`; a perflow::Error is counted, anything else thrown aborts.
template <class Body>
int guarded(Body&& body) {
  try {
    body();
  } catch (const Error&) {
    ++error_count();  // The expected outcome for bad input.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an exception that is not a perflow::Error: %s\n", e.what());
    std::abort();
  } catch (...) {
    fail("an exception that is not a std::exception");
  }
  return 0;
}

}  // namespace perflow::fuzz
