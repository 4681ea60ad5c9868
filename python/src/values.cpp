// Python values into the library's: durations and sizes with units, and NumPy views.
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "perflow/core/units.hpp"

namespace perflow::python {

namespace {

// True for ints and what converts to one exactly (NumPy integers), not for bools.
bool is_integer(py::handle value) {
  return PyIndex_Check(value.ptr()) != 0 && !py::isinstance<py::bool_>(value);
}

}  // namespace

std::string type_name(py::handle value) {
  return std::string(py::str(py::type::of(value).attr("__name__")));
}

TimeNs duration_of(py::handle value, const char* what) {
  if (is_integer(value)) {
    const auto index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
    if (!index) throw py::error_already_set();
    int overflow = 0;
    const long long ns = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0 || ns < 0 || ns > kMaxDurationNs) {
      throw py::value_error(std::string(what) + ": expected a duration from 0 to " +
                            std::to_string(kMaxDurationNs) + " ns, found " +
                            std::string(py::repr(index)));
    }
    return ns;
  }
  if (py::isinstance<py::str>(value)) {
    const auto text = value.cast<std::string>();
    try {
      return parse_duration(text);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(std::string(what) + ": '" + text + "': " + e.what());
    }
  }
  throw py::type_error(std::string(what) +
                       ": expected a duration, an int (nanoseconds) or a str with a unit "
                       "('1315us'), found " +
                       type_name(value));
}

double number_of(py::handle value, const char* what) {
  if (py::isinstance<py::bool_>(value) || py::isinstance<py::str>(value) ||
      PyNumber_Check(value.ptr()) == 0) {
    throw py::type_error(std::string(what) + ": expected a number, found " + type_name(value));
  }
  const auto number = py::reinterpret_steal<py::object>(PyNumber_Float(value.ptr()));
  if (!number) throw py::error_already_set();  // e.g. an int too large for a float
  return PyFloat_AsDouble(number.ptr());
}

double bytes_of(py::handle value, const char* what) {
  double bytes = 0;
  if (py::isinstance<py::str>(value)) {
    const auto text = value.cast<std::string>();
    try {
      bytes = parse_bytes(text);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(std::string(what) + ": '" + text + "': " + e.what());
    }
  } else if (py::isinstance<py::bool_>(value) || PyNumber_Check(value.ptr()) == 0) {
    throw py::type_error(std::string(what) +
                         ": expected a size, a number or a str with a unit ('1.5GB'), found " +
                         type_name(value));
  } else {
    bytes = number_of(value, what);
  }
  if (!(bytes >= 0 && bytes <= kMaxBytes)) {
    throw py::value_error(std::string(what) + ": expected a size from 0 to 1e18, found " +
                          std::string(py::repr(py::float_(bytes))));
  }
  return bytes;
}

py::array view(py::handle owner, const void* data, std::size_t n, const char* dtype) {
  py::array array(py::dtype(dtype), std::vector<py::ssize_t>{static_cast<py::ssize_t>(n)}, {}, data,
                  owner);
  // A base that is not an array leaves the view writeable: these are the library's.
  array.attr("flags").attr("writeable") = false;
  return array;
}

py::dict task_columns(py::handle owner, const EventGraph& graph) {
  const std::size_t n = graph.task_count();
  py::dict c;
  c["device"] = id_view(owner, graph.devices());
  c["lane"] = id_view(owner, graph.lanes_of_tasks());
  c["kind"] = view(owner, graph.kinds().data(), n, "uint8");
  c["microbatch"] = view(owner, graph.microbatches().data(), n, "uint32");
  c["chunk"] = view(owner, graph.chunks().data(), n, "uint32");
  c["stage"] = id_view(owner, graph.stages());
  return c;
}

}  // namespace perflow::python
