#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "palette.hpp"
#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "time_axis.hpp"

namespace perflow::visualizer::detail {

/// Part of an aggregate span's height: one kind's share of the span's time, in its colour
/// (the kind's chunk shades mixed by time).
struct Band {
  Rgb colour;
  double share = 0;  ///< of the span's height

  friend bool operator==(const Band&, const Band&) = default;
};

/// Something a lane's row draws: one task's box, an overlapped pair's box (its F's span,
/// the top half in the F's colour and the bottom half in its backward's), or an aggregate
/// span of several tasks.
struct Mark {
  double x0 = 0;            ///< the first task's start
  double x1 = 0;            ///< the last task's finish (a box is drawn at least kMinMarkWidth wide)
  TaskId task;              ///< the task of a box (a pair's F); invalid for a span
  Rgb colour;               ///< a box's colour
  std::uint32_t tasks = 1;  ///< tasks it stands for (a pair's box: 2)
  std::uint32_t first_band = 0;  ///< a span's bands: LaneMarks::bands[first_band, + bands)
  std::uint32_t bands = 0;
  TaskId pair{};      ///< a pair's box: the paired backward; invalid otherwise
  Rgb pair_colour{};  ///< a pair's box: the backward's colour
};

struct LaneMarks {
  std::vector<Mark> marks;
  std::vector<Band> bands;

  [[nodiscard]] std::span<const Band> bands_of(const Mark& mark) const {
    return std::span<const Band>(bands).subspan(mark.first_band, mark.bands);
  }
};

/// Boxes are drawn at least this wide, so that a task of no width still shows.
inline constexpr double kMinMarkWidth = 0.35;

struct Density {
  bool aggregate = false;  ///< false: one box per task
  double narrow = 1.0;     ///< boxes narrower than this (points) may merge
  double max_span = 6.0;   ///< a span is cut once it would grow longer than this
};

/// The marks of one lane whose tasks ran in the order of `events` (one after another). An
/// overlapped pair is one mark; its paired backward, of no length, gets none of its own.
/// With aggregation, each maximal run of narrow boxes separated by less than `narrow`
/// becomes one span (cut at `max_span`) unless it holds a single task (or pair). A span is
/// drawn as bands stacked in kind order, each as tall as its kind's share of the span's time
/// (a pair gives half its time to each of its kinds), so the part left empty is the share
/// the lane idles. Neighbouring spans whose shares and colours agree (a steady phase) are
/// drawn as one.
/// Either way a lane yields at most as many marks as tasks; aggregated, also at most about
/// 2 x plot width / narrow, whatever the number of tasks.
LaneMarks lane_marks(const EventGraph& graph, const Trace& trace, std::span<const TaskId> events,
                     const TimeScale& scale, const Density& density);

}  // namespace perflow::visualizer::detail
