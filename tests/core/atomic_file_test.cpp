#include "perflow/core/atomic_file.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "perflow/core/error.hpp"

namespace perflow {
namespace {

namespace fs = std::filesystem;

/// A fresh scratch directory per test, removed afterwards.
class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("perflow_atomic_file_{}_{}", static_cast<long>(::getpid()),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void require_character_device(const fs::path& path) {
  if (!fs::is_character_file(path)) GTEST_SKIP() << path << " is not a character device here";
}

TEST_F(AtomicFileTest, RegularFileIsReplacedWithNoTemporaryLeft) {
  const fs::path target = dir_ / "out.json";
  write_file_atomically(target, "old");
  write_file_atomically(target, "new content");
  EXPECT_EQ(read(target), "new content");
  EXPECT_EQ(entries(), std::vector<std::string>{"out.json"});
}

TEST_F(AtomicFileTest, SamePathTwiceLastWins) {
  const fs::path target = dir_ / "out.json";
  const std::vector<std::pair<fs::path, std::string_view>> files = {{target, "first"},
                                                                    {target, "second"}};
  write_files_atomically(files);
  EXPECT_EQ(read(target), "second");
  EXPECT_EQ(entries(), std::vector<std::string>{"out.json"});
}

TEST_F(AtomicFileTest, SymlinkStaysAndItsFileIsReplaced) {
  const fs::path file = dir_ / "real.json";
  const fs::path link = dir_ / "link.json";
  write_file_atomically(file, "old");
  fs::create_symlink(file, link);
  write_file_atomically(link, "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read(file), "new");
  EXPECT_EQ(entries(), (std::vector<std::string>{"link.json", "real.json"}));
}

TEST_F(AtomicFileTest, DevNullIsWrittenInPlace) {
  require_character_device("/dev/null");
  AtomicFile file("/dev/null");
  EXPECT_TRUE(file.in_place());
  EXPECT_TRUE(file.temp_path().empty());
  file.write(std::string(100000, 'x'));
  file.commit();
  write_file_atomically("/dev/null", "text");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));  // still the device, never replaced
}

TEST_F(AtomicFileTest, DevFullFailsWithIoError) {
  require_character_device("/dev/full");
  try {
    write_file_atomically("/dev/full", "text");
    FAIL() << "writing /dev/full succeeded";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string_view(e.what()), "cannot write '/dev/full': No space left on device");
  }
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
}

TEST_F(AtomicFileTest, FailureInPlaceLeavesNoRegularOutput) {
  require_character_device("/dev/full");
  const fs::path report = dir_ / "report.json";
  const std::vector<std::pair<fs::path, std::string_view>> files = {
      {report, "report"}, {"/dev/null", "discarded"}, {"/dev/full", "trace"}};
  EXPECT_THROW(write_files_atomically(files), IoError);
  EXPECT_TRUE(entries().empty());  // neither the report nor its temporary
}

TEST_F(AtomicFileTest, RegularOutputsAndDevicesTogether) {
  require_character_device("/dev/null");
  const fs::path report = dir_ / "report.json";
  const std::vector<std::pair<fs::path, std::string_view>> files = {{report, "report"},
                                                                    {"/dev/null", "discarded"}};
  write_files_atomically(files);
  EXPECT_EQ(read(report), "report");
  EXPECT_EQ(entries(), std::vector<std::string>{"report.json"});
}

TEST_F(AtomicFileTest, FailureLeavesEveryOldFileAsItWas) {
  require_character_device("/dev/full");
  const fs::path plans = dir_ / "plans.json";
  write_file_atomically(plans, "old plans");
  const std::vector<std::pair<fs::path, std::string_view>> files = {{plans, "new plans"},
                                                                    {"/dev/full", "report"}};
  EXPECT_THROW(write_files_atomically(files), IoError);
  EXPECT_EQ(read(plans), "old plans");
  EXPECT_EQ(entries(), std::vector<std::string>{"plans.json"});
}

TEST_F(AtomicFileTest, DanglingSymlinkCreatesTheFileItPointsTo) {
  const fs::path link = dir_ / "link.json";
  fs::create_symlink("real.json", link);  // relative: resolved from the link's directory
  write_file_atomically(link, "content");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read(dir_ / "real.json"), "content");
  EXPECT_EQ(entries(), (std::vector<std::string>{"link.json", "real.json"}));
}

TEST_F(AtomicFileTest, ChainOfSymlinksWritesItsEnd) {
  fs::create_symlink(dir_ / "b.json", dir_ / "a.json");
  fs::create_symlink("c.json", dir_ / "b.json");
  write_file_atomically(dir_ / "a.json", "end");
  EXPECT_EQ(output_destination(dir_ / "a.json"), dir_ / "c.json");
  EXPECT_EQ(read(dir_ / "c.json"), "end");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "a.json")));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "b.json")));
}

