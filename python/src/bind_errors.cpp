// PerFlow's errors as Python exceptions: the same message (file, JSON pointer, what was
// expected and found), a class per kind under perflow.Error, each also a standard Python
// exception (a bad value is a ValueError, an unknown name a LookupError, a failed write an
// OSError), and the structured parts as attributes.
#include <pybind11/stl.h>

#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/option_error.hpp"
#include "perflow/reader/profile_error.hpp"

namespace perflow::python {
namespace {

// One exception class, perflow.<name>, deriving from `bases` (a class or a tuple). The
// handle keeps a reference for the life of the process: a static py::object would be
// released after the interpreter has gone.
py::handle new_class(py::module_& m, const char* name, py::handle bases, const char* doc) {
  const std::string qualified = std::string("perflow.") + name;
  py::dict attributes;
  attributes["__doc__"] = doc;
  py::object cls = py::reinterpret_steal<py::object>(
      PyErr_NewException(qualified.c_str(), bases.ptr(), attributes.ptr()));
  if (!cls) throw py::error_already_set();
  m.attr(name) = cls;
  return cls.release();
}

// Text from C++ as a Python str: messages may quote input bytes that are not UTF-8 (a
// Latin-1 config, a path), which must not turn the error into a UnicodeDecodeError.
py::str text(const std::string& bytes) { return shown_text(bytes); }

// Raises an instance of `cls` with `message` and the given attributes.
void raise(py::handle cls, const char* message, const py::dict& attributes = {}) {
  py::object instance = cls(text(message));
  for (const auto& [key, value] : attributes) instance.attr(key) = value;
  PyErr_SetObject(cls.ptr(), instance.ptr());
}

}  // namespace

void bind_errors(py::module_& m) {
  static py::handle error, config_error, schedule_error, cycle_error, unknown_name_error,
      format_error, profile_error, resource_error, io_error, option_error;
  error = new_class(m, "Error", PyExc_RuntimeError, "Base of every error PerFlow reports.");
  const auto with = [](py::handle base, PyObject* standard) {
    return py::make_tuple(base, py::handle(standard));
  };
  config_error = new_class(m, "ConfigError", with(error, PyExc_ValueError),
                           "A config value is wrong; .file and .pointer say where.");
  schedule_error = new_class(m, "ScheduleError", with(error, PyExc_ValueError),
                             "A schedule refuses the sizes; .field names the setting at fault.");
  cycle_error = new_class(m, "CycleError", with(error, PyExc_ValueError),
                          "The graph deadlocks; .cycle lists tasks on the cycle.");
  unknown_name_error = new_class(m, "UnknownNameError", with(error, PyExc_LookupError),
                                 "A name (schedule, format, preset) is not known.");
  format_error = new_class(m, "FormatError", with(error, PyExc_ValueError),
                           "Text PerFlow reads back is malformed; .source and .line say where.");
  profile_error = new_class(m, "ProfileError", with(error, PyExc_ValueError),
                            "A profile is damaged; .file and .location say where.");
  resource_error = new_class(m, "ResourceError", with(error, PyExc_MemoryError),
                             "A run refused before it allocates more memory than it may.");
  io_error = new_class(m, "IoError", with(error, PyExc_OSError), "A file could not be written.");
  option_error = new_class(m, "OptionError", with(error, PyExc_ValueError),
                           "A keyword argument's value is wrong; .field names it.");

  // Local: other pybind11 modules in the process keep their own translations.
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      py::dict at;
      at["file"] = text(e.file());
      at["pointer"] = text(e.pointer());
      raise(config_error, e.what(), at);
    } catch (const ScheduleError& e) {
      py::dict at;
      at["field"] = text(e.field());
      raise(schedule_error, e.what(), at);
    } catch (const CycleError& e) {
      py::dict at;
      py::list cycle;
      for (const std::string& task : e.cycle()) cycle.append(text(task));
      at["cycle"] = cycle;
      raise(cycle_error, e.what(), at);
    } catch (const UnknownNameError& e) {
      raise(unknown_name_error, e.what());
    } catch (const FormatError& e) {
      py::dict at;
      at["source"] = text(e.source());
      at["line"] = e.line();
      raise(format_error, e.what(), at);
    } catch (const reader::ProfileError& e) {
      py::dict at;
      at["file"] = text(e.file());
      at["location"] = text(e.location());
      raise(profile_error, e.what(), at);
    } catch (const ResourceError& e) {
      raise(resource_error, e.what());
    } catch (const IoError& e) {
      raise(io_error, e.what());
    } catch (const OptionError& e) {
      // Fields as keyword arguments: `stages`, `rank_stage='0-1'`.
      const std::string message = e.worded([](const OptionError::Piece& field) {
        return field.value.empty() ? field.text : field.text + "=" + field.value;
      });
      py::dict at;
      at["field"] = text(e.field());
      raise(option_error, message.c_str(), at);
    } catch (const Error& e) {
      raise(error, e.what());
    } catch (const nlohmann::json::exception& e) {
      // JSON text that does not parse (a config given as a string).
      py::dict at;
      at["file"] = "";
      at["pointer"] = "";
      raise(config_error, e.what(), at);
    }
  });
}

}  // namespace perflow::python
