// perflow search SEARCH.json: the best plans of a model on a cluster (docs/search-and-sweeps.md
// "Search").
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/commands.hpp"
#include "detail/output_paths.hpp"
#include "detail/progress_line.hpp"
#include "detail/set_option.hpp"
#include "detail/study.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/time.hpp"
#include "perflow/core/units.hpp"
#include "perflow/explore/search.hpp"
#include "perflow/explore/search_json.hpp"
#include "perflow/study/config.hpp"
#include "perflow/study/device_display.hpp"
#include "perflow/study/summary.hpp"
#include "perflow/visualizer/pareto.hpp"
#include "perflow/visualizer/timeline.hpp"

namespace perflow::cli::detail {
namespace {

using visualizer::escape_html;

struct SearchOptions {
  std::string file;
  std::string output;  // -o plans.json
  std::string format = "text";
  std::string html;  // --html report.html
  unsigned jobs = 0;
  OutputRules rules;
  std::vector<std::string> set;  // --set POINTER=VALUE on the base config
};

// Whether any of the plans offloads: its column is shown then.
bool any_offload(const std::vector<explore::PlanResult>& plans) {
  return std::any_of(plans.begin(), plans.end(),
                     [](const explore::PlanResult& r) { return r.plan.offload > 0; });
}

// Whether any of the plans uses expert parallelism: its column is shown then.
bool any_expert_parallel(const std::vector<explore::PlanResult>& plans) {
  return std::any_of(plans.begin(), plans.end(),
                     [](const explore::PlanResult& r) { return r.plan.expert_parallel > 1; });
}

// Whether any plan uses context parallelism, and whether the plans differ in precision:
// their columns are shown then.
bool any_context_parallel(const std::vector<explore::PlanResult>& plans) {
  return std::any_of(plans.begin(), plans.end(),
                     [](const explore::PlanResult& r) { return r.plan.context_parallel > 1; });
}
bool mixed_precision(const std::vector<explore::PlanResult>& plans) {
  return std::any_of(plans.begin(), plans.end(), [&](const explore::PlanResult& r) {
    return r.plan.precision != plans.front().plan.precision;
  });
}
// Any plan with FSDP: its column is shown then ("zero3", "hsdp/8", "none").
bool any_fsdp(const std::vector<explore::PlanResult>& plans) {
  return std::any_of(plans.begin(), plans.end(),
                     [](const explore::PlanResult& r) { return r.plan.fsdp != "none"; });
}
std::string fsdp_text(const explore::Plan& p) {
  return p.fsdp == "hsdp" ? fmt::format("hsdp/{}", p.fsdp_shard_size) : p.fsdp;
}

std::string table(const std::vector<explore::PlanResult>& plans) {
  const bool offload = any_offload(plans);
  const bool ep = any_expert_parallel(plans);
  const bool cp = any_context_parallel(plans);
  const bool precision = mixed_precision(plans);
  const bool fsdp = any_fsdp(plans);
  std::vector<std::vector<std::string>> rows = {{"rank", "schedule", "PPxTPxDP", "mbs x m",
                                                 "chunks", "recompute", "placement", "layers",
                                                 "step time", "tokens/s", "MFU", "peak memory"}};
  if (fsdp) rows.front().insert(rows.front().begin() + 6, "FSDP");
  if (precision) rows.front().insert(rows.front().begin() + 6, "precision");
  if (offload) rows.front().insert(rows.front().begin() + 6, "offload");
  if (ep) rows.front().insert(rows.front().begin() + 3, "EP");
  if (cp) rows.front().insert(rows.front().begin() + 3, "CP");
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
    if (fsdp) rows.back().insert(rows.back().begin() + 6, fsdp_text(p));
    if (precision) rows.back().insert(rows.back().begin() + 6, p.precision);
    if (offload) rows.back().insert(rows.back().begin() + 6, fmt::format("{:g}", p.offload));
    if (ep) rows.back().insert(rows.back().begin() + 3, fmt::format("{}", p.expert_parallel));
    if (cp) rows.back().insert(rows.back().begin() + 3, fmt::format("{}", p.context_parallel));
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

std::string html_table(const std::vector<explore::PlanResult>& plans) {
  const bool offload = any_offload(plans);
  const bool ep = any_expert_parallel(plans);
  const bool cp = any_context_parallel(plans);
  const bool precision = mixed_precision(plans);
  const bool fsdp = any_fsdp(plans);
  std::string html = fmt::format(
      "<table><tr><th>rank</th><th>schedule</th><th>PP x TP x DP</th>{}{}<th>mbs x m</th>"
      "<th>chunks</th><th>recompute</th>{}{}{}<th>placement</th><th>layers</th><th>step time</th>"
      "<th>tokens/s</th><th>MFU</th><th>peak memory (static + activations, fullest GPU)</th>"
      "</tr>\n",
      cp ? "<th>CP</th>" : "", ep ? "<th>EP</th>" : "", offload ? "<th>offload</th>" : "",
      precision ? "<th>precision</th>" : "", fsdp ? "<th>FSDP</th>" : "");
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const explore::Plan& p = plans[i].plan;
    const explore::RunOutcome& o = plans[i].outcome;
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}x{}x{}</td>{}{}<td>{} x "
        "{}</td><td>{}</td><td>{}</td>{}{}{}"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        i + 1, escape_html(p.schedule), p.pipeline, p.tensor_parallel, p.data_parallel,
        cp ? fmt::format("<td>{}</td>", p.context_parallel) : "",
        ep ? fmt::format("<td>{}</td>", p.expert_parallel) : "", p.micro_batch_size, p.microbatches,
        p.chunks, escape_html(p.recompute), offload ? fmt::format("<td>{:g}</td>", p.offload) : "",
        precision ? fmt::format("<td>{}</td>", escape_html(p.precision)) : "",
        fsdp ? fmt::format("<td>{}</td>", escape_html(fsdp_text(p))) : "", escape_html(p.placement),
        escape_html(p.layers), format_duration(o.makespan),
        o.tokens_per_s ? fmt::format("{:.0f}", *o.tokens_per_s) : "-",
        o.mfu ? fmt::format("{:.1f}%", *o.mfu * 100) : "-", format_memory(o.peak_total_memory));
  }
  return html + "</table>\n";
}

