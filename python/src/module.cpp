// The `perflow` Python module's native part (`perflow._perflow`): the library's schedules,
// trace operators, simulator and renderers, and the library functions the CLI's commands
// call (configs, reports, explorations, analyses), in process. The Python package
// (perflow/__init__.py) adds what is easier in Python (configs given as dicts, JSON text or
// paths; the report as objects).
#include "bindings.hpp"

PYBIND11_MODULE(_perflow, m) {
  m.doc() = "PerFlow's C++ core: pipeline schedules, trace operators, simulation and reports";
  perflow::python::bind_errors(m);  // first: the others' docstrings name its classes
  perflow::python::bind_graph(m);
  perflow::python::bind_run(m);
  perflow::python::bind_study(m);
  perflow::python::bind_explore(m);
  perflow::python::bind_analysis(m);
}
