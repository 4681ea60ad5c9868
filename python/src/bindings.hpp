// What the parts of the `perflow._perflow` module share: the objects Python holds and the
// conversions of Python values (durations, sizes) into the library's.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <filesystem>
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

/// Text Python gives (a name, a pattern, a title): a str of valid Unicode, as UTF-8. A
/// TypeError naming the argument `what` for another type, a ValueError for a str that is not
/// text (a lone surrogate, what os.fsdecode makes of a byte that is not UTF-8).
std::string text_of(py::handle value, const char* what);

/// A path Python gives, as os.fspath takes it (str, bytes, os.PathLike) and os.fsencode
/// encodes it: the bytes of a file name os.fsdecode read, surrogates back to their bytes.
/// A TypeError naming `what` for another type; a ValueError for an empty path or one with a
/// NUL character (which would cut it short).
std::string path_bytes_of(py::handle value, const char* what);
inline std::filesystem::path path_of(py::handle value, const char* what) {
  return path_bytes_of(value, what);
}

/// Text from C++ that may hold bytes that are not UTF-8 (a file name in a message or a repr)
/// as a str, such a byte shown as "\xff": never a UnicodeDecodeError.
py::str shown_text(const std::string& bytes);

/// A file name from C++ as a str, as os.fsdecode makes it (a byte that is not UTF-8 as a
/// surrogate), so that the str names the same file again.
py::str path_text(const std::string& bytes);

/// Imports NumPy and sets up pybind11's NumPy API, once per process; the module does it when
/// it loads. Safe from any number of threads: one imports while the others wait without the
/// GIL (pybind11 2.10's own set-up, a function-local static, is entered by a thread that then
/// releases the GIL inside the import, and a second thread waiting for the static while
/// holding the GIL deadlocks them both). An ImportError naming NumPy when it is missing.
void require_numpy();

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
void bind_import(py::module_& m);

}  // namespace perflow::python
