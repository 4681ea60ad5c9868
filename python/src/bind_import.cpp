// Configs from the launch settings a run already has: perflow.import_megatron and
// perflow.import_torchtitan (perflow/__init__.py wraps these), as `perflow import` writes them.
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "perflow/study/launch_import.hpp"

namespace perflow::python {
namespace {

using Imported = std::tuple<std::string, std::vector<std::string>, std::vector<std::string>>;

study::ImportOptions options_of(const std::string& gpu, std::optional<std::uint32_t> nodes,
                                std::optional<std::uint32_t> gpus_per_node,
                                std::optional<std::uint32_t> vocab) {
  return {.gpu = gpu, .nodes = nodes, .gpus_per_node = gpus_per_node, .vocab = vocab};
}

// The config as JSON text (its keys in the CLI's order; json.loads keeps it), the flags not
// recognised and the warnings.
Imported imported(const study::ImportResult& result) {
  return {result.config.dump(), result.unknown, result.warnings};
}

}  // namespace

void bind_import(py::module_& m) {
  m.def(
      "_import_megatron",
      [](const std::vector<std::string>& args, const std::string& gpu,
         std::optional<std::uint32_t> nodes, std::optional<std::uint32_t> gpus_per_node,
         std::optional<std::uint32_t> vocab, const std::string& source) {
        return imported(
            study::import_megatron(args, options_of(gpu, nodes, gpus_per_node, vocab), source));
      },
      py::arg("args"), py::arg("gpu"), py::arg("nodes"), py::arg("gpus_per_node"), py::arg("vocab"),
      py::arg("source"), "(config JSON, unknown flags, warnings) from Megatron-LM flags");
  m.def(
      "_read_args_file",
      [](const py::object& path) { return study::read_args_file(path_of(path, "args_file")); },
      py::arg("path"), "The words of a file of flags, split as a shell splits them");
  m.def(
      "_import_torchtitan",
      [](const py::object& path, const std::string& gpu, std::optional<std::uint32_t> nodes,
         std::optional<std::uint32_t> gpus_per_node) {
        return imported(study::import_torchtitan(path_of(path, "job"),
                                                 options_of(gpu, nodes, gpus_per_node, {})));
      },
      py::arg("job"), py::arg("gpu"), py::arg("nodes"), py::arg("gpus_per_node"),
      "(config JSON, unknown keys, warnings) from a torchtitan job file");
}

}  // namespace perflow::python
