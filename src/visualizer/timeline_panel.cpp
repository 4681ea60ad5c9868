#include "detail/timeline_panel.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "detail/density.hpp"
#include "detail/draw.hpp"
#include "detail/pairs.hpp"
#include "detail/palette.hpp"

namespace perflow::visualizer::detail {
namespace {

constexpr double kLabelGap = 10;    // between the row labels and the plot
constexpr double kSublabelGap = 6;  // between a device's name and its label
constexpr double kBandInset = 1;
constexpr double kLabelSizeMax = 10;
// Below this a label cannot be read (a communication lane's 3.6 would be about 7 px in a
// PNG at scale 2): such rows show their tasks by colour and legend alone.
constexpr double kLabelSizeMin = 5;
constexpr double kSeparatorWidth = 0.75;
constexpr double kLabelPadding = 2.5;

double box_inset(const LaneRow& row) { return row.compute ? 3 : 2; }
double box_height(const LaneRow& row) { return std::max(1.0, row.height - 2 * box_inset(row)); }
double row_font(const LaneRow& row) { return row.compute ? kRowLabelSize : kSmallLabelSize; }

double widest_sublabel(cairo_t* cr, const std::vector<LaneRow>& rows) {
  set_font(cr, kRowLabelSize);
  double widest = 0;
  for (const LaneRow& row : rows) {
    if (!row.sublabel.empty()) widest = std::max(widest, text_width(cr, row.sublabel));
  }
  return widest;
}

}  // namespace

TimelinePanel::TimelinePanel(const EventGraph& graph, const Trace& trace,
                             const simulator::Metrics& metrics, const PanelOptions& options)
    : graph_(graph),
      trace_(trace),
      metrics_(metrics),
      options_(options),
      rows_(plan_rows(graph, trace, options.device_labels, options.row_height)),
      aggregate_(graph.task_count() > options.aggregate_above) {
  if (!options.dependency_arrows) return;
  // Lane by lane in the order things ran, so the drawing does not depend on task ids.
  for (std::uint32_t l = 0; l < trace.lane_count(); ++l) {
    for (const TaskId u : trace.events(LaneId{l})) {
      for (const Adjacent& s : graph.successors(u)) {
        if (s.kind() == EdgeKind::Data && graph.device(s.task()) != graph.device(u)) {
          cross_.push_back({u, s.task()});
        }
      }
    }
  }
}

double TimelinePanel::label_width(cairo_t* measure) const {
  double names = 0;
  for (const LaneRow& row : rows_) {
    set_font(measure, row_font(row));
    names = std::max(names, text_width(measure, row.label));
  }
  const double sub = widest_sublabel(measure, rows_);
  return sub > 0 ? names + kSublabelGap + sub : names;
}

double TimelinePanel::height() const {
  return rows_.empty() ? 0.0 : rows_.back().top + rows_.back().height;
}

bool TimelinePanel::draws_arrows() const {
  return options_.dependency_arrows && !cross_.empty() && cross_.size() <= options_.max_arrows;
}

void TimelinePanel::draw(cairo_t* cr, const TimeScale& scale, double top) const {
  draw_rows(cr, scale, top);
  if (options_.critical_path) draw_critical_path(cr, scale, top);
  if (draws_arrows()) draw_arrows(cr, scale, top);
}

void TimelinePanel::draw_rows(cairo_t* cr, const TimeScale& scale, double top) const {
  const double bottom = top + height();

  // Row labels and backgrounds: the device's name right-aligned, its label (GPU type) after.
  const double sub = widest_sublabel(cr, rows_);
  const double name_end = scale.plot_x - kLabelGap - (sub > 0 ? kSublabelGap + sub : 0);
  for (const LaneRow& row : rows_) {
    const double row_top = top + row.top;
    fill_rect(cr, scale.plot_x, row_top + kBandInset, scale.plot_width, row.height - 2 * kBandInset,
              kRowBackground);
    set_font(cr, row_font(row));
    cairo_text_extents_t digit;
    cairo_text_extents(cr, "0", &digit);
    const double baseline = row_top + row.height / 2 + digit.height / 2;
    set_colour(cr, row.compute ? kInk : kMutedInk);
    show_text(cr, name_end - text_width(cr, row.label), baseline, row.label);
    if (!row.sublabel.empty()) {
      set_colour(cr, kMutedInk);
      show_text(cr, name_end + kSublabelGap, baseline, row.sublabel);
    }
  }

  draw_gridlines(cr, scale, top, bottom);

  // Boxes (or spans), one fill each, then one stroked path of separators per row.
  const Density density{aggregate_};
  std::vector<LaneMarks> lanes(rows_.size());
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    const LaneRow& row = rows_[r];
    if (row.lane.value >= trace_.lane_count()) continue;
    lanes[r] = lane_marks(graph_, trace_, trace_.events(row.lane), scale, density);
    const std::vector<Mark>& marks = lanes[r].marks;
    const double box_top = top + row.top + box_inset(row);
    const double h = box_height(row);
    for (const Mark& mark : marks) {
      const double w = std::max(kMinMarkWidth, mark.x1 - mark.x0);
      if (mark.pair.valid()) {  // an overlapped pair: the F on top, its backward below
        fill_rect(cr, mark.x0, box_top, w, h / 2, mark.colour);
        fill_rect(cr, mark.x0, box_top + h / 2, w, h / 2, mark.pair_colour);
        continue;
      }
      if (mark.task.valid()) {
        fill_rect(cr, mark.x0, box_top, w, h, mark.colour);
        continue;
      }
      double y = box_top;  // a span: its kinds' bands, stacked from the top
      for (const Band& band : lanes[r].bands_of(mark)) {
        fill_rect(cr, mark.x0, y, w, h * band.share, band.colour);
        y += h * band.share;
      }
    }
    bool any = false;
    for (std::size_t i = 1; i < marks.size(); ++i) {
      const Mark& prev = marks[i - 1];
      const Mark& cur = marks[i];
      if (!prev.task.valid() || !cur.task.valid()) continue;  // spans are shaded, not split
      if (trace_.start_of(cur.task) > trace_.finish_of(prev.task)) continue;  // idle between
      const double x = cur.x0;
      if (std::min(x - prev.x0, cur.x1 - x) < 4 * kSeparatorWidth) continue;  // tiny boxes
      cairo_move_to(cr, x, box_top);
      cairo_line_to(cr, x, box_top + h);
      any = true;
    }
    if (any) {
      set_colour(cr, kWhite);
      cairo_set_line_width(cr, kSeparatorWidth);
      cairo_stroke(cr);
    }
  }

