#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "perflow/visualizer/image_format.hpp"

namespace perflow::visualizer {

/// How an axis's numbers read: plain, nanoseconds ("2.5ms") or bytes ("80.0GB").
enum class ValueUnit { Plain, Nanoseconds, Bytes };

/// One line of a chart: its points in the order they are joined.
struct ChartSeries {
  std::string name;  ///< in the legend; empty for a chart of one series
  struct Point {
    double x = 0;  ///< a number, or the index of a category
    double y = 0;
  };
  std::vector<Point> points;
};

/// A line chart of sweep results (`perflow plot`): y against x, one line per series.
struct ChartData {
  std::string title;
  std::string x_label;
  std::string y_label;
  ValueUnit x_unit = ValueUnit::Plain;
  ValueUnit y_unit = ValueUnit::Plain;
  /// Non-empty: x is categorical, points' x are indices into it, drawn evenly spaced.
  std::vector<std::string> categories;
  std::vector<ChartSeries> series;
  std::string caption;  ///< under the plot: what was plotted and what was left out
};

/// The chart as the bytes of `format` (SVG, PNG or PDF); deterministic. Throws
/// std::invalid_argument for a chart with no point or a non-finite value.
std::string render_chart(const ChartData& chart, ImageFormat format);

}  // namespace perflow::visualizer
