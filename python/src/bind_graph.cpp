// Graphs from Python: costs, a schedule's graph (build_schedule), the graph's columns, and
// the trace operators filter / merge / remap / scale (the PerFlow-AI prototype's workflow,
// with the boundary edges reconnected automatically).
#include <pybind11/operators.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/units.hpp"
#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/trace_op/operators.hpp"

namespace perflow::python {
namespace {

using parallel::CostTable;
using parallel::TaskCosts;
using PartPtr = std::shared_ptr<trace_op::GraphPart>;

TaskCosts make_costs(const py::object& forward, const py::object& backward,
                     const py::object& weight, const py::object& activation, double backward_frees,
                     const py::object& launch_overhead) {
  TaskCosts costs;
  costs.forward = duration_of(forward, "forward");
  costs.backward = duration_of(backward, "backward");
  costs.weight = duration_of(weight, "weight");
  costs.activation = bytes_of(activation, "activation");
  if (!(backward_frees >= 0.0 && backward_frees <= 1.0)) {
    throw py::value_error("backward_frees: expected a fraction in [0, 1], found " +
                          std::to_string(backward_frees));
  }
  costs.backward_frees = backward_frees;
  costs.launch_overhead = duration_of(launch_overhead, "launch_overhead");
  return costs;
}

std::string repr(const TaskCosts& c) {
  return "TaskCosts(forward=" + std::to_string(c.forward) +
         ", backward=" + std::to_string(c.backward) + ", weight=" + std::to_string(c.weight) +
         ", activation=" + std::string(py::repr(py::float_(c.activation))) +
         ", backward_frees=" + std::string(py::repr(py::float_(c.backward_frees))) +
         ", launch_overhead=" + std::to_string(c.launch_overhead) + ")";
}

// A schedule's costs from Python: a CostTable, one TaskCosts for every stage, a list with
// one per stage (for all its chunks), or None (zero costs).
CostTable cost_table_of(const py::object& costs, std::uint32_t stages, std::uint32_t chunks) {
  if (costs.is_none()) return CostTable();
  if (py::isinstance<CostTable>(costs)) return costs.cast<CostTable>();
  if (py::isinstance<TaskCosts>(costs)) return CostTable(costs.cast<TaskCosts>());
  if (py::isinstance<py::list>(costs) || py::isinstance<py::tuple>(costs)) {
    const auto per_stage = costs.cast<std::vector<TaskCosts>>();
    if (per_stage.size() != stages) {
      throw py::value_error("costs: expected one TaskCosts per stage (" + std::to_string(stages) +
                            "), found " + std::to_string(per_stage.size()));
    }
    CostTable table(per_stage.front());
    table.reserve(stages, chunks);
    for (std::uint32_t s = 0; s < stages; ++s) {
      for (std::uint32_t c = 0; c < chunks; ++c) table.set(StageId{s}, c, per_stage[s]);
    }
    return table;
  }
  throw py::type_error(
      "costs: expected a TaskCosts, a list of them (one per stage) or a CostTable, found " +
      type_name(costs));
}

std::vector<StageId> stage_ids(const std::vector<std::uint32_t>& stages) {
  std::vector<StageId> ids;
  ids.reserve(stages.size());
  for (const std::uint32_t s : stages) ids.push_back(StageId{s});
  return ids;
}

PartPtr filter(const GraphPtr& graph, const std::vector<std::uint32_t>& stages) {
  const std::vector<StageId> ids = stage_ids(stages);
  py::gil_scoped_release release;
  return std::make_shared<trace_op::GraphPart>(trace_op::filter(*graph, ids));
}

GraphPtr remap(const GraphPtr& graph, const std::vector<std::uint32_t>& device_of) {
  std::vector<DeviceId> ids;
  ids.reserve(device_of.size());
  for (const std::uint32_t d : device_of) ids.push_back(DeviceId{d});
  py::gil_scoped_release release;
  return std::make_shared<EventGraph>(trace_op::remap(*graph, ids));
}

GraphPtr scale(const GraphPtr& graph, const std::optional<py::dict>& by_kind,
               const std::vector<double>& by_stage) {
  trace_op::ScaleFactors factors;
  if (by_kind) {
    for (const auto& [key, value] : *by_kind) {
      const std::string name = text_of(key, "by_kind");
      const std::optional<TaskKind> kind = parse_task_kind(name);
      if (!kind) {
        std::string names;
        for (int k = 0; k < kTaskKindCount; ++k) {
          names += (k ? ", " : "") + std::string(to_string(static_cast<TaskKind>(k)));
        }
        throw UnknownNameError("scale: unknown task kind '" + name + "'; the kinds are " + names);
      }
      factors.by_kind[static_cast<std::size_t>(*kind)] = number_of(value, "by_kind");
    }
  }
  factors.by_stage = by_stage;
  py::gil_scoped_release release;
  return std::make_shared<EventGraph>(trace_op::scale(*graph, factors));
}

GraphPtr merge(const std::vector<PartPtr>& parts) {
  std::vector<trace_op::GraphPart> copies;
  copies.reserve(parts.size());
  for (const PartPtr& part : parts) {
    if (!part) throw py::type_error("merge: expected Parts, found None");
    copies.push_back(*part);
  }
  py::gil_scoped_release release;
  return std::make_shared<EventGraph>(trace_op::merge(copies));
}

}  // namespace

void bind_graph(py::module_& m) {
  py::tuple kinds(kTaskKindCount);
  for (int k = 0; k < kTaskKindCount; ++k) {
    kinds[static_cast<std::size_t>(k)] = std::string(to_string(static_cast<TaskKind>(k)));
  }
  m.attr("KINDS") = kinds;
  m.def(
      "format_duration",
      [](const py::object& ns) { return format_duration(duration_of(ns, "ns")); }, py::arg("ns"),
      "A duration for people, as the CLI prints it: '270.329ms'");
  m.def("format_memory", &format_memory, py::arg("amount"),
        "A memory amount for people, as the CLI prints it: '16.5GB' (below 10000: '2.5')");

  py::class_<TaskCosts>(m, "TaskCosts",
                        "What one chunk of one stage costs per microbatch. Durations are ints "
                        "(nanoseconds) or strs with a unit ('1315us'); activation is bytes (or "
                        "abstract units), a number or a str ('1.5GB')")
      .def(py::init(&make_costs), py::kw_only(), py::arg("forward") = 0, py::arg("backward") = 0,
           py::arg("weight") = 0, py::arg("activation") = 0.0, py::arg("backward_frees") = 0.0,
           py::arg("launch_overhead") = 0)
      .def_readonly("forward", &TaskCosts::forward, "F, in ns")
      .def_readonly("backward", &TaskCosts::backward, "B (input gradient), in ns")
      .def_readonly("weight", &TaskCosts::weight, "W (weight gradient), in ns")
      .def_readonly("activation", &TaskCosts::activation, "what one F allocates")
      .def_readonly("backward_frees", &TaskCosts::backward_frees,
                    "the fraction of the activation B frees (W frees the rest)")
      .def_readonly("launch_overhead", &TaskCosts::launch_overhead,
                    "added to every compute task, in ns")
      .def(py::self == py::self)  // NOLINT(misc-redundant-expression)
      .def("__repr__", &repr);

  py::class_<CostTable>(m, "CostTable",
                        "Costs per (stage, chunk): a uniform default with overrides")
      .def(py::init([](const TaskCosts& uniform, const py::object& p2p_latency) {
             return CostTable(uniform, duration_of(p2p_latency, "p2p_latency"));
           }),
           py::arg("uniform") = TaskCosts{}, py::arg("p2p_latency") = 0)
      .def(
          "set",
          [](CostTable& table, std::uint32_t stage, std::uint32_t chunk,
             const TaskCosts& costs) -> CostTable& {
            table.set(StageId{stage}, chunk, costs);
            return table;
          },
          py::arg("stage"), py::arg("chunk"), py::arg("costs"), py::return_value_policy::reference,
          "Sets the costs of one (stage, chunk); returns the table")
      .def(
          "at",
          [](const CostTable& table, std::uint32_t stage, std::uint32_t chunk) {
            return table.at(StageId{stage}, chunk);
          },
          py::arg("stage"), py::arg("chunk"))
      .def_property_readonly("uniform", &CostTable::uniform)
      .def_property_readonly("p2p_latency", &CostTable::p2p_latency);

  py::class_<EventGraph, GraphPtr>(m, "Graph",
                                   "A task graph: tasks with devices, lanes and durations, "
                                   "their dependences and each device's program order")
      .def_property_readonly("task_count", &EventGraph::task_count)
      .def_property_readonly("edge_count", &EventGraph::edge_count)
      .def_property_readonly("device_count", &EventGraph::device_count)
      .def_property_readonly("has_program_order", &EventGraph::has_program_order)
      .def("__len__", &EventGraph::task_count)
      .def_property_readonly(
          "lanes",
          [](const EventGraph& g) {
            py::list lanes;
            for (const LaneInfo& lane : g.lanes()) {
              lanes.append(py::make_tuple(lane.device.value, lane.name));
            }
            return lanes;
          },
          "Per lane (the ids in columns()['lane']): (device, name)")
      .def(
          "label",
          [](const EventGraph& g, std::uint32_t task) {
            if (task >= g.task_count()) {
              throw py::index_error("task " + std::to_string(task) + " of a graph of " +
                                    std::to_string(g.task_count()) + " tasks");
            }
            return g.label(TaskId{task});
          },
          py::arg("task"), "A task's label, as the timeline and traces show it: 'F3.0'")
      .def(
          "columns",
          [](const py::object& self) {
            const auto& g = self.cast<const EventGraph&>();
            py::dict c = task_columns(self, g);
            c["duration"] = view(self, g.durations().data(), g.task_count(), "int64");
            c["memory_delta"] = view(self, g.memory_deltas().data(), g.task_count(), "float64");
            return c;
          },
          "The tasks as read-only NumPy columns over the graph's own memory (no copy): "
          "device, lane, kind (an index into perflow.KINDS), microbatch, chunk, stage, "
          "duration (ns), memory_delta")
      .def("filter", &filter, py::arg("stages"),
           "The part holding these stages' tasks; merge() reconnects its open boundaries")
      .def("remap", &remap, py::arg("device_of"),
           "The graph with each device d's tasks moved to device_of[d]")
      .def("scale", &scale, py::kw_only(), py::arg("by_kind") = py::none(),
           py::arg("by_stage") = std::vector<double>{},
           "Durations multiplied by kind ({'F': 1.2}) and per stage")
      .def("__repr__", [](const EventGraph& g) {
        return "<perflow.Graph " + std::to_string(g.task_count()) + " tasks on " +
               std::to_string(g.device_count()) + " devices>";
      });

  py::class_<trace_op::GraphPart, PartPtr>(
      m, "Part", "Some stages of a graph and the dependences that left them (Graph.filter)")
      .def_property_readonly(
          "graph", [](const PartPtr& part) { return GraphPtr(part, &part->graph); },
          "The part's own graph (the dependences to other stages cut)")
      .def_property_readonly("stages",
                             [](const trace_op::GraphPart& part) {
                               std::vector<std::uint32_t> stages;
                               for (const StageId s : part.stages) stages.push_back(s.value);
                               return stages;
                             })
      .def_property_readonly(
          "open_boundaries", [](const trace_op::GraphPart& part) { return part.open.size(); },
          "How many dependences to other stages merge() has to reconnect")
      .def("__repr__", [](const trace_op::GraphPart& part) {
        return "<perflow.Part " + std::to_string(part.stages.size()) + " stages, " +
               std::to_string(part.graph.task_count()) + " tasks, " +
               std::to_string(part.open.size()) + " open boundaries>";
      });

  m.def(
      "build_schedule",
      [](const py::object& schedule, std::uint32_t stages, std::uint32_t microbatches,
         std::uint32_t chunks, const py::object& costs, bool split_backward,
         std::uint32_t microbatch_group_size, double memory_limit) {
        parallel::PipelineSpec spec;
        spec.schedule = text_of(schedule, "schedule");
        spec.stages = stages;
        spec.microbatches = microbatches;
        spec.chunks = chunks;
        spec.split_backward = split_backward;
        spec.microbatch_group_size = microbatch_group_size;
        spec.memory_limit = memory_limit;
        const CostTable table = cost_table_of(costs, stages, chunks);
        py::gil_scoped_release release;
        return GraphPtr(std::make_shared<EventGraph>(parallel::build_schedule(spec, table)));
      },
      py::arg("schedule"), py::kw_only(), py::arg("stages"), py::arg("microbatches"),
      py::arg("chunks") = 1, py::arg("costs") = py::none(), py::arg("split_backward") = false,
      py::arg("microbatch_group_size") = 0, py::arg("memory_limit") = 0.0,
      "A schedule's task graph (names: perflow.schedules()); costs: a TaskCosts, one per "
      "stage, or a CostTable");
  m.def("filter", &filter, py::arg("graph").none(false), py::arg("stages"),
        "The part of `graph` holding these stages (Graph.filter)");
  m.def("merge", &merge, py::arg("parts"),
        "One graph of the parts, their boundary dependences reconnected");
  m.def("remap", &remap, py::arg("graph").none(false), py::arg("device_of"), "Graph.remap");
  m.def("scale", &scale, py::arg("graph").none(false), py::kw_only(),
        py::arg("by_kind") = py::none(), py::arg("by_stage") = std::vector<double>{},
        "Graph.scale");
}

}  // namespace perflow::python
