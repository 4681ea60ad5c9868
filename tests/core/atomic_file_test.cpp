#include "perflow/core/atomic_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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
