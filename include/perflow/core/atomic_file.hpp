#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perflow {

/// An output file that appears complete or not at all: write to `temp_path()`, then
/// `commit()` renames it into place. Destroyed uncommitted, it removes the temporary.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  [[nodiscard]] const std::filesystem::path& temp_path() const { return temp_; }
  [[nodiscard]] const std::filesystem::path& target() const { return target_; }
  /// Throws IoError if the rename fails.
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  bool committed_ = false;
};

/// Writes `content` to `path` atomically; throws IoError naming the path on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// Writes several files: all contents go to temporaries first, and only when every one is
/// written are they renamed into place, so a failure leaves none of them.
void write_files_atomically(
    std::span<const std::pair<std::filesystem::path, std::string_view>> files);

}  // namespace perflow
