// Simulations from Python: perflow.Run (a graph simulated ordered or greedy, or a config
// simulated as `perflow simulate` does), its metrics, the trace as zero-copy NumPy columns,
// and its pictures: the timeline (SVG, PNG, PDF; inline in a notebook) and the Chrome trace.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/task_table.hpp"
#include "perflow/core/units.hpp"
#include "perflow/simulator/options.hpp"
#include "perflow/study/device_display.hpp"
#include "perflow/study/report.hpp"
#include "perflow/study/summary.hpp"
#include "perflow/visualizer/chrome_trace.hpp"
#include "perflow/visualizer/timeline.hpp"

namespace perflow::python {
namespace {

using simulator::Link;
using simulator::SimulationOptions;

Run simulate_graph(const GraphPtr& graph, const py::object& mode_name,
                   const py::object& p2p_latency, std::uint32_t devices_per_node,
                   const Link& intra_node, const Link& inter_node,
                   const std::vector<double>& boundary_bytes) {
  SimulationOptions options;
  const std::string mode = text_of(mode_name, "mode");
  const std::optional<simulator::SimulationMode> parsed = simulator::parse_simulation_mode(mode);
  if (!parsed) {
    throw UnknownNameError("simulate: unknown mode '" + mode + "'; the modes are ordered, greedy");
  }
  options.mode = *parsed;
  options.p2p_latency = duration_of(p2p_latency, "p2p_latency");
  options.devices_per_node = devices_per_node;
  options.intra_node = intra_node;
  options.inter_node = inter_node;
  options.boundary_bytes = boundary_bytes;
  py::gil_scoped_release release;
  Run run;
  run.graph = graph;
  run.result = simulator::simulate(*graph, options);
  return run;
}

// How to draw a run: the keyword arguments of to_svg / to_png / save. Unset ones take what
// the CLI shows for a config's run (its title, sizes, GPU types and memory), else nothing.
struct Style {
  std::optional<std::string> title;
  std::optional<std::string> subtitle;
  std::optional<std::vector<std::string>> device_labels;
  bool memory_chart = false;
  bool critical_path = false;
  bool arrows = false;
  double width = 1600;
};

// An optional text argument (None: not given).
std::optional<std::string> optional_text(const py::object& value, const char* what) {
  if (value.is_none()) return std::nullopt;
  return text_of(value, what);
}

// An optional list of text (device_labels; None: not given).
std::optional<std::vector<std::string>> optional_texts(const py::object& value, const char* what) {
  if (value.is_none()) return std::nullopt;
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value)) {
    throw py::type_error(std::string(what) + ": expected a list of str, found " + type_name(value));
  }
  std::vector<std::string> texts;
  for (const py::handle item : value) texts.push_back(text_of(item, what));
  return texts;
}

// The Style of the drawing methods' keyword arguments.
Style style_of(const py::object& title, const py::object& subtitle, const py::object& device_labels,
               bool memory_chart, bool critical_path, bool arrows, double width) {
  return Style{optional_text(title, "title"),
               optional_text(subtitle, "subtitle"),
               optional_texts(device_labels, "device_labels"),
               memory_chart,
               critical_path,
               arrows,
               width};
}

visualizer::TimelineOptions timeline_options(const Run& run, const Style& style) {
  visualizer::TimelineOptions options;
  if (run.config) {
    const study::RunDisplay shown = study::run_display(*run.config, *run.graph);
    options.title = shown.title;
    options.subtitle = shown.subtitle;
    options.device_labels = shown.devices.labels;
    options.static_memory = shown.devices.static_memory;
    options.memory_capacity = shown.devices.capacity;
  }
  if (style.title) options.title = *style.title;
  if (style.subtitle) options.subtitle = *style.subtitle;
  if (style.device_labels) options.device_labels = *style.device_labels;
  options.memory_chart = style.memory_chart;
  options.critical_path = style.critical_path;
  options.dependency_arrows = style.arrows;
  if (!(style.width >= 100 && style.width <= 100000)) {
    throw py::value_error("width: expected points in [100, 100000], found " +
                          std::to_string(style.width));
  }
  options.width = style.width;
  return options;
}