TEST_F(AtomicFileTest, SymlinkLoopIsAnErrorNamingTheTarget) {
  const fs::path a = dir_ / "a.json";
  fs::create_symlink("b.json", a);
  fs::create_symlink("a.json", dir_ / "b.json");
  try {
    write_file_atomically(a, "text");
    FAIL() << "writing through a symlink loop succeeded";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string_view(e.what()),
              fmt::format("cannot write '{}': it is a symlink loop", a.string()));
  }
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.json", "b.json"}));  // both still links
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(a)));
  EXPECT_EQ(file_kind(a), "a symlink loop");
}

TEST_F(AtomicFileTest, DirectoryIsAnError) {
  try {
    write_file_atomically(dir_, "text");
    FAIL() << "writing a directory succeeded";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string_view(e.what()),
              fmt::format("cannot write '{}': Is a directory", dir_.string()));
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFileTest, FileKinds) {
  EXPECT_EQ(file_kind(dir_), "a directory");
  EXPECT_EQ(file_kind(dir_ / "missing"), "");
  write_file_atomically(dir_ / "file", "x");
  EXPECT_EQ(file_kind(dir_ / "file"), "");
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(file_kind(dir_ / "fifo"), "a FIFO");
  if (fs::is_character_file("/dev/zero")) {
    EXPECT_EQ(file_kind("/dev/zero"), "a character device");
  }
}

/// A process that no longer runs: a child that exited and was reaped.
long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return static_cast<long>(child);
}

std::vector<std::string> g_noticed;
fs::path g_noticed_in;
void record_notice(const fs::path& directory, std::span<const std::string> removed) {
  g_noticed_in = directory;
  g_noticed.assign(removed.begin(), removed.end());
}

TEST_F(AtomicFileTest, TemporaryIsNamedByHostAndProcess) {
  AtomicFile file(dir_ / "out.json");
  const std::string name = file.temp_path().filename().string();
  EXPECT_TRUE(name.starts_with("out.json.perflow-tmp-")) << name;
  EXPECT_TRUE(name.find(fmt::format("-{}-", static_cast<long>(::getpid()))) != std::string::npos)
      << name;
}

TEST_F(AtomicFileTest, TemporariesOfDeadProcessesAreRemovedAndTold) {
  // The marker of this host, from a temporary's name elsewhere.
  fs::create_directories(dir_ / "other");
  std::string marker;
  {
    const AtomicFile probe(dir_ / "other" / "x");
    const std::string name = probe.temp_path().filename().string();
    marker = name.substr(1, name.rfind(fmt::format("{}-", static_cast<long>(::getpid()))) - 1);
  }
  ASSERT_TRUE(marker.starts_with(".perflow-tmp-")) << marker;
  const std::string dead = fmt::format("r.json{}{}-0", marker, dead_pid());
  const std::string alive = fmt::format("c.json{}{}-1", marker, static_cast<long>(::getppid()));
  const std::string other_host = fmt::format("t.json.perflow-tmp-elsewhere-{}-0", dead_pid());
  const fs::path fresh = dir_ / "fresh";  // no AtomicFile of this process was there yet
  fs::create_directories(fresh);
  for (const std::string& name : {dead, alive, other_host}) std::ofstream(fresh / name) << "x";

  set_stale_temporaries_notice(record_notice);
  g_noticed.clear();
  write_file_atomically(fresh / "out.json", "new");
  set_stale_temporaries_notice(nullptr);

  std::vector<std::string> left;
  for (const fs::directory_entry& entry : fs::directory_iterator(fresh)) {
    left.push_back(entry.path().filename().string());
  }
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{alive, "out.json", other_host}));
  EXPECT_EQ(g_noticed, std::vector<std::string>{dead});
  EXPECT_EQ(g_noticed_in, fresh);
}

TEST_F(AtomicFileTest, SignalRemovesTemporariesThenEndsTheProcess) {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    const fs::path target = dir_ / "report.json";
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      std::signal(signal_number, SIG_DFL);  // whatever the test runner set
      remove_temporaries_on_signals();
      AtomicFile file(target);
      file.write("written, not committed");
      ::raise(signal_number);
      ::_exit(0);  // not reached: the signal ends the process
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "signal " << signal_number << ", status " << status;
    EXPECT_EQ(WTERMSIG(status), signal_number);
    EXPECT_TRUE(entries().empty())
        << "signal " << signal_number << " left " << (entries().empty() ? "" : entries().front());
  }
}

TEST_F(AtomicFileTest, MissingDirectoryFails) {
  try {
    write_file_atomically(dir_ / "no" / "such.json", "text");
    FAIL() << "writing into a missing directory succeeded";
  } catch (const IoError& e) {
    EXPECT_NE(std::string_view(e.what()).find("No such file or directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace perflow
