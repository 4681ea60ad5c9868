#include "perflow/core/memory_budget.hpp"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "perflow/core/error.hpp"
#include "perflow/core/units.hpp"

namespace perflow {
namespace {

// Sets (or, with nullptr, unsets) PERFLOW_MEMORY_LIMIT for one test and restores it after.
class ScopedLimitVariable {
 public:
  explicit ScopedLimitVariable(const char* value) {
    if (const char* old = std::getenv(kName)) old_ = old;
    if (value != nullptr) {
      ::setenv(kName, value, 1);
    } else {
      ::unsetenv(kName);
    }
  }
  ~ScopedLimitVariable() {
    if (old_) {
      ::setenv(kName, old_->c_str(), 1);
    } else {
      ::unsetenv(kName);
    }
  }
  ScopedLimitVariable(const ScopedLimitVariable&) = delete;
  ScopedLimitVariable& operator=(const ScopedLimitVariable&) = delete;

 private:
  static constexpr const char* kName = "PERFLOW_MEMORY_LIMIT";
  std::optional<std::string> old_;
};

std::uint64_t mapped_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmSize:", 0) == 0) {
      std::istringstream fields(line.substr(7));
      std::uint64_t kilobytes = 0;
      fields >> kilobytes;
      return kilobytes * 1024;
    }
  }
  return 0;
}

TEST(MemoryBudget, VariableSetsTheLimit) {
  const ScopedLimitVariable variable("2GiB");
  const std::optional<MemoryLimit> limit = memory_limit();
  ASSERT_TRUE(limit.has_value());
  EXPECT_EQ(limit->bytes, std::uint64_t{2} << 30);
  EXPECT_EQ(limit->source, "PERFLOW_MEMORY_LIMIT");
}

TEST(MemoryBudget, WorkWithinTheLimitPasses) {
  const ScopedLimitVariable variable("100MB");
  EXPECT_NO_THROW(check_memory(100e6, "exactly the limit"));
}

TEST(MemoryBudget, WorkBeyondTheLimitIsRefusedWithEstimateAndLimit) {
  const ScopedLimitVariable variable("100MB");
  try {
    check_memory(250e6, "1000 tasks at about 250000 bytes each");
    FAIL() << "expected a ResourceError";
  } catch (const ResourceError& e) {
    EXPECT_STREQ(e.what(),
                 "this run would need about 250.0MB of memory (1000 tasks at about 250000 bytes "
                 "each), more than the 100.0MB this process may take (PERFLOW_MEMORY_LIMIT); "
                 "make the pipeline smaller or raise the limit");
  }
}

TEST(MemoryBudget, MalformedVariableNamesItAndWhatWasFound) {
  const ScopedLimitVariable variable("lots");
  try {
    memory_limit();
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "PERFLOW_MEMORY_LIMIT: expected a size such as 512, \"64MB\" or \"80GiB\", "
                 "found \"lots\"");
  }
}

std::string limit_error(const char* value) {
  const ScopedLimitVariable variable(value);
  try {
    memory_limit();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// A size too large for a 64-bit byte count was read as 0, and every run was refused.
TEST(MemoryBudget, AnOverflowingVariableIsAnErrorNotZero) {
  EXPECT_EQ(limit_error("1e30GB"),
            "PERFLOW_MEMORY_LIMIT: expected a size of at most 1e18 bytes, found \"1e30GB\"");
  EXPECT_EQ(limit_error("18446744073709551616"),
            "PERFLOW_MEMORY_LIMIT: expected a size of at most 1e18 bytes, found "
            "\"18446744073709551616\"");
}

// The variable reads as every size does (the schema's grammar); near misses say what to write.
TEST(MemoryBudget, TheVariableParsesAsEverySizeDoes) {
  for (const char* same : {"2GB", "2 GB", "2e9", "2000000000", "2000MB"}) {
    const ScopedLimitVariable variable(same);
    ASSERT_TRUE(memory_limit().has_value()) << same;
    EXPECT_EQ(memory_limit()->bytes, 2'000'000'000u) << same;
  }
  EXPECT_EQ(limit_error("2gb"),
            "PERFLOW_MEMORY_LIMIT: expected a size such as 512, \"64MB\" or \"80GiB\" (units are "
            "case-sensitive: did you mean \"2GB\"?), found \"2gb\"");
  EXPECT_EQ(limit_error(" 2GB"),
            "PERFLOW_MEMORY_LIMIT: expected a size such as 512, \"64MB\" or \"80GiB\", without "
            "spaces before the number or after the unit, found \" 2GB\"");
  EXPECT_EQ(limit_error("2GB "),
            "PERFLOW_MEMORY_LIMIT: expected a size such as 512, \"64MB\" or \"80GiB\", without "
            "spaces before the number or after the unit, found \"2GB \"");
}

// The refusal's sizes are bytes: a 1-byte limit read "the 1" (format_memory's unitless form).
TEST(MemoryBudget, ATinyLimitIsPrintedInBytes) {
  const ScopedLimitVariable variable("1B");
  try {
    check_memory(512, "a test");
    FAIL() << "expected a ResourceError";
  } catch (const ResourceError& e) {
    EXPECT_STREQ(e.what(),
                 "this run would need about 512 bytes of memory (a test), more than the 1 byte "
                 "this process may take (PERFLOW_MEMORY_LIMIT); make the pipeline smaller or raise "
                 "the limit");
  }
}

// Up to 9999 bytes format_memory has no unit; the refusal still says bytes ("4608" alone
// was printed for a 4608-byte plan).
TEST(MemoryBudget, SizesBelowTenThousandBytesSayBytes) {
  EXPECT_EQ(format_bytes(1), "1 byte");
  EXPECT_EQ(format_bytes(999), "999 bytes");
  EXPECT_EQ(format_bytes(4608), "4608 bytes");
  EXPECT_EQ(format_bytes(9999), "9999 bytes");
  EXPECT_EQ(format_bytes(10000), "10.0kB");
}

// `ulimit -v` is RLIMIT_AS: the limit is what the process has left under it.
TEST(MemoryBudget, AddressSpaceLimitIsRespected) {
  const ScopedLimitVariable variable(nullptr);
  rlimit original{};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &original), 0);
  constexpr std::uint64_t kHeadroom = std::uint64_t{256} << 20;
  const std::uint64_t cap = mapped_bytes() + kHeadroom;
  if (original.rlim_max != RLIM_INFINITY && original.rlim_max < cap) {
    GTEST_SKIP() << "the hard address-space limit is below what the test needs";
  }
  rlimit lowered = original;
  lowered.rlim_cur = cap;
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &lowered), 0);
  std::optional<MemoryLimit> limit;
  bool refused = false;
  std::string message;
  try {
    limit = memory_limit();
    check_memory(4e9, "a large pipeline");
  } catch (const ResourceError& e) {
    refused = true;
    message = e.what();
  }
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &original), 0);
  ASSERT_TRUE(limit.has_value());
  EXPECT_EQ(limit->source, "ulimit -v");
  EXPECT_LE(limit->bytes, kHeadroom);
  EXPECT_GT(limit->bytes, kHeadroom / 2);
  EXPECT_TRUE(refused);
  EXPECT_NE(message.find("(a large pipeline), more than the"), std::string::npos) << message;
  EXPECT_NE(message.find("this process may take (ulimit -v)"), std::string::npos) << message;
}

}  // namespace
}  // namespace perflow
