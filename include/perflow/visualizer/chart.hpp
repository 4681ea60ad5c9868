#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
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
    std::size_t rows = 1;  ///< how many rows it is the mean of
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

/// The chart as the bytes of `format` (SVG, PNG or PDF); deterministic. Each line has its
/// own colour, dash pattern and marker shape (circle, square, triangle, diamond, ...), so
/// lines that coincide stay apart; a point averaging another number of rows than most
/// points of the chart is labelled with it ("n=3"). Throws
/// std::invalid_argument for a chart with no point or a non-finite value.
std::string render_chart(const ChartData& chart, ImageFormat format);

/// The number of rows most of the chart's points average (ties: the larger); points of
/// another number are labelled.
std::size_t usual_point_rows(const ChartData& chart);

/// What `perflow plot` (and Python's perflow.plot) charts from a table of sweep results:
/// column `y` against column `x`, one line per value of column `by` ("": one line).
struct PlotRequest {
  std::string x;
  std::string y;
  std::string by;
};

/// A table of text cells (a sweep's CSV results, as explore::read_csv_table reads them);
/// `file` names it in messages.
struct TableView {
  std::string_view file;
  std::span<const std::string> columns;
  std::span<const std::vector<std::string>> rows;  ///< each as long as `columns`
};

/// The chart `request` asks of `table`: rows with an error (a non-empty "error" column) or
/// without a number in column y are left out, and points of one line at one x are averaged
/// (the other columns vary there); x is categorical unless every plotted row's x is a
/// number. The caption says how many rows were plotted and left out. A column the table
/// lacks is an OptionError naming its field (x, y, by) and the table's columns; a table
/// with no row to plot an Error.
ChartData plot_chart(const TableView& table, const PlotRequest& request);

}  // namespace perflow::visualizer
