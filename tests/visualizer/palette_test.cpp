// Chunk shades (detail/palette.hpp): every shade of every kind shows on the lane's grey, and
// the shades of one kind are distinct and move away from the kind's colour chunk by chunk.
#include "../../src/visualizer/detail/palette.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace perflow::visualizer::detail {
namespace {

double contrast(Rgb a, Rgb b) {
  const double la = relative_luminance(a) + 0.05, lb = relative_luminance(b) + 0.05;
  return std::max(la, lb) / std::min(la, lb);
}

double distance(Rgb a, Rgb b) { return std::hypot(a.r - b.r, a.g - b.g, a.b - b.b); }

TEST(Palette, ChunkShadesShowOnTheLaneAndStayApart) {
  for (int k = 0; k < kTaskKindCount; ++k) {
    const auto kind = static_cast<TaskKind>(k);
    if (kind == TaskKind::Sync) continue;  // drawn as a mark, never shaded
    const Rgb base = task_colour(kind, 0);
    double last = 0;
    for (std::uint32_t chunk = 1; chunk < 8; ++chunk) {
      SCOPED_TRACE(testing::Message() << to_string(kind) << " chunk " << chunk);
      const Rgb shade = task_colour(kind, chunk);
      // 1.5:1 against the lane, or no worse than the kind's own colour (yellow R is 1.2:1).
      EXPECT_GE(contrast(shade, kRowBackground),
                std::min(1.45, contrast(base, kRowBackground)) - 1e-9);
      // Each chunk further from the base; clearly so up to 5 chunks (V schedules and
      // interleaving at 4-5 are common), converging after.
      EXPECT_GT(distance(shade, base), last + (chunk < 5 ? 0.03 : 0.0));
      last = distance(shade, base);
    }
  }
}

TEST(Palette, DarkKindsLightenAndLightKindsDarken) {
  EXPECT_GT(relative_luminance(task_colour(TaskKind::F, 3)),
            relative_luminance(task_colour(TaskKind::F, 0)));
  EXPECT_LT(relative_luminance(task_colour(TaskKind::R, 3)),
            relative_luminance(task_colour(TaskKind::R, 0)));
  EXPECT_NEAR(relative_luminance(kWhite), 1.0, 1e-12);
  EXPECT_NEAR(relative_luminance(kInk), 0.0103, 1e-4);
}

}  // namespace
}  // namespace perflow::visualizer::detail
