// `perflow plot`'s chart of a table of sweep results (chart.hpp's plot_chart), which
// Python's perflow.plot draws too.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/did_you_mean.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/option_error.hpp"
#include "perflow/visualizer/chart.hpp"

namespace perflow::visualizer {
namespace {

std::optional<double> number_of(const std::string& text) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::size_t> find_column(const TableView& table, std::string_view name) {
  const auto it = std::find(table.columns.begin(), table.columns.end(), name);
  if (it == table.columns.end()) return std::nullopt;
  return static_cast<std::size_t>(it - table.columns.begin());
}

std::size_t column_of(const TableView& table, const char* field, const std::string& name) {
  if (const auto index = find_column(table, name)) return *index;
  std::string valid;
  for (const std::string& c : table.columns) valid += (valid.empty() ? "" : ", ") + c;
  throw OptionError(
      field,
      {OptionError::field(field, fmt::format("'{}'", name)),
       OptionError::text(fmt::format(": {} has no such column{}; its columns: {}", table.file,
                                     did_you_mean_suffix(name, table.columns), valid))});
}

ValueUnit unit_of(const std::string& column) {
  return column.ends_with("_ns") ? ValueUnit::Nanoseconds : ValueUnit::Plain;
}

}  // namespace

ChartData plot_chart(const TableView& table, const PlotRequest& request) {
  const std::size_t x = column_of(table, "x", request.x);
  const std::size_t y = column_of(table, "y", request.y);
  const bool by = !request.by.empty();
  const std::size_t by_column = by ? column_of(table, "by", request.by) : 0;
  const std::optional<std::size_t> error = find_column(table, "error");

  struct Row {
    const std::string* x;
    double y;
    std::string series;
  };
  std::vector<Row> rows;
  std::size_t skipped = 0;
  bool numeric_x = true;
  for (const auto& row : table.rows) {
    const std::optional<double> value = number_of(row[y]);
    if ((error && !row[*error].empty()) || !value) {
      ++skipped;
      continue;
    }
    numeric_x = numeric_x && number_of(row[x]).has_value();
    rows.push_back({&row[x], *value, by ? row[by_column] : std::string()});
  }
  if (rows.empty()) {
    throw Error(fmt::format("{}: no row has a number in column '{}' (and no error) to plot",
                            table.file, request.y));
  }

  ChartData chart;
  chart.title = request.y + " vs " + request.x + (by ? ", by " + request.by : std::string());
  chart.x_label = request.x;
  chart.y_label = request.y;
  chart.x_unit = unit_of(request.x);
  chart.y_unit = unit_of(request.y);
  std::map<std::string, std::size_t> category_of;
  if (!numeric_x) {
    for (const Row& r : rows) {
      if (category_of.emplace(*r.x, chart.categories.size()).second) {
        chart.categories.push_back(*r.x);
      }
    }
  }
  // Series in the order they first appear; points sorted by x, repeated x averaged.
  std::map<std::string, std::size_t> series_of;
  std::vector<std::map<double, std::pair<double, std::size_t>>> sums;
  std::size_t most = 1;
  for (const Row& r : rows) {
    const auto [it, added] = series_of.emplace(r.series, chart.series.size());
    if (added) {
      chart.series.push_back({r.series, {}});
      sums.emplace_back();
    }
    const double at = numeric_x ? *number_of(*r.x) : double(category_of[*r.x]);
    auto& [sum, count] = sums[it->second][at];
    sum += r.y;
    most = std::max(most, ++count);
  }
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    for (const auto& [at, total] : sums[s]) {
      chart.series[s].points.push_back({at, total.first / double(total.second), total.second});
    }
  }
  chart.caption = fmt::format("{} of {} rows plotted", rows.size(), table.rows.size());
  if (skipped > 0) {
    chart.caption += fmt::format("; {} left out (an error or no {})", skipped, request.y);
  }
  if (most > 1) {
    const std::size_t usual = usual_point_rows(chart);
    if (usual == 1) {
      chart.caption += "; a point marked n=K is the mean of K rows (other columns vary)";
    } else {
      const bool others =
          std::any_of(chart.series.begin(), chart.series.end(), [&](const ChartSeries& s) {
            return std::any_of(s.points.begin(), s.points.end(),
                               [&](const ChartSeries::Point& p) { return p.rows != usual; });
          });
      chart.caption += fmt::format("; a point is the mean of {} rows (other columns vary){}", usual,
                                   others ? ", one marked n=K of K" : "");
    }
  }
  return chart;
}

}  // namespace perflow::visualizer
