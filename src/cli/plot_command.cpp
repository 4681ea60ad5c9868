#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/core/did_you_mean.hpp"
#include "perflow/core/error.hpp"
#include "perflow/explore/csv_table.hpp"
#include "perflow/visualizer/chart.hpp"

namespace perflow::cli::detail {
namespace {

struct PlotOptions {
  std::string results;
  std::string x;
  std::string y;
  std::string by;
  std::string output;
};

std::optional<double> number_of(const std::string& text) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::size_t column_of(const explore::CsvTable& table, const std::string& option,
                      const std::string& name) {
  if (const auto index = table.column(name)) return *index;
  std::string valid;
  for (const std::string& c : table.columns) valid += (valid.empty() ? "" : ", ") + c;
  throw Error(fmt::format("{} '{}': {} has no such column{}; its columns: {}", option, name,
                          table.file, did_you_mean_suffix(name, table.columns), valid));
}

visualizer::ValueUnit unit_of(const std::string& column) {
  return column.ends_with("_ns") ? visualizer::ValueUnit::Nanoseconds
                                 : visualizer::ValueUnit::Plain;
}

// The chart of column y against column x, one line per value of column `by`: rows with an
// error or without a y are left out, and points of one line at one x are averaged (the
// other axes vary there).
visualizer::ChartData make_chart(const explore::CsvTable& table, const PlotOptions& options) {
  const std::size_t x = column_of(table, "--x", options.x);
  const std::size_t y = column_of(table, "--y", options.y);
  const bool by = !options.by.empty();
  const std::size_t by_column = by ? column_of(table, "--by", options.by) : 0;
  const std::optional<std::size_t> error = table.column("error");

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
                            table.file, options.y));
  }

  visualizer::ChartData chart;
  chart.title = options.y + " vs " + options.x + (by ? ", by " + options.by : std::string());
  chart.x_label = options.x;
  chart.y_label = options.y;
  chart.x_unit = unit_of(options.x);
  chart.y_unit = unit_of(options.y);
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
      chart.series[s].points.push_back({at, total.first / double(total.second)});
    }
  }
  chart.caption = fmt::format("{} of {} rows plotted", rows.size(), table.rows.size());
  if (skipped > 0)
    chart.caption += fmt::format("; {} left out (an error or no {})", skipped, options.y);
  if (most > 1) {
    chart.caption +=
        fmt::format("; a point is the mean of up to {} rows (other columns vary)", most);
  }
  return chart;
}

void run_plot(const PlotOptions& options) {
  const visualizer::ImageFormat format = visualizer::image_format_of(options.output);
  const InputFile inputs[] = {{"the results", options.results}};
  const OutputFile outputs[] = {{"-o", options.output}};
  check_output_paths(inputs, outputs);
  const explore::CsvTable table = explore::read_csv_table(options.results);
  const visualizer::ChartData chart = make_chart(table, options);
  write_file_atomically(options.output, visualizer::render_chart(chart, format));
  fmt::print("{}\nchart written to {}\n", chart.caption, options.output);
}

}  // namespace

void add_plot_command(CLI::App& app) {
  auto options = std::make_shared<PlotOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plot", "Chart a column of sweep results against another, one line per value of a third");
  cmd->add_option("results", options->results, "Sweep results (CSV)")->required();
  cmd->add_option("--x", options->x, "The column along the x axis (e.g. /pipeline/microbatches)")
      ->required();
  cmd->add_option("--y", options->y, "The column along the y axis (e.g. makespan_ns)")->required();
  cmd->add_option("--by", options->by,
                  "One line per value of this column (e.g. /pipeline/schedule)");
  cmd->add_option("-o,--output", options->output, "The chart: .svg, .png or .pdf")->required();
  cmd->callback([options] { run_plot(*options); });
}

}  // namespace perflow::cli::detail
