// Explorations from Python: measured costs from profiles, sweeps and searches. Each calls
// what the CLI command calls (reader, explore) and returns the text the command writes;
// perflow/_explore.py turns it into Python objects. The GIL is released while C++ runs: only
// C++ values cross into these functions.
#include <pybind11/stl.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "perflow/core/json_cursor.hpp"
#include "perflow/explore/search.hpp"
#include "perflow/explore/search_json.hpp"
#include "perflow/explore/sweep.hpp"
#include "perflow/explore/sweep_runner.hpp"
#include "perflow/explore/sweep_table.hpp"
#include "perflow/reader/costs.hpp"

namespace perflow::python {
namespace {

// `perflow costs`'s config text. A config the chosen schedule refuses is named "<costs>" in
// the message, where the CLI names its -o file: from Python there is no file.
std::pair<std::string, std::vector<std::string>> costs_json(
    const std::vector<std::string>& profiles, const std::string& preset, const std::string& pattern,
    const std::vector<std::string>& rank_stage, const std::string& schedule,
    std::optional<std::int64_t> stages, std::optional<std::int64_t> microbatches,
    std::optional<double> scale, std::optional<std::int64_t> layers_per_stage,
    std::optional<std::int64_t> profiled_layers) {
  reader::CostsRequest request;
  request.profiles = {profiles, preset, pattern, rank_stage};
  request.schedule = schedule;
  request.stages = stages;
  request.microbatches = microbatches;
  request.scale = scale;
  request.layers_per_stage = layers_per_stage;
  request.profiled_layers = profiled_layers;
  reader::CostsRun run = reader::run_costs(request, "<costs>");
  return {std::move(run.text), std::move(run.notes)};
}

// A sweep from its file (as `perflow sweep` reads it: a base path is relative to the file)
// or from JSON text named `file` in messages, whose base path is relative to the current
// directory; `axis_order` lists /axes' keys as written (a dict keeps them, JSON objects
// here do not).
explore::Sweep sweep_of(const std::string& source, const std::string& file, bool is_path,
                        const std::vector<std::string>& axis_order) {
  if (is_path) return explore::load_sweep(source);
  return explore::parse_sweep(parse_json_text(source, file), axis_order, file,
                              std::filesystem::path());
}

// Every run's row, in run order: what `perflow sweep SWEEP --jsonl FILE` writes to FILE.
std::string sweep_jsonl(const std::string& source, const std::string& file, bool is_path,
                        const std::vector<std::string>& axis_order, unsigned jobs) {
  const explore::Sweep sweep = sweep_of(source, file, is_path, axis_order);
  std::string rows;
  explore::run_sweep(sweep, 0, sweep.run_count(), jobs, [&](const explore::RunOutcome& outcome) {
    rows += explore::table_row(sweep, outcome, explore::TableFormat::Jsonl);
  });
  return rows;
}

// What `perflow search SEARCH -o PLANS.json` writes; `gpu_order` lists /cluster/gpus' keys
// as written.
std::string search_json(const std::string& source, const std::string& file, bool is_path,
                        const std::vector<std::string>& gpu_order, unsigned jobs) {
  const explore::Search search =
      is_path ? explore::load_search(source)
              : explore::parse_search(parse_json_text(source, file), gpu_order, file);
  explore::SearchOptions options;
  options.jobs = jobs;
  return explore::search_result_text(explore::run_search(search, options));
}

}  // namespace

void bind_explore(py::module_& m) {
  const auto released = py::call_guard<py::gil_scoped_release>();
  m.def("_costs_json", &costs_json, py::arg("profiles"), py::arg("preset"), py::arg("pattern"),
        py::arg("rank_stage"), py::arg("schedule"), py::arg("stages"), py::arg("microbatches"),
        py::arg("scale"), py::arg("layers_per_stage"), py::arg("profiled_layers"), released,
        "The config `perflow costs PROFILE... -o FILE` writes to FILE, as text, and the notes "
        "the CLI prints (\"\" or None: not given)");
  m.def("_sweep_jsonl", &sweep_jsonl, py::arg("source"), py::arg("file"), py::arg("is_path"),
        py::arg("axis_order"), py::arg("jobs"), released,
        "The JSON Lines `perflow sweep SWEEP --jsonl FILE` writes, for a sweep file or JSON text "
        "named `file` (jobs 0: every core)");
  m.def("_search_json", &search_json, py::arg("source"), py::arg("file"), py::arg("is_path"),
        py::arg("gpu_order"), py::arg("jobs"), released,
        "The JSON `perflow search SEARCH -o PLANS.json` writes, for a search file or JSON text "
        "named `file` (jobs 0: every core)");
}

}  // namespace perflow::python
