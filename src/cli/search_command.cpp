// perflow search SEARCH.json: the best plans of a model on a cluster (README "Search").
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/time.hpp"
#include "perflow/core/units.hpp"
#include "perflow/explore/search.hpp"

namespace perflow::cli::detail {
namespace {

struct SearchOptions {
  std::string file;
  std::string output;  // -o plans.json
  std::string format = "text";
  unsigned jobs = 0;
};

nlohmann::json optional_number(const std::optional<double>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

nlohmann::json plan_json(const explore::PlanResult& r, std::size_t rank) {
  const explore::Plan& p = r.plan;
  return {{"rank", rank},
          {"schedule", p.schedule},
          {"pipeline", p.pipeline},
          {"tensor_parallel", p.tensor_parallel},
          {"data_parallel", p.data_parallel},
          {"micro_batch_size", p.micro_batch_size},
          {"microbatches", p.microbatches},
          {"chunks", p.chunks},
          {"recompute", p.recompute},
          {"placement", p.placement},
          {"layers", p.layers},
          {"makespan_ns", r.outcome.makespan},
          {"bubble_ratio", r.outcome.bubble_ratio},
          {"tokens_per_s", optional_number(r.outcome.tokens_per_s)},
          {"mfu", optional_number(r.outcome.mfu)},
          {"peak_memory", r.outcome.peak_memory},
          {"peak_total_memory", r.outcome.peak_total_memory},
          {"config", p.config}};
}

nlohmann::json result_json(const explore::SearchResult& result) {
  const explore::SearchCounts& c = result.counts;
  nlohmann::json best = nlohmann::json::array();
  for (std::size_t i = 0; i < result.best.size(); ++i)
    best.push_back(plan_json(result.best[i], i + 1));
  nlohmann::json pareto = nlohmann::json::array();
  for (std::size_t i = 0; i < result.pareto.size(); ++i)
    pareto.push_back(plan_json(result.pareto[i], i + 1));
  return {{"considered", c.considered},
          {"pruned", c.pruned_divisibility + c.pruned_memory},
          {"pruned_divisibility", c.pruned_divisibility},
          {"pruned_memory", c.pruned_memory},
          {"simulated", c.simulated},
          {"invalid", c.invalid},
          {"fit", c.fit},
          {"best", std::move(best)},
          {"pareto", std::move(pareto)}};
}

std::string table(const std::vector<explore::PlanResult>& plans) {
  std::vector<std::vector<std::string>> rows = {{"rank", "schedule", "PPxTPxDP", "mbs x m",
                                                 "chunks", "recompute", "placement", "layers",
                                                 "step time", "tokens/s", "MFU", "peak memory"}};
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const explore::Plan& p = plans[i].plan;
    const explore::RunOutcome& o = plans[i].outcome;
    rows.push_back(
        {fmt::format("{}", i + 1), p.schedule,
         fmt::format("{}x{}x{}", p.pipeline, p.tensor_parallel, p.data_parallel),
         fmt::format("{} x {}", p.micro_batch_size, p.microbatches), fmt::format("{}", p.chunks),
         p.recompute, p.placement, p.layers, format_duration(o.makespan),
         o.tokens_per_s ? fmt::format("{:.0f}", *o.tokens_per_s) : "-",
         o.mfu ? fmt::format("{:.1f}%", *o.mfu * 100) : "-", format_memory(o.peak_total_memory)});
  }
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t k = 0; k < row.size(); ++k) {
      line += fmt::format("{:<{}}", row[k], k + 1 < row.size() ? width[k] + 2 : 0);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += "  " + line + "\n";
  }
  return text;
}

void run_search_command(const SearchOptions& options) {
  if (options.format != "text" && options.format != "json") {
    throw Error(fmt::format("--format '{}': expected text or json", options.format));
  }
  {
    const InputFile inputs[] = {{"the search", options.file}};
    const OutputFile files[] = {{"-o", options.output}};
    check_output_paths(inputs, files);
  }
  const explore::Search search = explore::load_search(options.file);
  explore::SearchOptions run;
  run.jobs = options.jobs;
  const explore::SearchResult result = explore::run_search(search, run);
  const nlohmann::json json = result_json(result);
  if (!options.output.empty()) write_file_atomically(options.output, json.dump(1) + "\n");
  if (options.format == "json") {
    fmt::print("{}\n", json.dump(1));
    return;
  }
  const explore::SearchCounts& c = result.counts;
  fmt::print(
      "{}: {} plans considered, {} pruned ({} by divisibility, {} by memory), {} simulated, {} "
      "fit\n",
      options.file, c.considered, c.pruned_divisibility + c.pruned_memory, c.pruned_divisibility,
      c.pruned_memory, c.simulated, c.fit);
  if (c.invalid > 0) fmt::print("  ({} simulated plans were refused by a schedule)\n", c.invalid);
  if (result.best.empty()) {
    fmt::print("no plan fits\n");
  } else {
    fmt::print("\nbest plans by step time:\n{}", table(result.best));
    fmt::print("\nPareto front (step time vs peak memory):\n{}", table(result.pareto));
  }
  if (!options.output.empty()) fmt::print("\nplans written to {}\n", options.output);
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto options = std::make_shared<SearchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "search",
      "Find the fastest plans of a model on a cluster: pipeline, tensor and data parallelism, "
      "micro-batches, schedule, chunks, recomputation and GPU placement, pruned then simulated");
  cmd->add_option("file", options->file, "The search file (JSON)")->required();
  cmd->add_option("-o,--output", options->output,
                  "Write the best plans and the Pareto front, with their configs, as JSON");
  cmd->add_option("--format", options->format, "Output: text (default) or json");
  cmd->add_option("--jobs", options->jobs, "Threads to run on (default: every core)")
      ->check(CLI::Range(1u, 4096u));
  cmd->callback([options] { run_search_command(*options); });
}

}  // namespace perflow::cli::detail
