#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <cairo.h>

#include "lane_rows.hpp"
#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"
#include "perflow/simulator/metrics.hpp"
#include "time_axis.hpp"

namespace perflow::visualizer::detail {

struct PanelOptions {
  double row_height = 28;
  std::span<const std::string> device_labels;
  std::size_t aggregate_above = 20000;
  bool critical_path = false;
  bool dependency_arrows = false;
  std::size_t max_arrows = 2000;
};

/// The rows of one timeline: row labels on the left of the plot, then per lane the task
/// boxes (or aggregate spans), labels inside boxes where they fit, and on request the
/// critical path and the dependence arrows between devices. Used by the timeline and by
/// each run of a comparison.
class TimelinePanel {
 public:
  TimelinePanel(const EventGraph& graph, const Trace& trace, const simulator::Metrics& metrics,
                const PanelOptions& options);

  /// The widest row label: the plot starts this far (plus a gap) right of the margin.
  [[nodiscard]] double label_width(cairo_t* measure) const;
  [[nodiscard]] double height() const;
  [[nodiscard]] const std::vector<LaneRow>& rows() const { return rows_; }
  /// Whether narrow boxes merge into spans (more tasks than aggregate_above).
  [[nodiscard]] bool aggregates() const { return aggregate_; }
  /// Data dependences between devices, and whether their arrows are drawn.
  [[nodiscard]] std::size_t cross_device_dependences() const { return cross_.size(); }
  [[nodiscard]] bool draws_arrows() const;

  /// Draws with the rows' top at `top`; row labels end at `scale.plot_x - 10`.
  void draw(cairo_t* cr, const TimeScale& scale, double top) const;

 private:
  struct Dependence {
    TaskId from;
    TaskId to;
  };

  void draw_rows(cairo_t* cr, const TimeScale& scale, double top) const;
  void draw_critical_path(cairo_t* cr, const TimeScale& scale, double top) const;
  void draw_arrows(cairo_t* cr, const TimeScale& scale, double top) const;
  /// Per task, the index of the row it was drawn in (by the trace's lanes).
  [[nodiscard]] std::vector<std::uint32_t> row_of_tasks() const;

  const EventGraph& graph_;
  const Trace& trace_;
  const simulator::Metrics& metrics_;
  PanelOptions options_;
  std::vector<LaneRow> rows_;
  bool aggregate_ = false;
  std::vector<Dependence> cross_;  // only gathered when arrows are asked for
};

}  // namespace perflow::visualizer::detail
