// What the CLI's analysis commands compute, as objects: `perflow explain` (Explanation),
// `calibrate` (Calibration), `compare-measured` (MeasuredComparison, with its picture) and
// `plot` (Plot, a chart of sweep results). Each calls the library function the command
// calls and keeps the typed result; `.text` is what the command prints.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "perflow/core/atomic_file.hpp"
#include "perflow/explore/csv_table.hpp"
#include "perflow/reader/compare_measured.hpp"
#include "perflow/study/calibrate.hpp"
#include "perflow/study/explain.hpp"
#include "perflow/visualizer/chart.hpp"
#include "perflow/visualizer/comparison.hpp"
#include "perflow/visualizer/image_format.hpp"

namespace perflow::python {
namespace {

py::object json_loads(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

// `perflow explain CONFIG`'s text.
struct Explanation {
  std::string text;
};

// `perflow compare-measured`: the predicted run (for the picture) and the comparison.
struct Comparison {
  GraphPtr graph;
  simulator::SimulationResult predicted;
  reader::MeasuredComparison comparison;
};

Comparison compare(const ConfigPtr& config, const std::vector<std::string>& profiles,
                   const std::string& preset, const std::string& pattern,
                   const std::vector<std::string>& rank_stage) {
  Comparison out;
  out.graph = std::make_shared<EventGraph>(study::build_graph(*config));
  out.predicted = study::simulate(*config, *out.graph);
  out.comparison = reader::compare_measured(*config, *out.graph, out.predicted,
                                            {profiles, preset, pattern, rank_stage});
  return out;
}

// Both timelines, predicted above measured, as `--timeline FILE` draws them.
std::string comparison_picture(const Comparison& c, visualizer::ImageFormat format) {
  const reader::MeasuredComparison& r = c.comparison;
  const std::vector<visualizer::ComparedRun> runs = {
      {r.predicted_title, r.predicted_subtitle, *c.graph, c.predicted.trace, c.predicted.metrics},
      {r.measured_title, r.measured_subtitle, r.timeline.graph, r.timeline.trace, r.measured,
       r.timeline.device_labels},
  };
  visualizer::ComparisonOptions drawing;
  drawing.title = "Predicted vs measured";
  drawing.mark_best = false;
  drawing.memory_bars = false;
  return visualizer::render_comparison(runs, drawing, format);
}

py::object optional_ns(const std::optional<TimeNs>& t) {
  return t ? py::object(py::int_(*t)) : py::object(py::none());
}

// `perflow plot`'s chart of a CSV of sweep results.
visualizer::ChartData plot(const std::filesystem::path& results, const std::string& x,
                           const std::string& y, const std::string& by) {
  const explore::CsvTable table = explore::read_csv_table(results);
  return visualizer::plot_chart({table.file, table.columns, table.rows}, {x, y, by});
}

}  // namespace

void bind_analysis(py::module_& m) {
  const auto released = py::call_guard<py::gil_scoped_release>();

  py::class_<Explanation>(m, "Explanation",
                          "How /model's costs were derived (perflow.explain): .text is what "
                          "`perflow explain CONFIG` prints")
      .def_readonly("text", &Explanation::text)
      .def("__str__", [](const Explanation& e) { return e.text; })
      .def("__repr__", [](const Explanation& e) {
        return "<perflow.Explanation " + e.text.substr(0, e.text.find('\n')) + ">";
      });
  m.def(
      "_explain", [](const ConfigPtr& config) { return Explanation{study::explain(*config)}; },
      py::arg("config").none(false), released, "perflow.explain of a Config");

  py::class_<study::GemmFit>(m, "GemmFit", "One GPU type's GEMM efficiency fitted")
      .def_readonly("device_type", &study::GemmFit::device_type)
      .def_readonly("observations", &study::GemmFit::observations,
                    "durations compared: F, and B + W, per stage and chunk")
      .def_readonly("gemm_efficiency_before", &study::GemmFit::gemm_efficiency_before)
      .def_readonly("gemm_efficiency", &study::GemmFit::gemm_efficiency,
                    "the fit, rounded to 3 decimals")
      .def_readonly("mean_error_before", &study::GemmFit::mean_error_before,
                    "mean |model - measured| / measured, a fraction")
      .def_readonly("mean_error_after", &study::GemmFit::mean_error_after)
      .def("__repr__", [](const study::GemmFit& f) {
        return "<perflow.GemmFit " + f.device_type + " " +
               std::string(py::repr(py::float_(f.gemm_efficiency_before))) + " -> " +
               std::string(py::repr(py::float_(f.gemm_efficiency))) + ">";
      });
  py::class_<study::Calibration>(m, "Calibration",
                                 "GEMM efficiencies fitted to measured costs "
                                 "(perflow.calibrate): .device_types, .text, .json()")
      .def_readonly("device_types", &study::Calibration::device_types)
      .def_property_readonly("config_file",
                             [](const study::Calibration& c) { return path_text(c.config_file); })
      .def_property_readonly("measured_file",
                             [](const study::Calibration& c) { return path_text(c.measured_file); })
      .def_property_readonly("text", &study::calibration_text,
                             "What `perflow calibrate CONFIG MEASURED` prints")
      .def(
          "json",
          [](const study::Calibration& c) { return json_loads(study::calibration_json(c)); },
          "The `--format json` document as Python objects")
      .def("__str__", &study::calibration_text)
      .def("__repr__", [](const study::Calibration& c) {
        return "<perflow.Calibration " + std::to_string(c.device_types.size()) + " device type(s)>";
      });
  m.def("_calibrate", &study::calibrate, py::arg("config").none(false),
        py::arg("measured").none(false), released, "perflow.calibrate of two Configs");

  py::class_<Comparison>(m, "MeasuredComparison",
                         "A config's predicted step against profiles (perflow.compare_measured)")
      .def_property_readonly("predicted_step_ns",
                             [](const Comparison& c) { return c.comparison.predicted_step; })
      .def_property_readonly(
          "measured_step_ns", [](const Comparison& c) { return c.comparison.measured_step; },
          "the lower median over the steady iterations (F/B/W work only)")
      .def_property_readonly("steady_iterations",
                             [](const Comparison& c) { return c.comparison.steady; })
      .def_property_readonly(
          "markers", [](const Comparison& c) { return c.comparison.measurement.costs.marker; })
      .def_property_readonly(
          "marker_choice",
          [](const Comparison& c) { return c.comparison.measurement.marker_choice; })
      .def_property_readonly(
          "stages",
          [](const Comparison& c) {
            py::list out;
            for (const reader::StageComparison& s : c.comparison.stages) {
              py::dict stage;
              stage["stage"] = s.stage;
              stage["predicted_busy_ns"] = optional_ns(s.predicted_busy);
              stage["measured_busy_ns"] = optional_ns(s.measured_busy);
              stage["predicted_idle_ns"] = optional_ns(s.predicted_idle);
              out.append(stage);
            }
            return out;
          },
          "Per stage: busy time per iteration predicted and measured, predicted idle (ns; "
          "None where there is none)")
      .def_property_readonly(
          "text", [](const Comparison& c) { return reader::comparison_text(c.comparison, ""); },
          "What `perflow compare-measured CONFIG PROFILE...` prints")
      .def(
          "json",
          [](const Comparison& c) { return json_loads(reader::comparison_json(c.comparison, "")); },
          "The `--format json` document as Python objects (its timeline: None)")
      .def(
          "to_svg",
          [](const Comparison& c) { return comparison_picture(c, visualizer::ImageFormat::Svg); },
          released, "Both timelines, predicted above measured on one time scale, as SVG text")
      .def(
          "to_png",
          [](const Comparison& c) {
            std::string png;
            {
              py::gil_scoped_release release;
              png = comparison_picture(c, visualizer::ImageFormat::Png);
            }
            return py::bytes(png);
          },
          "The same picture as PNG bytes")
      .def(
          "save",
          [](const Comparison& c, const py::object& path) {
            const std::filesystem::path file = path_of(path, "path");
            const py::gil_scoped_release release;
            const visualizer::ImageFormat format = visualizer::image_format_of(file);
            write_file_atomically(file, comparison_picture(c, format));
          },
          py::arg("path"),
          "Writes the picture `--timeline FILE` writes; the extension picks the format (.svg, "
          ".png, .pdf); atomic")
      .def("_repr_svg_",
           [](const Comparison& c) { return comparison_picture(c, visualizer::ImageFormat::Svg); })
      .def("__str__", [](const Comparison& c) { return reader::comparison_text(c.comparison, ""); })
      .def("__repr__", [](const Comparison& c) {
        return "<perflow.MeasuredComparison predicted " +
               format_duration(c.comparison.predicted_step) + ", measured " +
               format_duration(c.comparison.measured_step) + ">";
      });
  m.def("_compare_measured", &compare, py::arg("config").none(false), py::arg("profiles"),
        py::arg("preset"), py::arg("pattern"), py::arg("rank_stage"), released,
        "perflow.compare_measured of a Config and profiles");

  py::class_<visualizer::ChartData>(m, "Plot",
                                    "A chart of sweep results (perflow.plot): .caption, "
                                    ".series, .to_svg(), .save(path)")
      .def_readonly("title", &visualizer::ChartData::title)
      .def_readonly("x_label", &visualizer::ChartData::x_label)
      .def_readonly("y_label", &visualizer::ChartData::y_label)
      .def_readonly("categories", &visualizer::ChartData::categories,
                    "x's values when they are not all numbers (points' x index them)")
      .def_readonly("caption", &visualizer::ChartData::caption,
                    "What was plotted and left out: the first line `perflow plot` prints")
      .def_property_readonly(
          "series",
          [](const visualizer::ChartData& chart) {
            py::dict out;
            for (const visualizer::ChartSeries& s : chart.series) {
              py::list points;
              for (const auto& p : s.points) points.append(py::make_tuple(p.x, p.y));
              out[py::str(s.name)] = points;
            }
            return out;
          },
          "{line name: [(x, y), ...]}: one line per value of `by` ('' for one line), points by "
          "x, a point the mean of the rows at that x")
      .def(
          "to_svg",
          [](const visualizer::ChartData& chart) {
            return visualizer::render_chart(chart, visualizer::ImageFormat::Svg);
          },
          released, "The chart as SVG text")
      .def(
          "to_png",
          [](const visualizer::ChartData& chart) {
            std::string png;
            {
              py::gil_scoped_release release;
              png = visualizer::render_chart(chart, visualizer::ImageFormat::Png);
            }
            return py::bytes(png);
          },
          "The chart as PNG bytes")
      .def(
          "save",
          [](const visualizer::ChartData& chart, const py::object& path) {
            const std::filesystem::path file = path_of(path, "path");
            const py::gil_scoped_release release;
            write_file_atomically(
                file, visualizer::render_chart(chart, visualizer::image_format_of(file)));
          },
          py::arg("path"),
          "Writes the chart `perflow plot -o FILE` writes; the extension picks the format "
          "(.svg, .png, .pdf); atomic")
      .def("_repr_svg_",
           [](const visualizer::ChartData& chart) {
             return visualizer::render_chart(chart, visualizer::ImageFormat::Svg);
           })
      .def("__str__", [](const visualizer::ChartData& chart) { return chart.caption; })
      .def("__repr__",
           [](const visualizer::ChartData& chart) { return "<perflow.Plot " + chart.title + ">"; });
  m.def("_plot", &plot, py::arg("results"), py::arg("x"), py::arg("y"), py::arg("by"), released,
        "perflow.plot of a CSV of sweep results");
}

}  // namespace perflow::python
