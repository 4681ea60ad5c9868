#include "perflow/core/atomic_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void throw_io_error(const fs::path& target, int error) {
  throw IoError(fmt::format("cannot write '{}': {}", target.string(),
                            std::generic_category().message(error)));
}

// --- The temporaries the signal handlers remove -------------------------------------------
//
// A fixed array, so the handler touches no heap and takes no lock: a slot is claimed
// (kFilling), its path copied, then published (kReady); the handler unlinks only published
// paths. A temporary that finds no free slot is still removed by its destructor, just not on
// a signal.

constexpr int kFree = 0;
constexpr int kFilling = 1;
constexpr int kReady = 2;
constexpr std::size_t kSlots = 64;

struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX] = {};
};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free state");

Slot g_slots[kSlots];

int register_temporary(const fs::path& path) {
  const std::string& text = path.native();
  if (text.size() >= PATH_MAX) return -1;
  for (std::size_t i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(g_slots[i].path, text.c_str(), text.size() + 1);
    g_slots[i].state.store(kReady);
    return static_cast<int>(i);
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot >= 0) g_slots[slot].state.store(kFree);
}

extern "C" void remove_temporaries_and_reraise(int signal_number) {
  for (Slot& slot : g_slots) {
    if (slot.state.load() == kReady) ::unlink(slot.path);
  }
  // The default action back; the signal, blocked while this runs, is delivered (and ends the
  // process) when it returns.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal_number, &default_action, nullptr);
  ::raise(signal_number);
}

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

// --- Naming temporaries, and removing those of dead processes -----------------------------

/// ".perflow-tmp-<host>-": the host keeps one machine from removing the live temporaries of
/// another that writes into the same shared directory (its PIDs mean nothing here).
const std::string& temp_marker() {
  static const std::string marker = [] {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    std::string name;
    for (const char* c = host; *c != '\0' && name.size() < 64; ++c) {
      const bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                         (*c >= '0' && *c <= '9') || *c == '.' || *c == '_';
      name += plain ? *c : '_';
    }
    return ".perflow-tmp-" + (name.empty() ? std::string("localhost") : name) + "-";
  }();
  return marker;
}

/// The PID in a temporary's name `<file><marker><pid>-<n>` of this host; 0 when it is not
/// one.
long temporary_owner(const std::string& name) {
  const std::string& marker = temp_marker();
  const std::size_t at = name.rfind(marker);
  if (at == std::string::npos || at == 0) return 0;
  const std::string rest = name.substr(at + marker.size());
  const std::size_t dash = rest.find('-');
  if (dash == 0 || dash == std::string::npos || dash + 1 == rest.size() || dash > 9) return 0;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (i != dash && (rest[i] < '0' || rest[i] > '9')) return 0;
  }
  return std::stol(rest.substr(0, dash));
}

std::atomic<StaleTemporariesNotice> g_notice{nullptr};

/// Once per directory and process: removes the temporaries that processes of this host left
/// there and that no longer run.
void remove_stale_temporaries(const fs::path& directory) {
  static std::mutex mutex;
  static std::set<fs::path> scanned;
  std::error_code ec;
  const fs::path key = fs::absolute(directory.empty() ? fs::path(".") : directory, ec);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (ec || !scanned.insert(key.lexically_normal()).second) return;
  }
  std::vector<std::string> removed;
  const long self = static_cast<long>(::getpid());
  for (fs::directory_iterator it(key, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const long owner = temporary_owner(name);
    if (owner <= 0 || owner == self) continue;
    if (::kill(static_cast<pid_t>(owner), 0) == 0 || errno != ESRCH) continue;  // still running
    std::error_code ignored;
    if (fs::is_regular_file(it->symlink_status(ignored)) && fs::remove(it->path(), ignored)) {
      removed.push_back(name);
    }
  }
  if (removed.empty()) return;
  std::sort(removed.begin(), removed.end());
  if (const StaleTemporariesNotice notice = g_notice.load()) notice(directory, removed);
}

}  // namespace