// Step time against peak memory: the Pareto front as a staircase, the best plans as rings.
std::string pareto_svg(const explore::SearchResult& result) {
  const auto points = [](const std::vector<explore::PlanResult>& plans) {
    std::vector<visualizer::ParetoPoint> out;
    for (const explore::PlanResult& r : plans) {
      out.push_back({r.outcome.peak_total_memory, r.outcome.makespan,
                     r.plan.config.value("description", "")});
    }
    return out;
  };
  return visualizer::render_pareto_svg(points(result.pareto), points(result.best));
}

// Why a search has no answer: what pruned how many and how near the nearest plan came.
std::string no_fit_reason(const explore::SearchResult& result) {
  const explore::SearchCounts& c = result.counts;
  std::string why = fmt::format(
      "of {} plans, {} were pruned by divisibility and schedule constraints and {} by a lower "
      "bound of their memory; {} simulated",
      c.considered, c.pruned_divisibility, c.pruned_memory, c.simulated);
  if (c.simulated > 0) {
    why += fmt::format(" ({} refused by a schedule, {} out of memory)", c.invalid,
                       c.simulated - c.invalid);
  }
  if (const std::optional<explore::NearestMiss>& miss = result.nearest_miss) {
    const explore::Plan& p = miss->plan;
    const explore::RunOutcome::Overshoot& o = miss->overshoot;
    why += fmt::format(
        "; the nearest miss, {} on {} (PPxTPxDP {}x{}x{}, micro-batch {} x {}, {} chunk{}, "
        "recompute {}), needs {}{} on stage {}, {:.2f} times its {}",
        p.schedule, p.placement, p.pipeline, p.tensor_parallel, p.data_parallel, p.micro_batch_size,
        p.microbatches, p.chunks, p.chunks == 1 ? "" : "s", p.recompute,
        miss->lower_bound ? "at least " : "", format_memory(o.needed), o.device,
        o.needed / o.capacity, format_memory(o.capacity));
  }
  return why;
}

