// What the parts of the `perflow._perflow` module share: the objects Python holds and the
// conversions of Python values (durations, sizes) into the library's.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/time.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config.hpp"

namespace perflow::python {

namespace py = pybind11;

/// A graph Python holds (perflow.Graph). Shared: a Run keeps the graph it simulated alive,
/// and NumPy views of its columns keep the Run.
using GraphPtr = std::shared_ptr<EventGraph>;  // never changed once made

/// A config Python holds (perflow.Config).
using ConfigPtr = std::shared_ptr<study::Config>;  // never changed once made

/// One simulation (perflow.Run): the graph, its trace and metrics, and, when it came from a
/// config, the config (for the report, the summary and the CLI's timeline captions).
struct Run {
  GraphPtr graph;
  simulator::SimulationResult result;
  ConfigPtr config;  ///< null for a graph simulated directly
};

/// A duration: an int is nanoseconds, a str has a unit ("1315us", "2.5ms"). `what` names the
/// argument in errors (a Python ValueError or TypeError).
TimeNs duration_of(py::handle value, const char* what);

/// A number (int, float, NumPy scalar; not a bool or a str), as a double.
double number_of(py::handle value, const char* what);

/// Bytes (or abstract memory units) from 0 to 1e18: a number, or a str with a unit ("1.5GB",
/// "64MiB").
double bytes_of(py::handle value, const char* what);

/// A read-only 1-D NumPy array over `n` items of `dtype` at `data`, without a copy: `owner`
/// (the Python object holding the memory) stays alive as long as the array.
py::array view(py::handle owner, const void* data, std::size_t n, const char* dtype);

/// view() of a column of 32-bit ids (DeviceId, LaneId, StageId) as uint32.
template <typename Id>
py::array id_view(py::handle owner, std::span<const Id> ids) {
  static_assert(sizeof(Id) == 4 && std::is_trivially_copyable_v<Id>);
  return view(owner, ids.data(), ids.size(), "uint32");
}

/// The task columns a graph and a run share, as views owned by `owner`: device, lane, kind,
/// microbatch, chunk, stage.
py::dict task_columns(py::handle owner, const EventGraph& graph);

/// The name of a value's type, for errors ("found float").
std::string type_name(py::handle value);

void bind_errors(py::module_& m);
void bind_study(py::module_& m);
void bind_graph(py::module_& m);
void bind_run(py::module_& m);
void bind_explore(py::module_& m);
void bind_analysis(py::module_& m);

}  // namespace perflow::python