  // Labels where they fit. The narrowest possible label bounds the work for tiny boxes.
  double font_size = -1;
  double narrowest = 0;
  cairo_font_extents_t font{};
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    const LaneRow& row = rows_[r];
    const double size = std::min(kLabelSizeMax, box_height(row) * 0.6);
    if (size < kLabelSizeMin) continue;
    if (size != font_size) {
      font_size = size;
      set_font(cr, size);
      narrowest = std::numeric_limits<double>::max();
      for (int k = 0; k < kTaskKindCount; ++k) {
        narrowest = std::min(narrowest, text_width(cr, task_label(static_cast<TaskKind>(k), 0, 0)));
      }
      cairo_font_extents(cr, &font);
    }
    const double middle = top + row.top + row.height / 2;
    const double baseline = middle + (font.ascent - font.descent) / 2 - 0.5;
    for (const Mark& mark : lanes[r].marks) {
      if (!mark.task.valid()) continue;
      const double w = mark.x1 - mark.x0;
      if (w < narrowest + 2 * kLabelPadding) continue;
      // A pair shows both tasks ("F3.0+BW1.1"), or its F's alone where that is all that fits.
      std::string label = graph_.label(mark.task);
      double label_width = text_width(cr, label);
      if (mark.pair.valid()) {
        const std::string both = label + "+" + graph_.label(mark.pair);
        if (const double both_width = text_width(cr, both); w >= both_width + 2 * kLabelPadding) {
          label = both;
          label_width = both_width;
        }
      }
      if (w < label_width + 2 * kLabelPadding) continue;
      set_colour(cr, mark.pair.valid() ? label_ink(mark.colour, mark.pair_colour)
                                       : label_ink(mark.colour));
      show_text(cr, mark.x0 + (w - label_width) / 2, baseline, label);
    }
  }
}