std::string render(const Run& run, const Style& style, visualizer::ImageFormat format) {
  const visualizer::TimelineOptions options = timeline_options(run, style);
  py::gil_scoped_release release;
  return visualizer::render_timeline(*run.graph, run.result.trace, run.result.metrics, options,
                                     format);
}

const study::Config& config_of(const Run& run, const char* what) {
  if (!run.config) {
    throw py::value_error(std::string(what) +
                          ": this run simulated a graph; the report and summary need a config "
                          "(perflow.load_config(...).simulate())");
  }
  return *run.config;
}

// The --report text of a config's run, rendered without the GIL.
std::string report_text(const Run& run, const char* what) {
  const study::Config& config = config_of(run, what);
  py::gil_scoped_release release;
  return study::render_report(config, *run.graph, run.result);
}

py::dict metrics_of(const simulator::Metrics& metrics) {
  py::dict out;
  out["makespan"] = metrics.makespan;
  out["total_work"] = metrics.total_work;
  out["bubble_ratio"] = metrics.bubble_ratio;
  out["dependency_bound"] = metrics.dependency_bound;
  out["iteration_time"] = metrics.iteration_time;
  out["iteration_finish"] = metrics.iteration_finish;
  std::vector<std::uint32_t> path;
  path.reserve(metrics.critical_path.size());
  for (const TaskId t : metrics.critical_path) path.push_back(t.value);
  out["critical_path"] = path;
  py::list devices;
  for (const simulator::DeviceMetrics& d : metrics.devices) {
    py::dict device;
    device["device"] = d.device.value;
    device["tasks"] = d.tasks;
    device["busy"] = d.busy;
    device["blocked"] = d.blocked;
    device["communication"] = d.communication;
    device["recompute"] = d.recompute;
    device["host_copy"] = d.host_copy;
    device["first_start"] = d.first_start;
    device["last_finish"] = d.last_finish;
    device["bubble_ratio"] = d.bubble_ratio;
    device["peak_memory"] = d.peak_memory;
    devices.append(device);
  }
  out["devices"] = devices;
  return out;
}

// Adds the drawing methods; each takes the Style's keyword arguments.
template <typename Class, typename Fn>
void def_drawing(Class& cls, const char* name, Fn fn, const char* doc) {
  cls.def(
      name,
      [fn](const Run& run, const py::object& title, const py::object& subtitle,
           const py::object& device_labels, bool memory_chart, bool critical_path, bool arrows,
           double width) {
        return fn(run, style_of(title, subtitle, device_labels, memory_chart, critical_path, arrows,
                                width));
      },
      py::kw_only(), py::arg("title") = py::none(), py::arg("subtitle") = py::none(),
      py::arg("device_labels") = py::none(), py::arg("memory_chart") = false,
      py::arg("critical_path") = false, py::arg("arrows") = false, py::arg("width") = 1600.0, doc);
}

}  // namespace

