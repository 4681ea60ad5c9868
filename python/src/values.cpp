// Python values into the library's: text, paths, durations and sizes with units, and NumPy
// views.
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

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

std::string text_of(py::handle value, const char* what) {
  if (PyUnicode_Check(value.ptr()) == 0) {
    throw py::type_error(std::string(what) + ": expected a str, found " + type_name(value));
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (data != nullptr) return std::string(data, static_cast<std::size_t>(size));
  PyErr_Clear();  // a UnicodeEncodeError: a lone surrogate, named below
  const Py_ssize_t length = PyUnicode_GetLength(value.ptr());
  Py_ssize_t at = 0;
  Py_UCS4 c = 0;
  for (; at < length; ++at) {
    c = PyUnicode_ReadChar(value.ptr(), at);
    if (c >= 0xD800 && c <= 0xDFFF) break;
  }
  throw py::value_error(fmt::format(
      "{}: not valid text: a lone surrogate \\u{:04x} at index {} (what os.fsdecode makes of a "
      "byte that is not UTF-8: a path may hold one, text may not)",
      what, static_cast<std::uint32_t>(c), at));
}

std::string path_bytes_of(py::handle value, const char* what) {
  const auto fspath = py::reinterpret_steal<py::object>(PyOS_FSPath(value.ptr()));
  if (!fspath) {
    if (PyErr_ExceptionMatches(PyExc_TypeError) == 0) throw py::error_already_set();
    PyErr_Clear();
    throw py::type_error(std::string(what) +
                         ": expected a path (str, bytes or os.PathLike), found " +
                         type_name(value));
  }
  py::object bytes = fspath;
  if (PyUnicode_Check(fspath.ptr()) != 0) {
    // os.fsencode: the file system encoding, surrogates back to the bytes they stand for.
    bytes = py::reinterpret_steal<py::object>(PyUnicode_EncodeFSDefault(fspath.ptr()));
    if (!bytes) {
      PyErr_Clear();
      throw py::value_error(std::string(what) + ": " + std::string(py::repr(fspath)) +
                            " cannot be a file name: it holds a character the file system's "
                            "encoding cannot write");
    }
  }
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(bytes.ptr(), &data, &size) != 0) throw py::error_already_set();
  std::string path(data, static_cast<std::size_t>(size));
  if (path.empty()) throw py::value_error(std::string(what) + ": expected a path, found ''");
  if (path.find('\0') != std::string::npos) {
    throw py::value_error(std::string(what) + ": " + std::string(py::repr(fspath)) +
                          " holds a NUL character, which no path can (the file name would "
                          "end there)");
  }
  return path;
}

py::str shown_text(const std::string& bytes) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(
      bytes.data(), static_cast<py::ssize_t>(bytes.size()), "backslashreplace"));
}

py::str path_text(const std::string& bytes) {
  const auto decoded = py::reinterpret_steal<py::str>(
      PyUnicode_DecodeFSDefaultAndSize(bytes.data(), static_cast<py::ssize_t>(bytes.size())));
  if (!decoded) throw py::error_already_set();
  return decoded;
}

void require_numpy() {
  static std::atomic<bool> ready{false};
  if (ready.load(std::memory_order_acquire)) return;
  static std::mutex mutex;
  std::string failure;
  {
    // Wait for another thread's import without the GIL, which that import needs.
    const py::gil_scoped_release released;
    const std::lock_guard<std::mutex> lock(mutex);
    if (ready.load(std::memory_order_acquire)) return;
    const py::gil_scoped_acquire held;
    try {
      py::module_::import("numpy");
      (void)py::detail::npy_api::get();  // its static, entered once, here
      ready.store(true, std::memory_order_release);
    } catch (py::error_already_set& e) {
      failure = e.what();
    }
  }
  if (!failure.empty()) {
    throw py::import_error(
        "perflow's columns are NumPy arrays, and NumPy cannot be imported "
        "(Debian: python3-numpy): " +
        failure);
  }
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
    const std::string text = text_of(value, what);
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
    const std::string text = text_of(value, what);
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
  require_numpy();
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
