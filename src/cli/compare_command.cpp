#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "detail/set_option.hpp"
#include "detail/study.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/core/csv.hpp"
#include "perflow/core/units.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"
#include "perflow/study/device_display.hpp"
#include "perflow/study/summary.hpp"
#include "perflow/visualizer/comparison.hpp"

namespace perflow::cli::detail {
namespace {

struct CompareOptions {
  std::vector<std::string> configs;
  std::string output;
  std::string format = "text";
  std::vector<std::string> set;  // --set POINTER=VALUE, applied to every config
  OutputRules rules;
};

/// One config, simulated.
struct Run {
  std::string file;
  Config config;
  EventGraph graph;
  simulator::SimulationResult result;
  double peak_memory = 0;        // activations, the largest over devices
  double peak_total_memory = 0;  // with static memory
  bool out_of_memory = false;
};

nlohmann::ordered_json to_json(const Run& run) {
  const parallel::PipelineSpec& p = run.config.pipeline;
  const simulator::Metrics& m = run.result.metrics;
  return {{"config", run.file},
          {"description", run.config.description},
          {"schedule", p.schedule},
          {"stages", p.stages},
          {"microbatches", p.microbatches},
          {"chunks", p.chunks},
          {"split_backward", p.split_backward},
          {"tasks", run.graph.task_count()},
          {"makespan_ns", m.makespan},
          {"bubble_ratio", m.bubble_ratio},
          {"peak_memory", run.peak_memory},
          {"peak_total_memory", run.peak_total_memory},
          {"out_of_memory", run.out_of_memory}};
}

// The JSON's fields as CSV columns, one row per config, for spreadsheets and pandas.
std::string format_csv(const std::deque<Run>& runs) {
  std::vector<std::string> columns;
  const nlohmann::ordered_json first = to_json(runs.front());
  for (const auto& [key, value] : first.items()) columns.push_back(key);
  std::string out = csv_record(columns);
  for (const Run& run : runs) {
    const nlohmann::ordered_json row = to_json(run);
    std::vector<std::string> cells;
    for (const std::string& key : columns) {
      const nlohmann::ordered_json& v = row.at(key);
      cells.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    }
    out += csv_record(cells);
  }
  return out;
}

std::string format_table(const std::deque<Run>& runs) {
  std::size_t file_width = 6;
  std::size_t run_width = 3;
  std::vector<std::string> descriptions;
  for (const Run& run : runs) {
    descriptions.push_back(describe_run(run.config, run.graph));
    file_width = std::max(file_width, run.file.size());
    run_width = std::max(run_width, descriptions.back().size());
  }
  std::string out =
      fmt::format("{:<{}}  {:<{}}  {:>12}  {:>8}  {:>11}  {:>11}\n", "config", file_width, "run",
                  run_width, "makespan", "bubble%", "peak memory", "total peak");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Run& run = runs[i];
    out += fmt::format(
        "{:<{}}  {:<{}}  {:>12}  {:>7.2f}%  {:>11}  {:>11}{}\n", run.file, file_width,
        descriptions[i], run_width, format_duration(run.result.metrics.makespan),
        run.result.metrics.bubble_ratio * 100, format_memory(run.peak_memory),
        format_memory(run.peak_total_memory), run.out_of_memory ? "  OUT OF MEMORY" : "");
  }
  return out;
}

void run_compare(const CompareOptions& options) {
  // Usage errors in the output are found before any work.
  if (!options.output.empty()) (void)visualizer::image_format_of(options.output, "-o");
  std::vector<InputFile> inputs;
  for (const std::string& config : options.configs) inputs.push_back({"a config", config});
  const OutputFile output = {"-o", options.output};
  check_output_paths(inputs, {&output, 1}, options.rules);

  std::deque<Run> runs;  // stable addresses: the comparison refers into them
  for (const std::string& file : options.configs) {
    Run& run = runs.emplace_back();
    run.file = file;
    run.config = load_config(file, parse_overrides(options.set));
    run.graph = build_graph(run.config);
    run.result = cli::simulate(run.config, run.graph);
    for (const simulator::DeviceMetrics& d : run.result.metrics.devices) {
      const DeviceMemory memory = device_memory(run.config, d);
      run.peak_memory = std::max(run.peak_memory, d.peak_memory);
      run.peak_total_memory = std::max(run.peak_total_memory, memory.total);
      run.out_of_memory = run.out_of_memory || memory.out_of_memory;
    }
  }

  if (!options.output.empty()) {
    std::vector<visualizer::ComparedRun> compared;
    for (const Run& run : runs) {
      compared.push_back({run.file, describe_run(run.config, run.graph), run.graph,
                          run.result.trace, run.result.metrics,
                          device_display(run.config, run.graph.device_count()).labels,
                          run.out_of_memory});
    }
    visualizer::write_comparison(options.output, compared, {});
  }

  if (options.format == "json") {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Run& run : runs) list.push_back(to_json(run));
    fmt::print("{}\n", nlohmann::ordered_json{{"runs", list}}.dump(1));
  } else if (options.format == "csv") {
    fmt::print("{}", format_csv(runs));
  } else {
    fmt::print("{}", format_table(runs));
    if (!options.output.empty()) fmt::print("comparison written to {}\n", options.output);
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Simulate several configs and compare them: stacked timelines on one time scale and bars "
      "of makespan, bubble ratio and peak memory");
  cmd->add_option("configs", options->configs, "Config files (JSON)")->required();
  output_option(cmd->add_option("-o,--output", options->output,
                                "Write the comparison to this file; its extension picks the "
                                "format: .svg, .png or .pdf"));
  options->rules.add_options(*cmd);
  cmd->add_option("--format", options->format,
                  "Standard output: a text table, or the numbers as JSON or CSV")
      ->check(CLI::IsMember({"text", "json", "csv"}));
  add_set_option(*cmd, options->set);
  cmd->callback([options] { run_compare(*options); });
}

}  // namespace perflow::cli::detail
