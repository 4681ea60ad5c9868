#include "detail/density.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "detail/pairs.hpp"

namespace perflow::visualizer::detail {
namespace {

/// task_colour() per kind for the first chunks: a span mixes thousands of them.
class ColourCache {
 public:
  ColourCache() {
    for (int k = 0; k < kTaskKindCount; ++k) {
      for (std::uint32_t c = 0; c < kChunks; ++c) {
        colours_[static_cast<std::size_t>(k) * kChunks + c] =
            task_colour(static_cast<TaskKind>(k), c);
      }
    }
  }
  [[nodiscard]] Rgb operator()(TaskKind kind, std::uint32_t chunk) const {
    if (chunk >= kChunks) return task_colour(kind, chunk);
    return colours_[static_cast<std::size_t>(kind) * kChunks + chunk];
  }

 private:
  static constexpr std::uint32_t kChunks = 8;
  std::array<Rgb, kTaskKindCount * kChunks> colours_{};
};

// Neighbouring spans whose kinds' shares and colours all agree within this, plus the
// share of their widest task (where a span is cut, one task more or less moves the shares
// that much), are one phase (a steady state gives span after span of the same mix) and
// are drawn as one.
constexpr double kAlike = 0.04;

/// A span being gathered: per kind, the time in it and the time-weighted colour sums.
struct OpenSpan {
  double x0 = 0;
  double x1 = 0;
  TaskId first;
  std::uint32_t tasks = 0;
  std::array<double, kTaskKindCount> width{};  // points covered by each kind's tasks
  std::array<Rgb, kTaskKindCount> colour_sum{};
  double widest = 0;  // the widest task's width

  void add(double start, double finish, TaskKind kind, Rgb colour) {
    cover(finish - start, kind, colour);
    widest = std::max(widest, finish - start);
    x1 = std::max(x1, finish);
    ++tasks;
  }
  /// An overlapped pair: two tasks, half its time to each kind (as its box is drawn).
  void add_pair(double start, double finish, TaskKind kind, Rgb colour, TaskKind other_kind,
                Rgb other_colour) {
    cover((finish - start) / 2, kind, colour);
    cover((finish - start) / 2, other_kind, other_colour);
    widest = std::max(widest, finish - start);
    x1 = std::max(x1, finish);
    tasks += 2;
  }
  void cover(double w, TaskKind kind, Rgb colour) {
    const auto k = static_cast<std::size_t>(kind);
    width[k] += w;
    colour_sum[k].r += colour.r * w;
    colour_sum[k].g += colour.g * w;
    colour_sum[k].b += colour.b * w;
  }
  void absorb(const OpenSpan& next) {
    for (std::size_t k = 0; k < width.size(); ++k) {
      width[k] += next.width[k];
      colour_sum[k].r += next.colour_sum[k].r;
      colour_sum[k].g += next.colour_sum[k].g;
      colour_sum[k].b += next.colour_sum[k].b;
    }
    x1 = std::max(x1, next.x1);
    tasks += next.tasks;
    widest = std::max(widest, next.widest);
  }
  [[nodiscard]] double share(std::size_t k) const { return width[k] / width_of_span(); }
  [[nodiscard]] Rgb colour(std::size_t k) const {
    const double w = width[k];
    return Rgb{colour_sum[k].r / w, colour_sum[k].g / w, colour_sum[k].b / w};
  }
  [[nodiscard]] double width_of_span() const { return std::max(x1 - x0, kMinMarkWidth); }
  [[nodiscard]] bool alike(const OpenSpan& other) const {
    const double tolerance =
        kAlike + std::max(widest / width_of_span(), other.widest / other.width_of_span());
    for (std::size_t k = 0; k < width.size(); ++k) {
      if ((width[k] > 0) != (other.width[k] > 0)) return false;
      if (std::abs(share(k) - other.share(k)) > tolerance) return false;
      if (width[k] <= 0) continue;
      const Rgb a = colour(k);
      const Rgb b = other.colour(k);
      if (std::max({std::abs(a.r - b.r), std::abs(a.g - b.g), std::abs(a.b - b.b)}) > kAlike) {
        return false;
      }
    }
    return true;
  }
};

}  // namespace

LaneMarks lane_marks(const EventGraph& graph, const Trace& trace, std::span<const TaskId> events,
                     const TimeScale& scale, const Density& density) {
  static const ColourCache colour_of;
  LaneMarks out;
  out.marks.reserve(density.aggregate ? 64 : events.size());
  OpenSpan span;  // the run of narrow boxes being gathered, at most max_span long
  OpenSpan run;   // finished spans alike enough to draw as one, not yet drawn
  const auto colour_of_task = [&](TaskId t) { return colour_of(graph.kind(t), graph.chunk(t)); };
  const auto box = [&](TaskId t, double x0, double x1) {
    const TaskId pair = graph.pair_partner(t);
    if (pair.valid()) {
      out.marks.push_back({x0, x1, t, colour_of_task(t), 2, 0, 0, pair, colour_of_task(pair)});
    } else {
      out.marks.push_back({x0, x1, t, colour_of_task(t), 1});
    }
  };
  const auto emit_run = [&] {
    if (run.tasks == 0) return;
    if (run.tasks == 1 || (run.tasks == 2 && graph.pair_partner(run.first).valid())) {
      box(run.first, run.x0, run.x1);
      run = OpenSpan{};
      return;
    }
    const auto first_band = static_cast<std::uint32_t>(out.bands.size());
    double total = 0;
    for (std::size_t k = 0; k < run.width.size(); ++k) {
      if (run.width[k] <= 0) continue;
      const double share = std::min(1.0 - total, run.share(k));
      out.bands.push_back({run.colour(k), share});
      total += share;
    }
    if (out.bands.size() == first_band) {  // tasks of no length: the first one's colour
      out.bands.push_back({colour_of(graph.kind(run.first), graph.chunk(run.first)), 1.0});
    }
    out.marks.push_back({run.x0, run.x1, TaskId{}, Rgb{}, run.tasks, first_band,
                         static_cast<std::uint32_t>(out.bands.size()) - first_band});
    run = OpenSpan{};
  };
  const auto end_span = [&] {
    if (span.tasks == 0) return;
    if (span.tasks > 1 && run.tasks > 1 && span.x0 - run.x1 < density.narrow && run.alike(span)) {
      run.absorb(span);
    } else {
      emit_run();
      run = span;
    }
    span = OpenSpan{};
  };
  for (const TaskId t : events) {
    if (graph.paired(t)) continue;  // drawn in its F's box, which holds the pair's time
    const double x0 = scale.x_of(trace.start_of(t));
    const double x1 = scale.x_of(trace.finish_of(t));
    const bool narrow = density.aggregate && x1 - x0 < density.narrow;
    if (!narrow) {
      end_span();
      emit_run();
      box(t, x0, x1);
      continue;
    }
    if (span.tasks > 0 && (x0 - span.x1 >= density.narrow || x1 - span.x0 > density.max_span)) {
      end_span();
    }
    if (span.tasks == 0) {
      span.x0 = x0;
      span.x1 = x1;
      span.first = t;
    }
    if (const TaskId pair = graph.pair_partner(t); pair.valid()) {
      span.add_pair(x0, x1, graph.kind(t), colour_of_task(t), graph.kind(pair),
                    colour_of_task(pair));
    } else {
      span.add(x0, x1, graph.kind(t), colour_of_task(t));
    }
  }
  end_span();
  emit_run();
  return out;
}

}  // namespace perflow::visualizer::detail