std::vector<std::uint32_t> TimelinePanel::row_of_tasks() const {
  std::vector<std::uint32_t> row_of(graph_.task_count(), std::numeric_limits<std::uint32_t>::max());
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    if (rows_[r].lane.value >= trace_.lane_count()) continue;
    for (const TaskId t : trace_.events(rows_[r].lane)) {
      row_of[t.value] = static_cast<std::uint32_t>(r);
    }
  }
  return row_of;
}

void TimelinePanel::draw_critical_path(cairo_t* cr, const TimeScale& scale, double top) const {
  const auto& path = metrics_.critical_path;
  if (path.empty()) return;
  const std::vector<std::uint32_t> row_of = row_of_tasks();
  const auto drawn = [&](TaskId t) {
    return t.value < row_of.size() && row_of[t.value] < rows_.size();
  };
  // Outlines around the boxes on the path (a paired backward is inside its F's box).
  for (const TaskId t : path) {
    if (!drawn(t) || graph_.paired(t)) continue;
    const LaneRow& row = rows_[row_of[t.value]];
    const double x0 = scale.x_of(trace_.start_of(t));
    const double w = std::max(kMinMarkWidth, scale.x_of(trace_.finish_of(t)) - x0);
    cairo_rectangle(cr, x0, top + row.top + box_inset(row) - 0.5, w, box_height(row) + 1);
  }
  set_colour(cr, kHighlight);
  cairo_set_line_width(cr, 1.4);
  cairo_stroke(cr);
  // Where the path changes lanes: a line from one box's end to the next one's start.
  for (std::size_t i = 1; i < path.size(); ++i) {
    if (!drawn(path[i - 1]) || !drawn(path[i])) continue;
    const std::uint32_t a = row_of[path[i - 1].value];
    const std::uint32_t b = row_of[path[i].value];
    if (a == b) continue;
    const double ya = top + rows_[a].top + rows_[a].height / 2;
    const double yb = top + rows_[b].top + rows_[b].height / 2;
    cairo_move_to(cr, scale.x_of(trace_.finish_of(path[i - 1])), ya);
    cairo_line_to(cr, scale.x_of(trace_.start_of(path[i])), yb);
  }
  cairo_set_line_width(cr, 1.0);
  cairo_stroke(cr);
}

void TimelinePanel::draw_arrows(cairo_t* cr, const TimeScale& scale, double top) const {
  const std::vector<std::uint32_t> row_of = row_of_tasks();
  constexpr double kHead = 4;                // arrowhead length
  std::vector<std::array<double, 4>> heads;  // tip x, tip y, unit direction x, y
  for (const Dependence& dep : cross_) {
    const std::uint32_t a = row_of[dep.from.value];
    const std::uint32_t b = row_of[dep.to.value];
    if (a >= rows_.size() || b >= rows_.size() || a == b) continue;
    const LaneRow& from = rows_[a];
    const LaneRow& to = rows_[b];
    const bool down = b > a;
    const double x0 = scale.x_of(trace_.finish_of(dep.from));
    const double y0 = top + from.top + box_inset(from) + (down ? box_height(from) : 0);
    // Into a paired backward: to where its pair starts, which waits for it.
    const double x1 = scale.x_of(shown_span(graph_, trace_, dep.to).start);
    const double y1 = top + to.top + box_inset(to) + (down ? 0 : box_height(to));
    const double length = std::hypot(x1 - x0, y1 - y0);
    if (length < 1e-9) continue;
    cairo_move_to(cr, x0, y0);
    cairo_line_to(cr, x1, y1);
    heads.push_back({x1, y1, (x1 - x0) / length, (y1 - y0) / length});
  }
  cairo_set_source_rgba(cr, kInk.r, kInk.g, kInk.b, 0.55);
  cairo_set_line_width(cr, 0.6);
  cairo_stroke(cr);
  for (const auto& [x, y, dx, dy] : heads) {
    cairo_move_to(cr, x, y);
    cairo_line_to(cr, x - kHead * dx - kHead * 0.45 * dy, y - kHead * dy + kHead * 0.45 * dx);
    cairo_line_to(cr, x - kHead * dx + kHead * 0.45 * dy, y - kHead * dy - kHead * 0.45 * dx);
    cairo_close_path(cr);
  }
  cairo_fill(cr);
}

}  // namespace perflow::visualizer::detail
