#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <cairo.h>

#include "perflow/core/event_graph.hpp"

namespace perflow::visualizer::detail {

/// The kinds (and the largest chunk) that occur in some graphs.
struct KindsPresent {
  std::array<bool, kTaskKindCount> kinds{};
  std::uint32_t max_chunk = 0;

  void add(const EventGraph& graph);
};

/// What a legend entry's swatch shows.
/// Pair: an overlapped pair's box, the F's colour over its backward's.
enum class Swatch : std::uint8_t { Kind, CriticalPath, Arrow, Aggregate, Pair, None };

/// The pair swatch's text, for every plot that draws overlapped pairs.
inline constexpr const char* kPairLegend = "overlapped F&B pair: the F over its backward";

/// A legend line(s) above a plot: one entry per kind present (with chunk shades), then
/// entries for whatever else the plot draws; entries wrap onto more lines when needed.
class Legend {
 public:
  explicit Legend(const KindsPresent& present);
  /// An entry after the kinds (a highlight, a note); `kind` is a Pair swatch's backward.
  void add(Swatch swatch, std::string text, TaskKind kind = TaskKind::BW);

  /// Places the entries in lines of at most `width` points.
  void layout(cairo_t* measure, double width);
  /// Vertical space it takes (0 when empty).
  [[nodiscard]] double height() const;
  void draw(cairo_t* cr, double x, double top) const;

 private:
  struct Entry {
    Swatch swatch = Swatch::Kind;
    TaskKind kind = TaskKind::F;  // a Kind swatch's kind; a Pair swatch's backward
    std::uint32_t swatches = 1;   // chunk shades 0..swatches-1
    std::string text;
    bool muted = false;
    double x = 0;
    int line = 0;
  };
  std::vector<Entry> entries_;
  std::vector<TaskKind> kinds_;  // present, for the aggregate span's and the pair's samples
  int lines_ = 0;
};

}  // namespace perflow::visualizer::detail
