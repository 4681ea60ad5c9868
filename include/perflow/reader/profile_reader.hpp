#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perflow/reader/kernel_trace.hpp"

namespace perflow::reader {

/// The first bytes of a file (decompressed when the file is gzip) and its name: what a
/// reader looks at to claim a file.
struct FileSniff {
  std::filesystem::path path;
  std::string_view head;  ///< up to 64 KiB of content
  bool gzip = false;
};

/// A profile format: how to recognise it and how to read it.
struct ProfileReader {
  std::string name;         ///< e.g. "kineto"
  std::string description;  ///< one line for `perflow costs --help` and errors
  /// True if the file is in this format (by content; the extension is only a hint).
  std::function<bool(const FileSniff&)> accepts;
  /// Reads the file; throws perflow::ConfigError / IoError naming the file, the byte offset
  /// or line, what was expected and what was found.
  std::function<KernelTrace(const std::filesystem::path&)> read;
};

/// Every built-in reader, in the order they are tried.
std::span<const ProfileReader> profile_readers();

/// Picks the reader by content and reads the file. Throws ConfigError listing the known
/// formats when no reader accepts it.
KernelTrace read_profile(const std::filesystem::path& path);

}  // namespace perflow::reader
