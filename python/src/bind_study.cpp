// Configs as the CLI reads them: perflow.Config (load_config), its graph and simulation,
// and the report and summary `perflow simulate` writes; the schedule list.
#include <pybind11/stl.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "perflow/core/json_cursor.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/study/config_overrides.hpp"

namespace perflow::python {
namespace {

// The schedule's rules on the config's sizes (each part's schedule's, with /parts), which
// `perflow simulate` meets only when it plans. A spec a rule refuses is built, to raise the
// ConfigError simulate would raise, at the field and with the planner's words: planning
// refuses it as it starts, before anything is allocated per task (and were planning to
// accept it after all, so would simulate, and so does this).
void check_schedules(const study::Config& config) {
  std::vector<parallel::PipelineSpec> specs;
  if (config.parts.empty()) specs.push_back(config.pipeline);
  for (const study::PartSpec& part : config.parts) {
    specs.push_back(config.pipeline);
    specs.back().schedule = part.schedule;
  }
  for (const parallel::PipelineSpec& spec : specs) {
    const parallel::ScheduleInfo* info = parallel::builtin_schedules().find(spec.schedule);
    if (info != nullptr && info->check(spec).has_value()) {
      (void)study::build_graph(config);
      return;
    }
  }
}

// A config from JSON text (`file` names it in messages) or from a path, with `overrides`
// ("POINTER=VALUE", as `--set` takes them) applied first, checked as a whole (above).
ConfigPtr load(const std::string& text, const std::string& file, bool is_path,
               const std::vector<std::string>& overrides) {
  std::vector<study::ConfigOverride> parsed;
  for (const std::string& o : overrides) {
    parsed.push_back(study::parse_override(o));
    parsed.back().origin = "the override";
  }
  auto config = std::make_shared<study::Config>(
      is_path ? study::load_config(text, parsed)
              : study::parse_config(parse_json_text(text, file), file, parsed));
  check_schedules(*config);
  return config;
}

// Builds and simulates a config: what `perflow simulate` does before it writes anything.
Run run_of(const ConfigPtr& config) {
  Run run;
  run.config = config;
  run.graph = std::make_shared<EventGraph>(study::build_graph(*config));
  run.result = study::simulate(*config, *run.graph);
  return run;
}

}  // namespace

void bind_study(py::module_& m) {
  const auto released = py::call_guard<py::gil_scoped_release>();

  py::class_<study::Config, ConfigPtr>(m, "Config",
                                       "A checked config, as `perflow simulate` reads it "
                                       "(perflow.load_config makes one)")
      .def_property_readonly("file", [](const study::Config& c) { return path_text(c.file); })
      .def_property_readonly("description", [](const study::Config& c) { return c.description; })
      .def_property_readonly("schedule", [](const study::Config& c) { return c.pipeline.schedule; })
      .def_property_readonly("stages", [](const study::Config& c) { return c.pipeline.stages; })
      .def_property_readonly("microbatches",
                             [](const study::Config& c) { return c.pipeline.microbatches; })
      .def_property_readonly("chunks", [](const study::Config& c) { return c.pipeline.chunks; })
      .def(
          "graph",
          [](const ConfigPtr& c) -> GraphPtr {
            return std::make_shared<EventGraph>(study::build_graph(*c));
          },
          released, "The config's task graph (pipeline, parallelism, iterations), not simulated")
      .def("simulate", &run_of, released,
           "Builds and simulates the config: a Run with its report, summary and timeline")
      .def("__repr__", [](const study::Config& c) {
        return shown_text("<perflow.Config " + c.pipeline.schedule +
                          " p=" + std::to_string(c.pipeline.stages) +
                          " m=" + std::to_string(c.pipeline.microbatches) +
                          " v=" + std::to_string(c.pipeline.chunks) +
                          (c.file.empty() ? "" : " from " + c.file) + ">");
      });

  m.def("_load_config", &load, py::arg("text"), py::arg("file"), py::arg("is_path"),
        py::arg("overrides"), released,
        "A Config from JSON text (named `file` in messages) or a path, with overrides");
  m.def(
      "schedules",
      [] {
        py::list out;
        for (const auto& s : parallel::builtin_schedules().all()) {
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

}  // namespace perflow::python
