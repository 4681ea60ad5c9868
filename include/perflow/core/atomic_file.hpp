#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perflow {

/// An output file that appears complete or not at all: `write()` fills a temporary next to
/// the target, then `commit()` renames it into place. Destroyed uncommitted, it removes the
/// temporary. A target reached through a symlink replaces the file the link points to (the
/// link stays).
///
/// A target that exists and is neither a regular file nor a directory (a device such as
/// /dev/null or /dev/full, a FIFO, a terminal, /dev/stdout on a pipe) cannot be replaced
/// and must not be: it is written in place instead (`in_place()`), with every write and the
/// close checked, and `commit()` has nothing to do.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  [[nodiscard]] const std::filesystem::path& target() const { return target_; }
  /// The temporary written before the rename; empty when the target is written in place.
  [[nodiscard]] const std::filesystem::path& temp_path() const { return temp_; }
  [[nodiscard]] bool in_place() const { return temp_.empty(); }
  /// Writes the whole content (to the temporary, or in place); throws IoError naming the
  /// target if any write or the close fails.
  void write(std::string_view content);
  /// Renames the temporary into place; throws IoError if the rename fails.
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path destination_;  // the target, or the file its symlink points to
  std::filesystem::path temp_;
  bool committed_ = false;
};

/// Writes `content` to `path` atomically; throws IoError naming the path on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// Writes several files: all contents go to temporaries first (then to the targets written
/// in place), and only when every one is written are they renamed into place, so a failure
/// leaves none of the regular files.
void write_files_atomically(
    std::span<const std::pair<std::filesystem::path, std::string_view>> files);

}  // namespace perflow
