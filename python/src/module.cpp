// The `perflow` Python module's native part (`perflow._perflow`): the same config, report and
// schedule registry the CLI uses, called in process. The Python package (perflow/__init__.py)
// turns configs given as dicts, JSON text or paths into what these functions take.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perflow/cli/config.hpp"
#include "perflow/cli/report.hpp"
#include "perflow/cli/summary.hpp"
#include "perflow/core/error.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace py = pybind11;

namespace {

using perflow::cli::Config;

// A config from JSON text (`file` names it in messages) or from a path.
Config config_of(const std::string& text, const std::string& file, bool is_path) {
  if (is_path) return perflow::cli::load_config(std::filesystem::path(text));
  return perflow::cli::parse_config(nlohmann::json::parse(text), file);
}

// The `--report` text of one config: what `perflow simulate CONFIG --report` writes.
std::string simulate_report(const std::string& text, const std::string& file, bool is_path) {
  const Config config = config_of(text, file, is_path);
  py::gil_scoped_release release;  // the C++ below touches no Python object
  const perflow::EventGraph graph = perflow::cli::build_graph(config);
  const perflow::simulator::SimulationResult result = perflow::cli::simulate(config, graph);
  return perflow::cli::render_report(config, graph, result);
}

// The text summary `perflow simulate CONFIG` prints.
std::string simulate_summary(const std::string& text, const std::string& file, bool is_path) {
  const Config config = config_of(text, file, is_path);
  py::gil_scoped_release release;
  const perflow::EventGraph graph = perflow::cli::build_graph(config);
  const perflow::simulator::SimulationResult result = perflow::cli::simulate(config, graph);
  return perflow::cli::format_summary(config, graph, result);
}

}  // namespace

PYBIND11_MODULE(_perflow, m) {
  m.doc() = "PerFlow's C++ core: pipeline schedules, simulation and reports";

  // Errors keep the C++ message (file, JSON pointer, what was expected and found).
  static py::exception<perflow::Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<perflow::ConfigError> config_error(m, "ConfigError", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const perflow::ConfigError& e) {
      PyErr_SetString(config_error.ptr(), e.what());
    } catch (const perflow::Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    } catch (const nlohmann::json::exception& e) {
      PyErr_SetString(config_error.ptr(), e.what());
    }
  });

  m.def("_simulate_report", &simulate_report, py::arg("text"), py::arg("file"), py::arg("is_path"),
        "The --report JSON text of a config (JSON text named `file`, or a path)");
  m.def("_simulate_summary", &simulate_summary, py::arg("text"), py::arg("file"),
        py::arg("is_path"), "The text summary of a config");
  m.def(
      "schedules",
      [] {
        py::list out;
        for (const auto& s : perflow::parallel::builtin_schedules().all()) {
          py::dict entry;
          entry["name"] = s.name;
          entry["description"] = s.description;
          entry["constraints"] = s.constraints;
          out.append(entry);
        }
        return out;
      },
      "Every built-in schedule: name, description and constraints (`perflow schedules`)");
}
