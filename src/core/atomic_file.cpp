#include "perflow/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <system_error>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow {
namespace {

[[noreturn]] void throw_io_error(const std::filesystem::path& target, int error) {
  throw IoError(fmt::format("cannot write '{}': {}", target.string(),
                            std::generic_category().message(error)));
}

/// A file that exists and can only be written in place: a device, a FIFO, a socket.
bool is_special_file(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return false;
  return !std::filesystem::is_regular_file(status) && !std::filesystem::is_directory(status);
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target)
    : target_(std::move(target)), destination_(target_) {
  if (is_special_file(target_)) return;  // written in place: no temporary
  std::error_code ec;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(target_, ec))) {
    // Replace the file the link points to, not the link (a dangling link stays as it is).
    const std::filesystem::path resolved = std::filesystem::canonical(target_, ec);
    if (!ec) destination_ = resolved;
  }
  // Same directory as the destination, so the final rename never crosses file systems; a
  // name of its own even when two outputs of one process name the same file.
  static std::atomic<unsigned> count{0};
  temp_ = destination_;
  temp_ += fmt::format(".tmp{}-{}", static_cast<long>(::getpid()), count++);
}

AtomicFile::~AtomicFile() {
  if (!committed_ && !in_place()) {
    std::error_code ignored;
    std::filesystem::remove(temp_, ignored);
  }
}

void AtomicFile::write(std::string_view content) {
  // In place: the file exists, so it is never created (a device that vanished is an error).
  // A new temporary gets 0666 less the umask, as any new file does.
  const int fd = in_place() ? ::open(target_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC)
                            : ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw_io_error(target_, errno);
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      const int error = written < 0 ? errno : EIO;
      ::close(fd);
      throw_io_error(target_, error);
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  // A network or full file system may only report the failure here.
  if (::close(fd) != 0 && errno != EINTR) throw_io_error(target_, errno);
}

void AtomicFile::commit() {
  if (in_place()) {
    committed_ = true;
    return;
  }
  std::error_code ec;
  std::filesystem::rename(temp_, destination_, ec);
  if (ec) {
    throw IoError(fmt::format("cannot write '{}': {}", target_.string(), ec.message()));
  }
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  AtomicFile file(path);
  file.write(content);
  file.commit();
}

void write_files_atomically(
    std::span<const std::pair<std::filesystem::path, std::string_view>> files) {
  std::vector<std::unique_ptr<AtomicFile>> outputs;
  for (const auto& [path, content] : files) {
    outputs.push_back(std::make_unique<AtomicFile>(path));
  }
  // Temporaries first: a failure there leaves nothing behind. Files written in place cannot
  // be taken back, so they come after, and the renames last.
  for (const bool in_place : {false, true}) {
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (outputs[i]->in_place() == in_place) outputs[i]->write(files[i].second);
    }
  }
  for (auto& file : outputs) file->commit();
}

}  // namespace perflow
