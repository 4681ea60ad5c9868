#include "detail/legend.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "detail/density.hpp"
#include "detail/draw.hpp"
#include "detail/palette.hpp"

namespace perflow::visualizer::detail {
namespace {

constexpr double kSwatch = 11;
constexpr double kChunkSwatch = 8;
constexpr double kLegendLine = 17;
constexpr double kEntryGap = 18;
constexpr std::uint32_t kMaxChunkSwatches = 8;

double swatch_width(Swatch swatch, std::uint32_t swatches) {
  switch (swatch) {
    case Swatch::Kind:
      return swatches == 1 ? kSwatch : kChunkSwatch * swatches;
    case Swatch::CriticalPath:
    case Swatch::Aggregate:
    case Swatch::Pair:
      return kSwatch;
    case Swatch::Arrow:
      return 2 * kSwatch;
    case Swatch::None:
      break;
  }
  return 0;
}

}  // namespace

void KindsPresent::add(const EventGraph& graph) {
  const auto kinds_column = graph.kinds();
  for (std::size_t t = 0; t < kinds_column.size(); ++t) {
    kinds[static_cast<std::size_t>(kinds_column[t])] = true;
    max_chunk = std::max(max_chunk, graph.chunk(TaskId{static_cast<std::uint32_t>(t)}));
  }
}

Legend::Legend(const KindsPresent& present) {
  const std::uint32_t swatches =
      present.max_chunk == 0 ? 1 : std::min(present.max_chunk + 1, kMaxChunkSwatches);
  for (int k = 0; k < kTaskKindCount; ++k) {
    if (!present.kinds[static_cast<std::size_t>(k)]) continue;
    kinds_.push_back(static_cast<TaskKind>(k));
    Entry entry;
    entry.kind = static_cast<TaskKind>(k);
    entry.swatches = swatches;
    entry.text = fmt::format("{}  {}", to_string(entry.kind), kind_meaning(entry.kind));
    entries_.push_back(std::move(entry));
  }
  if (swatches > 1) {
    Entry note;
    note.swatch = Swatch::None;
    note.muted = true;
    note.text = fmt::format("shades: chunk 0 to {}, left to right",
                            std::min(present.max_chunk, kMaxChunkSwatches - 1));
    entries_.push_back(std::move(note));
  }
}

void Legend::add(Swatch swatch, std::string text, TaskKind kind) {
  Entry entry;
  entry.swatch = swatch;
  entry.kind = kind;
  entry.muted = swatch == Swatch::None;
  entry.text = std::move(text);
  entries_.push_back(std::move(entry));
}

void Legend::layout(cairo_t* measure, double width) {
  set_font(measure, kTextSize);
  double x = 0;
  int line = 0;
  for (Entry& entry : entries_) {
    const double swatch = swatch_width(entry.swatch, entry.swatches);
    const double w = (swatch > 0 ? swatch + 5 : 0) + text_width(measure, entry.text);
    if (x > 0 && x + w > width) {
      x = 0;
      ++line;
    }
    entry.x = x;
    entry.line = line;
    x += w + kEntryGap;
  }
  lines_ = line + 1;
}

double Legend::height() const { return entries_.empty() ? 0.0 : lines_ * kLegendLine + 6; }

void Legend::draw(cairo_t* cr, double x0, double top0) const {
  set_font(cr, kTextSize);
  for (const Entry& entry : entries_) {
    const double top = top0 + entry.line * kLegendLine;
    double x = x0 + entry.x;
    switch (entry.swatch) {
      case Swatch::Kind:
        if (entry.swatches == 1) {
          fill_rect(cr, x, top, kSwatch, kSwatch, task_colour(entry.kind, 0));
          x += kSwatch;
        } else {
          for (std::uint32_t c = 0; c < entry.swatches; ++c) {
            fill_rect(cr, x, top, kChunkSwatch, kSwatch, task_colour(entry.kind, c));
            x += kChunkSwatch;
          }
        }
        x += 5;
        break;
      case Swatch::CriticalPath:
        fill_rect(cr, x, top, kSwatch, kSwatch, kRowBackground);
        cairo_rectangle(cr, x + 0.7, top + 0.7, kSwatch - 1.4, kSwatch - 1.4);
        set_colour(cr, kHighlight);
        cairo_set_line_width(cr, 1.4);
        cairo_stroke(cr);
        break;
      case Swatch::Arrow: {
        const double y = top + kSwatch / 2;
        const double tip = x + 2 * kSwatch;
        cairo_set_source_rgba(cr, kInk.r, kInk.g, kInk.b, 0.55);
        cairo_move_to(cr, x, y);
        cairo_line_to(cr, tip, y);
        cairo_set_line_width(cr, 0.6);
        cairo_stroke(cr);
        cairo_move_to(cr, tip, y);
        cairo_line_to(cr, tip - 4, y - 1.8);
        cairo_line_to(cr, tip - 4, y + 1.8);
        cairo_close_path(cr);
        cairo_fill(cr);
        break;
      }
      case Swatch::Aggregate: {
        // A span: a band per kind (the first three present), the bottom fifth idle.
        fill_rect(cr, x, top, kSwatch, kSwatch, kRowBackground);
        const std::size_t n = std::min<std::size_t>(3, kinds_.size());
        for (std::size_t i = 0; i < n; ++i) {
          const double band = kSwatch * 0.8 / static_cast<double>(n);
          fill_rect(cr, x, top + band * static_cast<double>(i), kSwatch, band,
                    task_colour(kinds_[i], 0));
        }
        break;
      }
      case Swatch::Pair:  // the F over its backward
        fill_rect(cr, x, top, kSwatch, kSwatch / 2, task_colour(TaskKind::F, 0));
        fill_rect(cr, x, top + kSwatch / 2, kSwatch, kSwatch / 2, task_colour(entry.kind, 0));
        break;
      case Swatch::None:
        break;
    }
    if (entry.swatch != Swatch::Kind && entry.swatch != Swatch::None) {
      x += swatch_width(entry.swatch, entry.swatches) + 5;
    }
    set_colour(cr, entry.muted ? kMutedInk : kInk);
    show_text(cr, x, top + kSwatch - 1.5, entry.text);
  }
}

}  // namespace perflow::visualizer::detail
