#pragma once

#include <span>
#include <vector>

#include <cairo.h>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/visualizer/memory_series.hpp"
#include "time_axis.hpp"

namespace perflow::visualizer::detail {

/// Activation memory over time, one strip per device on a scale shared by all of them (so
/// devices compare at a glance): static memory as a band at the bottom, activations stacked
/// on it as a step area, the capacity as a dashed line, the peak written at the right.
class MemoryChart {
 public:
  MemoryChart(const EventGraph& graph, const Trace& trace, std::span<const double> static_memory,
              std::span<const double> capacity, double strip_height);

  [[nodiscard]] double label_width(cairo_t* measure) const;
  [[nodiscard]] double height() const;
  /// Draws with its heading's top at `top`; strip labels end at `scale.plot_x - 10`.
  void draw(cairo_t* cr, const TimeScale& scale, double top) const;

 private:
  void draw_strip(cairo_t* cr, const TimeScale& scale, std::size_t device, double top) const;
  /// The step outline of one device's activations, at most about one point per point of
  /// width: wherever the series is denser, each one-point bin keeps its maximum.
  [[nodiscard]] std::vector<MemoryPoint> drawn_points(const TimeScale& scale,
                                                      std::size_t device) const;

  std::vector<std::vector<MemoryPoint>> series_;
  std::vector<double> static_;
  std::vector<double> capacity_;
  std::vector<double> peak_;  // activations
  double ymax_ = 0;
  double strip_height_;
  bool any_static_ = false;
  bool any_capacity_ = false;
};

}  // namespace perflow::visualizer::detail