// One self-contained page: counts, the best plans, the Pareto chart, the winner's timeline
// and where its step goes (compute, bubble, exposed communication).
std::string html_report(const std::string& file, const explore::SearchResult& result) {
  const explore::SearchCounts& c = result.counts;
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>perflow search: {0}</title>\n<style>body{{font-family:sans-serif;margin:2em}}"
      "table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 8px;"
      "text-align:left}}#timeline svg{{width:100%;height:auto}}</style></head><body>\n<h1>perflow "
      "search: {0}</h1>\n"
      "<p id=\"counts\">{1} plans considered, {2} pruned ({3} by divisibility, {4} by "
      "memory), {5} simulated, {6} fit</p>\n",
      escape_html(file), c.considered, c.pruned_divisibility + c.pruned_memory,
      c.pruned_divisibility, c.pruned_memory, c.simulated, c.fit);
  if (result.best.empty()) {
    return html + "<p>No plan fits: " + escape_html(no_fit_reason(result)) +
           ".</p>\n</body></html>\n";
  }
  html += "<h2>Best plans by step time</h2>\n" + html_table(result.best);
  html += "<h2>Pareto front: step time vs peak memory</h2>\n" + pareto_svg(result) +
          html_table(result.pareto);
  const explore::PlanResult& winner = result.best.front();
  const Config config = parse_config(winner.plan.config, file);
  const EventGraph graph = build_graph(config);
  const simulator::SimulationResult run = simulate(config, graph);
  const simulator::Metrics& m = run.metrics;
  // The figures perflow simulate prints, by its definitions: compute is the mean busy time,
  // idle the bubble ratio (the mean of (makespan - busy) / makespan); of the idle, the link
  // lanes' communication that it could hide at most.
  double busy = 0, exposed = 0;
  for (const simulator::DeviceMetrics& d : m.devices) {
    busy += double(d.busy);
    exposed += std::min(double(d.communication), double(m.makespan - d.busy));
  }
  const double n = double(std::max<std::size_t>(m.devices.size(), 1));
  const double total = double(m.makespan);
  html += fmt::format(
      "<h2>The winner</h2>\n<p>{}</p>\n<table id=\"breakdown\"><tr><th>step time</th><td>{}</td>"
      "</tr><tr><th>compute</th><td>{} ({:.2f}%)</td></tr><tr><th>idle (the bubble ratio)</th>"
      "<td>{} ({:.2f}%)</td></tr><tr><th>of the idle, communication not overlapped (at most)"
      "</th><td>{} ({:.2f}%)</td></tr><tr><th>peak memory (static + activations, fullest GPU)"
      "</th><td>{}</td></tr></table>\n<p>Per device, averaged over the {} devices, as "
      "<code>perflow simulate</code> reports them. Communication is the time of the link lanes "
      "(with simulation.lower_communication) that idle time could hide at most; without "
      "lowering, waiting for transfers is idle time.</p>\n",
      escape_html(config.description), format_duration(m.makespan),
      format_duration(static_cast<TimeNs>(busy / n)), 100 * busy / n / total,
      format_duration(static_cast<TimeNs>(m.bubble_ratio * total)), 100 * m.bubble_ratio,
      format_duration(static_cast<TimeNs>(exposed / n)), 100 * exposed / n / total,
      format_memory(winner.outcome.peak_total_memory), m.devices.size());
  const DeviceDisplay display = device_display(config, config.pipeline.stages);
  visualizer::TimelineOptions style;
  style.title = config.description;
  style.subtitle = describe_run(config, graph);
  style.device_labels = display.labels;
  style.memory_chart = true;
  style.static_memory = display.static_memory;
  style.memory_capacity = display.capacity;
  html += "<div id=\"timeline\">\n" + visualizer::render_timeline_svg(graph, run.trace, m, style) +
          "</div>\n";
  return html + "</body></html>\n";
}

