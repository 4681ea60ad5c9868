// The `perflow` Python module's native part (`perflow._perflow`): the library's schedules,
// trace operators, simulator and renderers, and the library functions the CLI's commands
// call (configs, reports, explorations, analyses), in process. The Python package
// (perflow/__init__.py) adds what is easier in Python (configs given as dicts, JSON text or
// paths; the report as objects).
#include <string>

#include "bindings.hpp"

PYBIND11_MODULE(_perflow, m) {
  namespace py = pybind11;
  m.doc() = "PerFlow's C++ core: pipeline schedules, trace operators, simulation and reports";
  // NumPy now, while no other thread can use the module: see require_numpy. Without NumPy the
  // module still loads, and the columns say what is missing.
  try {
    perflow::python::require_numpy();
  } catch (const py::import_error&) {
  }
  perflow::python::bind_errors(m);  // first: the others' docstrings name its classes
  perflow::python::bind_graph(m);
  perflow::python::bind_run(m);
  perflow::python::bind_study(m);
  perflow::python::bind_explore(m);
  perflow::python::bind_analysis(m);
  perflow::python::bind_import(m);
  // The rule for the arguments the package checks in Python (perflow/_source.py).
  m.def(
      "_text",
      [](const py::object& value, const std::string& what) {
        (void)perflow::python::text_of(value, what.c_str());
        return value;
      },
      py::arg("value"), py::arg("what"), "value if it is a str of valid Unicode (text_of)");
  m.def(
      "_path",
      [](const py::object& value, const std::string& what) {
        return py::bytes(perflow::python::path_bytes_of(value, what.c_str()));
      },
      py::arg("value"), py::arg("what"), "The bytes of a path argument (path_bytes_of)");
}
