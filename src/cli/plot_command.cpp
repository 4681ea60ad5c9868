// `perflow plot RESULTS.csv --x COL --y COL [--by COL] -o chart.svg` (visualizer::plot_chart).
#include <memory>
#include <string>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "perflow/core/atomic_file.hpp"
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
  OutputRules rules;
};

void run_plot(const PlotOptions& options) {
  const visualizer::ImageFormat format = visualizer::image_format_of(options.output, "-o");
  const InputFile inputs[] = {{"the results", options.results}};
  const OutputFile outputs[] = {{"-o", options.output}};
  check_output_paths(inputs, outputs, options.rules);
  const explore::CsvTable table = explore::read_csv_table(options.results);
  const visualizer::ChartData chart = visualizer::plot_chart(
      {table.file, table.columns, table.rows}, {options.x, options.y, options.by});
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
  output_option(cmd->add_option("-o,--output", options->output, "The chart: .svg, .png or .pdf"))
      ->required();
  options->rules.add_options(*cmd);
  cmd->callback([options] { run_plot(*options); });
}

}  // namespace perflow::cli::detail