// A search without an answer exits 6 (its outputs, which say the same, are written first).
[[noreturn]] void throw_no_fit(const std::string& file, const explore::SearchResult& result) {
  throw NoAnswerError(fmt::format("{}: no plan fits: {}", file, no_fit_reason(result)));
}

void run_search_command(const SearchOptions& options) {
  if (options.format != "text" && options.format != "json" && options.format != "csv") {
    throw Error(fmt::format("--format '{}': expected text, json or csv", options.format));
  }
  {
    const InputFile inputs[] = {{"the search", options.file}};
    const OutputFile files[] = {{"-o", options.output}, {"--html", options.html}};
    check_output_paths(inputs, files, options.rules);
  }
  const explore::Search search = explore::load_search(options.file, parse_overrides(options.set));
  explore::SearchOptions run;
  run.jobs = options.jobs;
  // Progress on a terminal, as sweep shows it: a large search weighs plans for minutes.
  ProgressLine progress("plans weighed", ::isatty(STDERR_FILENO) != 0);
  run.progress = [&](const explore::SweepProgress& p) { progress.update(p); };
  const explore::SearchResult result = explore::run_search(search, run);
  progress.clear();
  const std::string json = explore::search_result_text(result);
  // Both files appear together, or neither (a failed --html leaves an old -o as it was).
  const std::string html = options.html.empty() ? std::string() : html_report(options.file, result);
  std::vector<std::pair<std::filesystem::path, std::string_view>> files;
  if (!options.output.empty()) files.emplace_back(options.output, json);
  if (!options.html.empty()) files.emplace_back(options.html, html);
  write_files_atomically(files);
  if (options.format == "json" || options.format == "csv") {
    fmt::print("{}", options.format == "json" ? json : explore::search_result_csv(result));
    if (result.best.empty()) throw_no_fit(options.file, result);
    return;
  }
  const explore::SearchCounts& c = result.counts;
  fmt::print(
      "{}: {} plans considered, {} pruned ({} by divisibility, {} by memory), {} simulated, {} "
      "fit\n",
      options.file, c.considered, c.pruned_divisibility + c.pruned_memory, c.pruned_divisibility,
      c.pruned_memory, c.simulated, c.fit);
  if (c.invalid > 0) fmt::print("  ({} simulated plans were refused by a schedule)\n", c.invalid);
  if (!result.best.empty()) {
    fmt::print("\nbest plans by step time:\n{}", table(result.best));
    fmt::print("\nPareto front (step time vs peak memory):\n{}", table(result.pareto));
  }
  if (!options.output.empty()) fmt::print("\nplans written to {}\n", options.output);
  if (!options.html.empty()) fmt::print("report written to {}\n", options.html);
  if (result.best.empty()) throw_no_fit(options.file, result);
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto options = std::make_shared<SearchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "search",
      "Find the fastest plans of a model on a cluster: pipeline, tensor and data parallelism, "
      "micro-batches, schedule, chunks, recomputation and GPU placement, pruned then simulated");
  cmd->add_option("file", options->file, "The search file (JSON)")->required();
  output_option(
      cmd->add_option("-o,--output", options->output,
                      "Write the best plans and the Pareto front, with their configs, as JSON"));
  output_option(cmd->add_option("--html", options->html,
                                "Write one self-contained page: the ranked plans, the Pareto "
                                "chart and the winner's timeline and breakdown"));
  options->rules.add_options(*cmd);
  cmd->add_option("--format", options->format,
                  "Output: text (default), json, or csv (the best and Pareto plans, one a row)");
  cmd->add_option("--jobs", options->jobs, "Threads to run on (default: every core)")
      ->check(CLI::Range(1u, 4096u));
  add_set_option(*cmd, options->set);
  cmd->callback([options] { run_search_command(*options); });
}

}  // namespace perflow::cli::detail
