// Python values into the library's: durations and sizes with units, and NumPy views.
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "perflow/core/units.hpp"

namespace perflow::python {

TimeNs duration_of(py::handle value, const char* what) {
  if (py::isinstance<py::bool_>(value)) {
    throw py::type_error(std::string(what) + ": expected a duration, found a bool");
  }
  if (py::isinstance<py::int_>(value)) {
    const auto ns = value.cast<long long>();
    if (ns < 0) {
      throw py::value_error(std::string(what) + ": expected a duration >= 0 ns, found " +
                            std::to_string(ns));
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
                       std::string(py::str(py::type::of(value).attr("__name__"))));
}

double bytes_of(py::handle value, const char* what) {
  if (py::isinstance<py::bool_>(value)) {
    throw py::type_error(std::string(what) + ": expected a size, found a bool");
  }
  if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) {
    return value.cast<double>();
  }
  if (py::isinstance<py::str>(value)) {
    const auto text = value.cast<std::string>();
    try {
      return parse_bytes(text);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(std::string(what) + ": '" + text + "': " + e.what());
    }
  }
  throw py::type_error(std::string(what) +
                       ": expected a size, a number or a str with a unit ('1.5GB'), found " +
                       std::string(py::str(py::type::of(value).attr("__name__"))));
}

py::array view(py::handle owner, const void* data, std::size_t n, const char* dtype) {
  py::array array(py::dtype(dtype), std::vector<py::ssize_t>{static_cast<py::ssize_t>(n)}, {}, data,
                  owner);
  // A base that is not an array leaves the view writeable: these are the library's.
  array.attr("flags").attr("writeable") = false;
  return array;
}

}  // namespace perflow::python