void bind_run(py::module_& m) {
  py::class_<Link>(m, "Link", "A link class: latency plus bytes over bandwidth")
      .def(py::init([](const py::object& latency, const py::object& bandwidth) {
             Link link;
             link.latency = duration_of(latency, "latency");
             if (py::isinstance<py::str>(bandwidth)) {
               const std::string text = text_of(bandwidth, "bandwidth");
               try {
                 link.bandwidth = parse_bandwidth(text);
               } catch (const std::invalid_argument& e) {
                 throw py::value_error("bandwidth: '" + text + "': " + e.what());
               }
             } else {
               link.bandwidth = number_of(bandwidth, "bandwidth");
             }
             if (!(link.bandwidth >= 0 && link.bandwidth <= 1e18)) {
               throw py::value_error(
                   "bandwidth: expected bytes per second from 0 (unlimited) to 1e18");
             }
             return link;
           }),
           py::arg("latency") = 0, py::arg("bandwidth") = 0.0)
      .def_readonly("latency", &Link::latency, "ns")
      .def_readonly("bandwidth", &Link::bandwidth, "bytes per second; 0: unlimited")
      .def("__repr__", [](const Link& l) {
        return "Link(latency=" + std::to_string(l.latency) +
               ", bandwidth=" + std::string(py::repr(py::float_(l.bandwidth))) + ")";
      });

  py::class_<Run> run(m, "Run", "A simulated run: its graph, trace and metrics");
  run.def_property_readonly("graph", [](const Run& r) { return r.graph; })
      .def_property_readonly(
          "makespan", [](const Run& r) { return r.result.metrics.makespan; }, "ns")
      .def_property_readonly("bubble_ratio",
                             [](const Run& r) { return r.result.metrics.bubble_ratio; })
      .def_property_readonly(
          "metrics", [](const Run& r) { return metrics_of(r.result.metrics); },
          "makespan, bubble ratio, critical path, per-device busy time and peak memory (ns)")
      .def_property_readonly(
          "config", [](const Run& r) { return r.config; },
          "The Config it came from, or None for a graph simulated directly")
      .def(
          "columns",
          [](const py::object& self) {
            const auto& r = self.cast<const Run&>();
            const std::size_t n = r.graph->task_count();
            py::dict c = task_columns(self, *r.graph);
            c["start"] = view(self, r.result.trace.start.data(), n, "int64");
            c["end"] = view(self, r.result.trace.finish.data(), n, "int64");
            return c;
          },
          "The trace as read-only NumPy columns over the run's own memory (no copy), one row "
          "per task: device, lane, kind (an index into perflow.KINDS), microbatch, chunk, "
          "stage, start, end (ns). pandas.DataFrame(run.columns()) is a table of it")
      .def(
          "table",
          [](const Run& r) {
            // The CLI's --trace table, read back: the same names and the same empty fields.
            const std::vector<TaskTableRow> rows = parse_task_table(
                render_task_table(*r.graph, r.result.trace, TaskTableFormat::Jsonl),
                TaskTableFormat::Jsonl, "the run's task table");
            const auto optional = [](const std::optional<std::uint32_t>& v) {
              return v ? py::object(py::int_(*v)) : py::object(py::none());
            };
            py::list device, lane, kind, microbatch, chunk, stage, iteration, start, end;
            for (const TaskTableRow& row : rows) {
              device.append(row.device);
              lane.append(row.lane);
              kind.append(std::string(to_string(row.kind)));
              microbatch.append(optional(row.microbatch));
              chunk.append(optional(row.chunk));
              stage.append(optional(row.stage));
              iteration.append(row.iteration);
              start.append(row.start_ns);
              end.append(row.end_ns);
            }
            py::dict table;
            const py::list columns[] = {device, lane,      kind,  microbatch, chunk,
                                        stage,  iteration, start, end};
            for (std::size_t i = 0; i < kTaskTableColumns.size(); ++i) {
              table[py::str(std::string(kTaskTableColumns[i]))] = columns[i];
            }
            return table;
          },
          "The --trace table as a dict of columns (lists), one row per task in the CLI's "
          "order: device, lane, kind (F, B, W, ... by name), microbatch, chunk, stage (None "
          "where the kind has none, as the CLI leaves them empty), iteration, start_ns, end_ns")
      .def(
          "to_pandas",
          [](const py::object& self) {
            py::module_ pandas;
            try {
              pandas = py::module_::import("pandas");
            } catch (const py::error_already_set& e) {
              if (!e.matches(PyExc_ImportError)) throw;
              throw py::import_error(
                  "Run.to_pandas needs pandas (Debian: python3-pandas); Run.table() gives the "
                  "same columns as lists");
            }
            return pandas.attr("DataFrame")(self.attr("table")());
          },
          "Run.table() as a pandas.DataFrame (needs pandas)")
      .def(
          "report_json", [](const Run& r) { return report_text(r, "report_json"); },
          "The --report JSON text, byte for byte what `perflow simulate --report` writes")
      .def(
          "report",
          [](const Run& r) {
            return py::module_::import("json").attr("loads")(report_text(r, "report"));
          },
          "The --report document as Python objects")
      .def(
          "summary",
          [](const Run& r) {
            const study::Config& config = config_of(r, "summary");
            py::gil_scoped_release release;
            return study::format_summary(config, *r.graph, r.result);
          },
          "The text summary `perflow simulate` prints")
      .def(
          "chrome_trace",
          [](const Run& r, const py::object& device_labels) {
            visualizer::ChromeTraceOptions options;
            if (r.config) {
              options.device_labels =
                  study::device_display(*r.config, r.graph->device_count()).labels;
            }
            if (auto labels = optional_texts(device_labels, "device_labels")) {
              options.device_labels = std::move(*labels);
            }
            py::gil_scoped_release release;
            return visualizer::render_chrome_trace(*r.graph, r.result.trace, options);
          },
          py::kw_only(), py::arg("device_labels") = py::none(),
          "The trace as Chrome trace event JSON (Perfetto, chrome://tracing), as "
          "`perflow simulate --chrome-trace` writes it");
  def_drawing(
      run, "to_svg",
      [](const Run& r, const Style& s) { return render(r, s, visualizer::ImageFormat::Svg); },
      "The timeline as SVG text (for a config's run, the CLI's --timeline picture)");
  def_drawing(
      run, "_repr_svg_",
      [](const Run& r, const Style& s) { return render(r, s, visualizer::ImageFormat::Svg); },
      "The timeline shown inline in a notebook");
  def_drawing(
      run, "to_png",
      [](const Run& r, const Style& s) {
        return py::bytes(render(r, s, visualizer::ImageFormat::Png));
      },
      "The timeline as PNG bytes");
  run.def(
      "save",
      [](const Run& r, const py::object& path, const py::object& title, const py::object& subtitle,
         const py::object& device_labels, bool memory_chart, bool critical_path, bool arrows,
         double width) {
        const std::filesystem::path file = path_of(path, "path");
        const visualizer::TimelineOptions options = timeline_options(
            r,
            style_of(title, subtitle, device_labels, memory_chart, critical_path, arrows, width));
        py::gil_scoped_release release;
        visualizer::write_timeline(file, *r.graph, r.result.trace, r.result.metrics, options);
      },
      py::arg("path"), py::kw_only(), py::arg("title") = py::none(),
      py::arg("subtitle") = py::none(), py::arg("device_labels") = py::none(),
      py::arg("memory_chart") = false, py::arg("critical_path") = false, py::arg("arrows") = false,
      py::arg("width") = 1600.0,
      "Writes the timeline; the extension picks the format (.svg, .png, .pdf); atomic");
  run.def("__repr__", [](const Run& r) {
    return "<perflow.Run " + std::to_string(r.graph->task_count()) + " tasks, makespan " +
           format_duration(r.result.metrics.makespan) + ">";
  });

  m.def("simulate_graph", &simulate_graph, py::arg("graph").none(false), py::kw_only(),
        py::arg("mode") = "ordered", py::arg("p2p_latency") = 0, py::arg("devices_per_node") = 0,
        py::arg("intra_node") = Link{}, py::arg("inter_node") = Link{},
        py::arg("boundary_bytes") = std::vector<double>{},
        "Simulates a graph: 'ordered' runs each device's program in order, 'greedy' starts "
        "the ready task of highest priority (the prototype's simulator); a Run");
  auto graph = py::reinterpret_borrow<py::class_<EventGraph, GraphPtr>>(m.attr("Graph"));
  graph.def("simulate", &simulate_graph, py::kw_only(), py::arg("mode") = "ordered",
            py::arg("p2p_latency") = 0, py::arg("devices_per_node") = 0,
            py::arg("intra_node") = Link{}, py::arg("inter_node") = Link{},
            py::arg("boundary_bytes") = std::vector<double>{}, "perflow.simulate_graph");
}

}  // namespace perflow::python
