#include "perflow/core/time.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

namespace perflow {
namespace {

TEST(ParseDuration, UnitsAreExact) {
  EXPECT_EQ(parse_duration("250ns"), 250);
  EXPECT_EQ(parse_duration("1.5us"), 1500);
  EXPECT_EQ(parse_duration("1.3ms"), 1'300'000);
  EXPECT_EQ(parse_duration("2ms"), 2'000'000);
  EXPECT_EQ(parse_duration("0.1s"), 100'000'000);
  EXPECT_EQ(parse_duration("0us"), 0);
  EXPECT_EQ(parse_duration("7\xC2\xB5s"), 7000);
  EXPECT_EQ(parse_duration("0.000000001s"), 1);
  EXPECT_EQ(parse_duration("0.999999999000s"), 999'999'999);  // zeros past 1 ns are fine
}

TEST(ParseDuration, RejectsWithAReason) {
  for (const char* bad :
       {"", "ms", "1.0005ns", "-3us", "1e3us", "fast", "1..2ms", "1.5 parsecs",
        "99999999999999999999s", "0.999999999999s", "0.9999999999s", "1.0001us0", "1315", "2.5"}) {
    EXPECT_THROW((void)parse_duration(bad), std::invalid_argument) << bad;
  }
}

// A unit-less string is refused with the spelling that would have worked.
TEST(ParseDuration, AStringNeedsItsUnit) {
  try {
    (void)parse_duration("2733");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "a duration with a unit (ns, us, ms, s), such as \"2733us\"");
  }
}

TEST(MicrosecondsToNs, RoundsRepresentationErrorOnly) {
  EXPECT_EQ(microseconds_to_ns(1315), 1'315'000);
  EXPECT_EQ(microseconds_to_ns(0.5), 500);
  EXPECT_EQ(microseconds_to_ns(1.001), 1001);  // 1000.9999999 in binary
  EXPECT_THROW((void)microseconds_to_ns(0.0004), std::invalid_argument);
  EXPECT_THROW((void)microseconds_to_ns(-1), std::invalid_argument);
}

TEST(FormatDuration, PicksAUnitByMagnitude) {
  EXPECT_EQ(format_duration(0), "0ns");
  EXPECT_EQ(format_duration(812), "812ns");
  EXPECT_EQ(format_duration(1315), "1.315us");
  EXPECT_EQ(format_duration(202'400'000), "202.4ms");
  EXPECT_EQ(format_duration(3'000'000'000), "3s");
  EXPECT_EQ(format_duration(1'234'567), "1.235ms");  // three decimals, rounded
}

}  // namespace
}  // namespace perflow
