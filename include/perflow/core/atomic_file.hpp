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
/// temporary.
///
/// One rule for symlinks (`output_destination`): writing through a symlink writes the file it
/// points to, following a chain of links, and the link stays; a dangling link creates that
/// file (its directory must exist); a loop of links is an IoError naming the target. A target
/// that is a directory is an IoError.
///
/// A target that exists and is neither a regular file nor a directory (a device such as
/// /dev/null or /dev/full, a FIFO, a terminal, /dev/stdout on a pipe) cannot be replaced
/// and must not be: it is written in place instead (`in_place()`), with every write and the
/// close checked, and `commit()` has nothing to do.
///
/// The temporary is named `<destination>.perflow-tmp-<host>-<pid>-<n>`. While it exists it
/// is listed in a fixed-size registry that the handlers of `remove_temporaries_on_signals()`
/// unlink. The first AtomicFile of a process in a directory removes the temporaries there
/// that a process of this host left and that is no longer running (killed by SIGKILL, a
/// crash), and tells `set_stale_temporaries_notice`'s function.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  [[nodiscard]] const std::filesystem::path& target() const { return target_; }
  /// The file a commit replaces: the target, or the file its symlinks point to.
  [[nodiscard]] const std::filesystem::path& destination() const { return destination_; }
  /// The temporary written before the rename; empty when the target is written in place.
  [[nodiscard]] const std::filesystem::path& temp_path() const { return temp_; }
  [[nodiscard]] bool in_place() const { return temp_.empty(); }
  /// Writes the whole content (to the temporary, or in place); throws IoError naming the
  /// target if any write or the close fails.
  void write(std::string_view content);
  /// Renames the temporary into place; throws IoError if the rename fails.
  void commit();

 private:
  void discard();

  std::filesystem::path target_;
  std::filesystem::path destination_;  // the target, or the file its symlinks point to
  std::filesystem::path temp_;
  int slot_ = -1;  // in the signal handlers' registry; -1 when not listed
  bool committed_ = false;
};

/// The file that writing `target` replaces or creates: `target` itself, or the end of its
/// chain of symlinks (relative links resolved from their own directory). Throws IoError
/// naming `target` for a loop of links.
std::filesystem::path output_destination(const std::filesystem::path& target);

/// Writes `content` to `path` atomically; throws IoError naming the path on failure.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/// Writes several files as one: all contents go to temporaries first (then to the targets
/// written in place), and only when every one is written are they renamed into place (with
/// SIGINT, SIGTERM and SIGHUP held back meanwhile), so a failed write leaves every old file
/// as it was and no temporary.
void write_files_atomically(
    std::span<const std::pair<std::filesystem::path, std::string_view>> files);

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that unlink the temporaries being
/// written (async-signal-safe) and then end the process by the same signal with its default
/// action. A signal that is ignored (nohup) stays ignored. For a program's main (the perflow
/// command); a library embedding PerFlow (the Python module) keeps its host's handlers.
void remove_temporaries_on_signals();

/// Called after temporaries of dead processes were removed from `directory` (file names).
using StaleTemporariesNotice = void (*)(const std::filesystem::path& directory,
                                        std::span<const std::string> removed);
/// Sets the function told about removed stale temporaries (none by default: library code
/// does not print).
void set_stale_temporaries_notice(StaleTemporariesNotice notice);

/// Whether `path` exists and is neither a regular file nor a directory (a device, a FIFO, a
/// socket): an output there is written in place, never replaced.
bool is_special_file(const std::filesystem::path& path);

/// What `path` names when it is something other than a regular file: "a directory", "a
/// character device", "a block device", "a FIFO", "a socket", "a symlink loop"; empty for a
/// regular file (or a link to one) and for a path that does not exist.
std::string file_kind(const std::filesystem::path& path);

}  // namespace perflow
