#include "perflow/core/did_you_mean.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace perflow {
namespace {

TEST(EditDistance, Levenshtein) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("1f1b", "f1b1"), 2u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
}

TEST(ClosestMatch, SuggestsOnlyPlausibleTypos) {
  const std::vector<std::string> names = {"gpipe", "1f1b", "zb-h1"};
  EXPECT_EQ(closest_match("1f1bb", names), "1f1b");
  EXPECT_EQ(closest_match("gpip", names), "gpipe");
  EXPECT_EQ(closest_match("zb_h1", names), "zb-h1");
  EXPECT_EQ(closest_match("dualpipe", names), std::nullopt);
  EXPECT_EQ(did_you_mean_suffix("gpipes", names), "; did you mean 'gpipe'?");
  EXPECT_EQ(did_you_mean_suffix("xxxxxxxx", names), "");
}

}  // namespace
}  // namespace perflow
