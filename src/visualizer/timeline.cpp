#include "perflow/visualizer/timeline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <cairo-svg.h>
#include <cairo.h>
#include <fmt/format.h>

#include "perflow/core/atomic_file.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/task.hpp"
#include "perflow/core/time.hpp"
#include "perflow/core/units.hpp"

namespace perflow::visualizer {
namespace {

// ---------------------------------------------------------------------------------------
// cairo ownership and status

struct SurfaceDeleter {
  void operator()(cairo_surface_t* surface) const noexcept { cairo_surface_destroy(surface); }
};
struct ContextDeleter {
  void operator()(cairo_t* cr) const noexcept { cairo_destroy(cr); }
};
struct FontOptionsDeleter {
  void operator()(cairo_font_options_t* options) const noexcept {
    cairo_font_options_destroy(options);
  }
};
using SurfacePtr = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using ContextPtr = std::unique_ptr<cairo_t, ContextDeleter>;
using FontOptionsPtr = std::unique_ptr<cairo_font_options_t, FontOptionsDeleter>;

void check_status(cairo_status_t status, std::string_view what) {
  if (status != CAIRO_STATUS_SUCCESS) {
    throw IoError(
        fmt::format("cannot render timeline SVG: {}: {}", what, cairo_status_to_string(status)));
  }
}

ContextPtr make_context(cairo_surface_t* surface) {
  check_status(cairo_surface_status(surface), "surface");
  ContextPtr cr(cairo_create(surface));
  check_status(cairo_status(cr.get()), "context");
  // Unhinted metrics: text measured on the scratch context matches the SVG exactly.
  const FontOptionsPtr font_options(cairo_font_options_create());
  check_status(cairo_font_options_status(font_options.get()), "font options");
  cairo_font_options_set_hint_metrics(font_options.get(), CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_hint_style(font_options.get(), CAIRO_HINT_STYLE_NONE);
  cairo_set_font_options(cr.get(), font_options.get());
  return cr;
}

/// cairo's write callback: appends to the std::string passed as closure. Never throws.
cairo_status_t append_to_string(void* closure, const unsigned char* data,
                                unsigned int length) noexcept {
  try {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  } catch (...) {
    return CAIRO_STATUS_WRITE_ERROR;
  }
  return CAIRO_STATUS_SUCCESS;
}

/// cairo names the drawing group after the surface's process-wide serial number
/// (`<g id="surface17">`), so two renderings would differ. Renumber in order of appearance.
void renumber_surface_ids(std::string& svg) {
  constexpr std::string_view kToken = "surface";
  std::vector<std::string> seen;  // serial numbers in order of appearance
  std::string out;
  out.reserve(svg.size());
  std::size_t pos = 0;
  for (std::size_t hit = svg.find(kToken); hit != std::string::npos; hit = svg.find(kToken, pos)) {
    const std::size_t digits = hit + kToken.size();
    std::size_t end = digits;
    while (end < svg.size() && svg[end] >= '0' && svg[end] <= '9') ++end;
    out.append(svg, pos, digits - pos);
    if (end > digits) {
      const std::string number = svg.substr(digits, end - digits);
      std::size_t index = 0;
      while (index < seen.size() && seen[index] != number) ++index;
      if (index == seen.size()) seen.push_back(number);
      out += fmt::format("{}", index + 1);
    }
    pos = end;
  }
  out.append(svg, pos);
  svg = std::move(out);
}

// ---------------------------------------------------------------------------------------
// Colours

struct Rgb {
  double r = 0;
  double g = 0;
  double b = 0;
};

constexpr Rgb from_hex(std::uint32_t hex) {
  return Rgb{static_cast<double>((hex >> 16) & 0xFFu) / 255.0,
             static_cast<double>((hex >> 8) & 0xFFu) / 255.0,
             static_cast<double>(hex & 0xFFu) / 255.0};
}

// Okabe-Ito, safe for the common colour-vision deficiencies; indexed by TaskKind.
constexpr std::array<Rgb, kTaskKindCount> kKindColour = {
    from_hex(0x0072B2),  // F: blue
    from_hex(0xE69F00),  // B: orange
    from_hex(0x009E73),  // W: bluish green
    from_hex(0xCC79A7),  // BW: reddish purple
    from_hex(0x56B4E9),  // SEND: sky blue
    from_hex(0xD55E00),  // ALLREDUCE: vermillion
    from_hex(0x999999),  // OPT: grey
};
constexpr std::array<std::string_view, kTaskKindCount> kKindMeaning = {
    "forward",  "backward (input)",         "backward (weight)", "backward (fused B+W)",
    "transfer", "data-parallel all-reduce", "optimizer step"};

constexpr Rgb kInk = from_hex(0x1A1A1A);
constexpr Rgb kMutedInk = from_hex(0x555555);
constexpr Rgb kWhite = from_hex(0xFFFFFF);
constexpr Rgb kRowBackground = from_hex(0xF3F3F3);
constexpr Rgb kGrid = from_hex(0xDDDDDD);
constexpr Rgb kAxis = from_hex(0x444444);

/// Chunk 0 is the kind's colour; each further chunk mixes in more white (monotonic, so
/// "lighter = later chunk" reads at a glance; 0.32, 0.49, 0.58, ... of white).
Rgb task_colour(TaskKind kind, std::uint32_t chunk) {
  const Rgb base = kKindColour[static_cast<std::size_t>(kind)];
  if (chunk == 0) return base;
  const double white = 0.7 * (1.0 - std::pow(0.55, static_cast<double>(chunk)));
  return Rgb{base.r + (1.0 - base.r) * white, base.g + (1.0 - base.g) * white,
             base.b + (1.0 - base.b) * white};
}

double relative_luminance(Rgb c) {
  const auto linear = [](double v) {
    return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b);
}

/// White or dark ink, whichever has the higher WCAG contrast ratio on `background`.
Rgb label_ink(Rgb background) {
  const double l = relative_luminance(background);
  const double with_white = 1.05 / (l + 0.05);
  const double with_dark = (l + 0.05) / (relative_luminance(kInk) + 0.05);
  return with_white >= with_dark ? kWhite : kInk;
}

void set_colour(cairo_t* cr, Rgb c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); }

// ---------------------------------------------------------------------------------------
// Text

constexpr const char* kFontFamily = "DejaVu Sans";

void set_font(cairo_t* cr, double size, bool bold = false) {
  cairo_select_font_face(cr, kFontFamily, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

/// Advance width of `text` in the current font.
double text_width(cairo_t* cr, const std::string& text) {
  cairo_text_extents_t extents;
  cairo_text_extents(cr, text.c_str(), &extents);
  return extents.x_advance;
}

void show_text(cairo_t* cr, double x, double baseline, const std::string& text) {
  cairo_move_to(cr, x, baseline);
  cairo_show_text(cr, text.c_str());
}

// ---------------------------------------------------------------------------------------
// Numbers

struct TimeUnit {
  TimeNs ns;
  std::string_view name;
};

/// The unit the axis speaks in, from the extent of the picture.
TimeUnit axis_unit(TimeNs extent) {
  if (extent >= kNsPerS) return {kNsPerS, "s"};
  if (extent >= kNsPerMs) return {kNsPerMs, "ms"};
  if (extent >= kNsPerUs) return {kNsPerUs, "us"};
  return {1, "ns"};
}

/// The smallest 1/2/5 x 10^k ns step at least `raw` (at least 1 ns).
TimeNs nice_step_at_least(double raw) {
  TimeNs decade = 1;
  while (true) {
    for (const TimeNs mantissa : {TimeNs{1}, TimeNs{2}, TimeNs{5}}) {
      if (static_cast<double>(mantissa * decade) >= raw) return mantissa * decade;
    }
    if (decade > std::numeric_limits<TimeNs>::max() / 100) return 5 * decade;
    decade *= 10;
  }
}

/// "0", "50ms", "2.5us": `value` in `unit`, exact (integer arithmetic), no trailing zeros.
std::string tick_label(TimeNs value, TimeUnit unit) {
  if (value == 0) return "0";
  std::string text = fmt::format("{}", value / unit.ns);
  if (const TimeNs fraction = value % unit.ns; fraction != 0) {
    std::size_t width = 0;  // unit.ns is a power of ten: its number of zeros
    for (TimeNs u = unit.ns; u > 1; u /= 10) ++width;
    std::string digits = fmt::format("{:0{}}", fraction, width);
    while (digits.back() == '0') digits.pop_back();
    text += '.';
    text += digits;
  }
  text += unit.name;
  return text;
}

std::string caption_text(const EventGraph& graph, const simulator::Metrics& metrics) {
  double peak = 0;
  for (std::size_t i = 0; i < metrics.devices.size(); ++i) {
    peak = i == 0 ? metrics.devices[i].peak_memory : std::max(peak, metrics.devices[i].peak_memory);
  }
  const std::size_t tasks = graph.task_count();
  return fmt::format(
      "makespan {}   \u00b7   bubble ratio {:.2f}%   \u00b7   peak memory {}   "
      "\u00b7   {} task{}",
      format_duration(metrics.makespan), metrics.bubble_ratio * 100.0, format_memory(peak), tasks,
      tasks == 1 ? "" : "s");
}

// ---------------------------------------------------------------------------------------
// Layout

constexpr double kMargin = 18;
constexpr double kTitleSize = 15;
constexpr double kSubtitleSize = 11;
constexpr double kTextSize = 10.5;
constexpr double kTickSize = 9.5;
constexpr double kLabelSizeMax = 10;
constexpr double kSwatch = 11;
constexpr double kChunkSwatch = 8;
constexpr double kLegendLine = 17;
constexpr double kLegendEntryGap = 18;
constexpr std::uint32_t kMaxChunkSwatches = 8;
constexpr double kSeparatorWidth = 0.75;
constexpr double kTickLength = 4;
constexpr double kMinTickGap = 14;

struct LegendEntry {
  std::uint32_t swatches = 1;  ///< chunk shades 0..swatches-1
  TaskKind kind = TaskKind::F;
  std::string text;
  double x = 0;  ///< relative to the plot's left edge
  int line = 0;
  double width = 0;
};

struct Ticks {
  TimeNs step = 1;
  TimeUnit unit{1, "ns"};
};

struct Layout {
  double width = 0;
  double height = 0;
  double title_baseline = 0;
  double subtitle_baseline = 0;
  double legend_top = 0;
  double plot_x = 0;
  double plot_width = 0;
  double rows_top = 0;
  double row_height = 0;
  double axis_y = 0;
  double tick_baseline = 0;
  double axis_caption_baseline = 0;
  double caption_baseline = 0;
  TimeNs extent = 0;
  double scale = 0;  ///< points per ns; 0 when nothing ran
  std::uint32_t rows = 0;
  Ticks ticks;
  std::vector<LegendEntry> legend;
  std::string legend_note;
  double legend_note_x = 0;
  int legend_note_line = 0;
};

// Compute lanes are named by their device; communication lanes by device and stream.
std::string row_label(const EventGraph& graph, std::uint32_t row) {
  if (row >= graph.lane_count() || row < graph.device_count()) return fmt::format("dev {}", row);
  const LaneInfo& lane = graph.lane_info(LaneId{row});
  return fmt::format("dev {} {}", lane.device.value, lane.name);
}

Ticks choose_ticks(cairo_t* measure, TimeNs extent, double plot_width) {
  Ticks ticks;
  if (extent <= 0) return ticks;
  ticks.unit = axis_unit(extent);
  set_font(measure, kTickSize);
  const double target = std::max(2.0, std::floor(plot_width / 80.0));
  TimeNs step = nice_step_at_least(static_cast<double>(extent) / target);
  const double scale = plot_width / static_cast<double>(extent);
  while (step < extent) {
    // The widest label is one of the largest values; measure the last two.
    const TimeNs last = extent / step * step;
    const double widest =
        std::max(text_width(measure, tick_label(last, ticks.unit)),
                 text_width(measure, tick_label(std::max<TimeNs>(last - step, step), ticks.unit)));
    if (static_cast<double>(step) * scale >= widest + kMinTickGap) break;
    step = nice_step_at_least(static_cast<double>(step) * 1.5);  // next of 1, 2, 5 x 10^k
  }
  ticks.step = step;
  return ticks;
}

Layout make_layout(cairo_t* measure, const EventGraph& graph, const Trace& trace,
                   const simulator::Metrics& metrics, const TimelineOptions& options) {
  Layout layout;
  layout.width = options.width;
  layout.row_height = options.row_height;
  layout.rows =
      std::max<std::uint32_t>(graph.lane_count(), static_cast<std::uint32_t>(trace.lane_count()));

  double y = kMargin;
  if (!options.title.empty()) {
    layout.title_baseline = y + kTitleSize * 0.8;
    y += kTitleSize + 6;
  }
  if (!options.subtitle.empty()) {
    layout.subtitle_baseline = y + kSubtitleSize * 0.8;
    y += kSubtitleSize + 6;
  }
  if (!options.title.empty() || !options.subtitle.empty()) y += 6;

  set_font(measure, 11);
  double label_column = 0;
  for (std::uint32_t d = 0; d < layout.rows; ++d) {
    label_column = std::max(label_column, text_width(measure, row_label(graph, d)));
  }
  layout.plot_x = kMargin + label_column + 10;
  layout.plot_width = std::max(1.0, options.width - layout.plot_x - kMargin - 12);

  // Legend: the kinds that occur, in TaskKind order; shaded swatches if chunks vary.
  std::array<bool, kTaskKindCount> present{};
  std::uint32_t max_chunk = 0;
  for (std::size_t t = 0; t < graph.task_count(); ++t) {
    const TaskId id{static_cast<std::uint32_t>(t)};
    present[static_cast<std::size_t>(graph.kind(id))] = true;
    max_chunk = std::max(max_chunk, graph.chunk(id));
  }
  const std::uint32_t swatches = max_chunk == 0 ? 1 : std::min(max_chunk + 1, kMaxChunkSwatches);
  set_font(measure, kTextSize);
  double x = 0;
  int line = 0;
  const auto place = [&](double w) {
    if (x > 0 && x + w > layout.plot_width) {
      x = 0;
      ++line;
    }
    const double at = x;
    x += w + kLegendEntryGap;
    return at;
  };
  for (int k = 0; k < kTaskKindCount; ++k) {
    if (!present[static_cast<std::size_t>(k)]) continue;
    LegendEntry entry;
    entry.kind = static_cast<TaskKind>(k);
    entry.swatches = swatches;
    entry.text =
        fmt::format("{}  {}", to_string(entry.kind), kKindMeaning[static_cast<std::size_t>(k)]);
    const double swatch_width = swatches == 1 ? kSwatch : kChunkSwatch * swatches;
    entry.width = swatch_width + 5 + text_width(measure, entry.text);
    entry.x = place(entry.width);
    entry.line = line;
    layout.legend.push_back(std::move(entry));
  }
  if (swatches > 1) {
    layout.legend_note =
        max_chunk + 1 > kMaxChunkSwatches
            ? fmt::format("shades: chunk 0 to {} (lighter = later)", kMaxChunkSwatches - 1)
            : fmt::format("shades: chunk 0 to {} (lighter = later)", max_chunk);
    layout.legend_note_x = place(text_width(measure, layout.legend_note));
    layout.legend_note_line = line;
  }
  layout.legend_top = y;
  if (!layout.legend.empty()) y += (line + 1) * kLegendLine + 6;

  layout.rows_top = y;
  y += layout.row_height * layout.rows;

  TimeNs extent = std::max<TimeNs>(metrics.makespan, 0);
  for (const TimeNs f : trace.finish) extent = std::max(extent, f);
  layout.extent = extent;
  layout.scale = extent > 0 ? layout.plot_width / static_cast<double>(extent) : 0.0;
  layout.ticks = choose_ticks(measure, extent, layout.plot_width);

  layout.axis_y = y + 4;
  layout.tick_baseline = layout.axis_y + kTickLength + kTickSize + 2;
  layout.axis_caption_baseline = layout.tick_baseline + kTextSize + 5;
  layout.caption_baseline = layout.axis_caption_baseline + kTextSize + 12;
  layout.height = std::ceil(layout.caption_baseline + 4 + kMargin);
  return layout;
}

// ---------------------------------------------------------------------------------------
// Drawing

void fill_rect(cairo_t* cr, double x, double y, double w, double h, Rgb colour) {
  set_colour(cr, colour);
  cairo_rectangle(cr, x, y, w, h);
  cairo_fill(cr);
}

void draw_header(cairo_t* cr, const Layout& layout, const TimelineOptions& options) {
  if (!options.title.empty()) {
    set_font(cr, kTitleSize, true);
    set_colour(cr, kInk);
    show_text(cr, kMargin, layout.title_baseline, options.title);
  }
  if (!options.subtitle.empty()) {
    set_font(cr, kSubtitleSize);
    set_colour(cr, kMutedInk);
    show_text(cr, kMargin, layout.subtitle_baseline, options.subtitle);
  }
}

void draw_legend(cairo_t* cr, const Layout& layout) {
  set_font(cr, kTextSize);
  for (const LegendEntry& entry : layout.legend) {
    const double top = layout.legend_top + entry.line * kLegendLine;
    double x = layout.plot_x + entry.x;
    if (entry.swatches == 1) {
      fill_rect(cr, x, top, kSwatch, kSwatch, task_colour(entry.kind, 0));
      x += kSwatch;
    } else {
      for (std::uint32_t c = 0; c < entry.swatches; ++c) {
        fill_rect(cr, x, top, kChunkSwatch, kSwatch, task_colour(entry.kind, c));
        x += kChunkSwatch;
      }
    }
    set_colour(cr, kInk);
    show_text(cr, x + 5, top + kSwatch - 1.5, entry.text);
  }
  if (!layout.legend_note.empty()) {
    set_colour(cr, kMutedInk);
    show_text(cr, layout.plot_x + layout.legend_note_x,
              layout.legend_top + layout.legend_note_line * kLegendLine + kSwatch - 1.5,
              layout.legend_note);
  }
}

double x_of(const Layout& layout, TimeNs t) {
  return layout.plot_x + static_cast<double>(t) * layout.scale;
}

void draw_rows(cairo_t* cr, const Layout& layout, const EventGraph& graph, const Trace& trace) {
  const double band_inset = 1;
  const double box_inset = 3;
  const double rows_bottom = layout.rows_top + layout.row_height * layout.rows;

  // Row labels and backgrounds.
  set_font(cr, 11);
  cairo_text_extents_t digit;
  cairo_text_extents(cr, "0", &digit);
  for (std::uint32_t d = 0; d < layout.rows; ++d) {
    const double top = layout.rows_top + layout.row_height * d;
    fill_rect(cr, layout.plot_x, top + band_inset, layout.plot_width,
              layout.row_height - 2 * band_inset, kRowBackground);
    const std::string label = row_label(graph, d);
    set_colour(cr, kInk);
    show_text(cr, layout.plot_x - 10 - text_width(cr, label),
              top + layout.row_height / 2 + digit.height / 2, label);
  }

  // Faint gridlines at the ticks, under the boxes: they show only where a device idles.
  if (layout.extent > 0) {
    for (TimeNs t = layout.ticks.step; t <= layout.extent; t += layout.ticks.step) {
      const double x = x_of(layout, t);
      cairo_move_to(cr, x, layout.rows_top);
      cairo_line_to(cr, x, rows_bottom);
      if (t > layout.extent - layout.ticks.step) break;  // no overflow past the end
    }
    set_colour(cr, kGrid);
    cairo_set_line_width(cr, 0.5);
    cairo_stroke(cr);
  }

  // Boxes, one fill each, then one stroked path of separators per row.
  const double box_height = std::max(1.0, layout.row_height - 2 * box_inset);
  const double label_size = std::min(kLabelSizeMax, box_height * 0.6);
  for (std::uint32_t d = 0; d < layout.rows && d < trace.lane_count(); ++d) {
    const double top = layout.rows_top + layout.row_height * d + box_inset;
    for (const TaskId t : trace.events(LaneId{d})) {
      const double x0 = x_of(layout, trace.start_of(t));
      const double w = std::max(0.35, x_of(layout, trace.finish_of(t)) - x0);
      fill_rect(cr, x0, top, w, box_height, task_colour(graph.kind(t), graph.chunk(t)));
    }
    bool any = false;
    const auto events = trace.events(LaneId{d});
    for (std::size_t i = 1; i < events.size(); ++i) {
      const TaskId prev = events[i - 1];
      const TaskId cur = events[i];
      if (trace.start_of(cur) > trace.finish_of(prev)) continue;  // idle between: no line
      const double x = x_of(layout, trace.start_of(cur));
      const double before = x - x_of(layout, trace.start_of(prev));
      const double after = x_of(layout, trace.finish_of(cur)) - x;
      if (std::min(before, after) < 4 * kSeparatorWidth) continue;  // would drown tiny boxes
      cairo_move_to(cr, x, top);
      cairo_line_to(cr, x, top + box_height);
      any = true;
    }
    if (any) {
      set_colour(cr, kWhite);
      cairo_set_line_width(cr, kSeparatorWidth);
      cairo_stroke(cr);
    }
  }

  // Labels where they fit. The narrowest possible label bounds the work for tiny boxes.
  set_font(cr, label_size);
  double narrowest = std::numeric_limits<double>::max();
  for (int k = 0; k < kTaskKindCount; ++k) {
    narrowest = std::min(narrowest, text_width(cr, task_label(static_cast<TaskKind>(k), 0, 0)));
  }
  cairo_font_extents_t font;
  cairo_font_extents(cr, &font);
  const double padding = 2.5;
  for (std::uint32_t d = 0; d < layout.rows && d < trace.lane_count(); ++d) {
    const double middle = layout.rows_top + layout.row_height * d + layout.row_height / 2;
    const double baseline = middle + (font.ascent - font.descent) / 2 - 0.5;
    for (const TaskId t : trace.events(LaneId{d})) {
      const double x0 = x_of(layout, trace.start_of(t));
      const double w = x_of(layout, trace.finish_of(t)) - x0;
      if (w < narrowest + 2 * padding) continue;
      const std::string label = graph.label(t);
      const double label_width = text_width(cr, label);
      if (w < label_width + 2 * padding) continue;
      set_colour(cr, label_ink(task_colour(graph.kind(t), graph.chunk(t))));
      show_text(cr, x0 + (w - label_width) / 2, baseline, label);
    }
  }
}

void draw_axis(cairo_t* cr, const Layout& layout) {
  set_colour(cr, kAxis);
  cairo_set_line_width(cr, 0.8);
  cairo_move_to(cr, layout.plot_x, layout.axis_y);
  cairo_line_to(cr, layout.plot_x + layout.plot_width, layout.axis_y);
  cairo_stroke(cr);

  set_font(cr, kTickSize);
  cairo_set_line_width(cr, 0.8);
  const auto tick = [&](TimeNs t) {
    const double x = x_of(layout, t);
    cairo_move_to(cr, x, layout.axis_y);
    cairo_line_to(cr, x, layout.axis_y + kTickLength);
    cairo_stroke(cr);
    const std::string label = tick_label(t, layout.ticks.unit);
    show_text(cr, x - text_width(cr, label) / 2, layout.tick_baseline, label);
  };
  tick(0);
  if (layout.extent > 0) {
    for (TimeNs t = layout.ticks.step; t <= layout.extent; t += layout.ticks.step) {
      tick(t);
      if (t > layout.extent - layout.ticks.step) break;  // no overflow past the end
    }
  }

  set_font(cr, kTextSize);
  set_colour(cr, kMutedInk);
  const std::string caption = "time";
  show_text(cr, layout.plot_x + (layout.plot_width - text_width(cr, caption)) / 2,
            layout.axis_caption_baseline, caption);
}

void draw_caption(cairo_t* cr, const Layout& layout, const std::string& caption) {
  set_font(cr, kTextSize);
  set_colour(cr, kInk);
  show_text(cr, kMargin, layout.caption_baseline, caption);
}

void check_inputs(const EventGraph& graph, const Trace& trace, const TimelineOptions& options) {
  if (!std::isfinite(options.width) || options.width <= 0 || options.width > 1e6) {
    throw std::invalid_argument(
        fmt::format("timeline width must be in (0, 1e6] points, got {}", options.width));
  }
  if (!std::isfinite(options.row_height) || options.row_height <= 0 || options.row_height > 1e4) {
    throw std::invalid_argument(
        fmt::format("timeline row height must be in (0, 1e4] points, got {}", options.row_height));
  }
  const std::size_t n = graph.task_count();
  if (trace.start.size() != n || trace.finish.size() != n) {
    throw std::invalid_argument(
        fmt::format("trace has {} starts and {} finishes for a graph of {} tasks",
                    trace.start.size(), trace.finish.size(), n));
  }
  for (std::size_t d = 0; d < trace.lane_count(); ++d) {
    for (const TaskId t : trace.lane_events[d]) {
      if (t.value >= n) {
        throw std::invalid_argument(fmt::format(
            "trace lists task id {} on device {}, but the graph has {} tasks", t.value, d, n));
      }
    }
  }
}

}  // namespace

std::string render_timeline_svg(const EventGraph& graph, const Trace& trace,
                                const simulator::Metrics& metrics, const TimelineOptions& options) {
  check_inputs(graph, trace, options);

  // Layout needs text metrics before the SVG's size is known: measure on a scratch surface.
  Layout layout;
  {
    const SurfacePtr scratch(cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1));
    const ContextPtr measure = make_context(scratch.get());
    layout = make_layout(measure.get(), graph, trace, metrics, options);
    check_status(cairo_status(measure.get()), "measuring text");
  }
  const std::string caption = caption_text(graph, metrics);

  std::string svg;  // outlives the surface, which writes into it until finished
  {
    const SurfacePtr surface(
        cairo_svg_surface_create_for_stream(append_to_string, &svg, layout.width, layout.height));
    {
      const ContextPtr cr = make_context(surface.get());
      fill_rect(cr.get(), 0, 0, layout.width, layout.height, kWhite);
      draw_header(cr.get(), layout, options);
      draw_legend(cr.get(), layout);
      draw_rows(cr.get(), layout, graph, trace);
      draw_axis(cr.get(), layout);
      draw_caption(cr.get(), layout, caption);
      check_status(cairo_status(cr.get()), "drawing");
    }
    cairo_surface_finish(surface.get());
    check_status(cairo_surface_status(surface.get()), "writing");
  }
  renumber_surface_ids(svg);
  return svg;
}

void write_timeline_svg(const std::filesystem::path& path, const EventGraph& graph,
                        const Trace& trace, const simulator::Metrics& metrics,
                        const TimelineOptions& options) {
  write_file_atomically(path, render_timeline_svg(graph, trace, metrics, options));
}

}  // namespace perflow::visualizer