fs::path output_destination(const fs::path& target) {
  // 40 links, as Linux's own limit (MAXSYMLINKS) before ELOOP.
  constexpr int kMaxLinks = 40;
  fs::path path = target;
  for (int links = 0;; ++links) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(path, ec)) || ec) return path;
    if (links == kMaxLinks) {
      throw IoError(fmt::format("cannot write '{}': it is a symlink loop", target.string()));
    }
    const fs::path link = fs::read_symlink(path, ec);
    if (ec) throw_io_error(target, ec.value());
    path = link.is_absolute() ? link : path.parent_path() / link;
  }
}

bool is_special_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return false;
  return !fs::is_regular_file(status) && !fs::is_directory(status);
}

std::string file_kind(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec) {
    return ec == std::errc::too_many_symbolic_link_levels ? "a symlink loop" : std::string();
  }
  switch (status.type()) {
    case fs::file_type::regular:
    case fs::file_type::not_found:
      return {};
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

AtomicFile::AtomicFile(fs::path target) : target_(std::move(target)), destination_(target_) {
  if (is_special_file(target_)) return;  // written in place: no temporary
  destination_ = output_destination(target_);
  std::error_code ec;
  if (fs::is_directory(destination_, ec)) throw_io_error(target_, EISDIR);
  remove_stale_temporaries(destination_.parent_path());
  // Same directory as the destination, so the final rename never crosses file systems; a
  // name of its own even when two outputs of one process name the same file.
  static std::atomic<unsigned> count{0};
  temp_ = destination_;
  temp_ += fmt::format("{}{}-{}", temp_marker(), static_cast<long>(::getpid()), count++);
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::discard() {
  if (in_place()) return;
  std::error_code ignored;
  fs::remove(temp_, ignored);
  unregister_temporary(slot_);
  slot_ = -1;
}

void AtomicFile::write(std::string_view content) {
  // In place: the file exists, so it is never created (a device that vanished is an error).
  // A new temporary gets 0666 less the umask, as any new file does; it is listed for the
  // signal handlers before it exists.
  if (!in_place() && slot_ < 0) slot_ = register_temporary(temp_);
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
  fs::rename(temp_, destination_, ec);
  if (ec) {
    throw IoError(fmt::format("cannot write '{}': {}", target_.string(), ec.message()));
  }
  committed_ = true;
  unregister_temporary(slot_);
  slot_ = -1;
}

void write_file_atomically(const fs::path& path, std::string_view content) {
  AtomicFile file(path);
  file.write(content);
  file.commit();
}

void write_files_atomically(std::span<const std::pair<fs::path, std::string_view>> files) {
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
  // A destination that became a directory meanwhile would fail its rename after others
  // were done.
  for (const auto& file : outputs) {
    std::error_code ec;
    if (!file->in_place() && fs::is_directory(file->destination(), ec)) {
      throw_io_error(file->target(), EISDIR);
    }
  }
  // The renames as one step: a signal that arrives meanwhile is delivered after them.
  sigset_t held;
  sigset_t previous;
  sigemptyset(&held);
  for (const int signal_number : kCleanupSignals) sigaddset(&held, signal_number);
  pthread_sigmask(SIG_BLOCK, &held, &previous);
  try {
    for (auto& file : outputs) file->commit();
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void remove_temporaries_on_signals() {
  for (const int signal_number : kCleanupSignals) {
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) != 0) continue;
    if (current.sa_handler == SIG_IGN) continue;  // nohup: stays ignored
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_reraise;
    sigemptyset(&action.sa_mask);
    for (const int other : kCleanupSignals) sigaddset(&action.sa_mask, other);
    action.sa_flags = 0;
    ::sigaction(signal_number, &action, nullptr);
  }
}

void set_stale_temporaries_notice(StaleTemporariesNotice notice) { g_notice.store(notice); }

}  // namespace perflow
