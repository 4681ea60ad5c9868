#include "perflow/core/event_graph.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "detail/task_admission.hpp"
#include "perflow/core/detail/graph_storage.hpp"
#include "perflow/core/error.hpp"

namespace perflow {
namespace {

// Builds one direction of the CSR adjacency in O(tasks + edges) without a cursor array:
// program-order edges first in each list, then data edges in insertion order (stable, so
// deterministic). `key` is the endpoint whose list an edge joins, `other` the far end.
void build_csr(std::size_t node_count, std::span<const TaskId> program,
               std::span<const std::uint32_t> program_offset, bool by_target,
               const BigVector<TaskId>& key, const BigVector<TaskId>& other,
               BigVector<std::uint32_t>& offset, BigVector<Adjacent>& adjacent) {
  const auto for_each_order_edge = [&](auto&& visit) {
    for (std::size_t d = 0; d + 1 < program_offset.size(); ++d) {
      for (std::uint32_t i = program_offset[d] + 1; i < program_offset[d + 1]; ++i) {
        const TaskId before = program[i - 1];
        const TaskId after = program[i];
        by_target ? visit(after, before) : visit(before, after);
      }
    }
  };
  offset.assign(node_count + 1, 0);
  for_each_order_edge([&](TaskId k, TaskId) { ++offset[k.value + 1]; });
  for (const TaskId k : key) ++offset[k.value + 1];
  for (std::size_t i = 1; i <= node_count; ++i) offset[i] += offset[i - 1];
  adjacent.resize(offset[node_count]);
  // Fill using offset[k] as the cursor; afterwards offset[k] holds the old offset[k+1].
  for_each_order_edge(
      [&](TaskId k, TaskId o) { adjacent[offset[k.value]++] = Adjacent(o, EdgeKind::Order); });
  for (std::size_t e = 0; e < key.size(); ++e) {
    adjacent[offset[key[e].value]++] = Adjacent(other[e], EdgeKind::Data);
  }
  for (std::size_t i = node_count; i > 0; --i) offset[i] = offset[i - 1];
  offset[0] = 0;
}

}  // namespace

namespace detail {
// What a builder collects until freeze().
struct BuilderState {
  std::uint32_t device_count = 0;
  std::vector<LaneInfo> lanes;
  TaskColumns tasks;
  BigVector<TaskId> edge_from;  // data dependences only
  BigVector<TaskId> edge_to;
  std::vector<std::vector<TaskId>> programs;  // per lane
  BigVector<std::uint8_t> in_program;
};
}  // namespace detail

EventGraphBuilder::EventGraphBuilder(std::uint32_t device_count)
    : state_(std::make_unique<detail::BuilderState>()) {
  state_->device_count = device_count;
  state_->programs.resize(device_count);
  state_->lanes.reserve(device_count);
  for (std::uint32_t d = 0; d < device_count; ++d) {
    state_->lanes.push_back({DeviceId{d}, "compute"});
  }
}

EventGraphBuilder::~EventGraphBuilder() = default;
EventGraphBuilder::EventGraphBuilder(EventGraphBuilder&& other) noexcept = default;
EventGraphBuilder& EventGraphBuilder::operator=(EventGraphBuilder&& other) noexcept = default;
EventGraphBuilder::EventGraphBuilder(const EventGraphBuilder& other)
    : state_(std::make_unique<detail::BuilderState>(*other.state_)) {}
EventGraphBuilder& EventGraphBuilder::operator=(const EventGraphBuilder& other) {
  if (this != &other) state_ = std::make_unique<detail::BuilderState>(*other.state_);
  return *this;
}

std::size_t EventGraphBuilder::task_count() const { return state_->tasks.size(); }
std::uint32_t EventGraphBuilder::device_count() const { return state_->device_count; }

EventGraphBuilder EventGraphBuilder::with_lanes_of(const EventGraph& graph) {
  EventGraphBuilder builder(graph.device_count());
  for (std::uint32_t l = graph.device_count(); l < graph.lane_count(); ++l) {
    const LaneInfo& lane = graph.lane_info(LaneId{l});
    (void)builder.add_lane(lane.device, lane.name);
  }
  return builder;
}

EventGraphBuilder EventGraphBuilder::extend(
    const EventGraph& graph, const std::function<bool(TaskId, TaskId)>& keep_dependence) {
  EventGraphBuilder builder = with_lanes_of(graph);
  detail::BuilderState& b = *builder.state_;
  const std::size_t n = graph.task_count();
  if (n == 0) return builder;
  b.tasks = graph.storage_->tasks;
  b.tasks.fill_derived_columns();
  std::size_t data_edges = 0;
  for (const Adjacent& a : std::span(graph.pred_, graph.edge_count_)) {
    data_edges += a.kind() == EdgeKind::Data ? 1u : 0u;
  }
  b.edge_from.reserve(data_edges);
  b.edge_to.reserve(data_edges);
  for (std::uint32_t v = 0; v < n; ++v) {
    for (const Adjacent& s : graph.successors(TaskId{v})) {
      if (s.kind() != EdgeKind::Data) continue;
      if (keep_dependence && !keep_dependence(TaskId{v}, s.task())) continue;
      b.edge_from.push_back(TaskId{v});
      b.edge_to.push_back(s.task());
    }
  }
  b.in_program.assign(n, 0);
  for (std::uint32_t l = 0; l < graph.lane_count(); ++l) {
    for (const TaskId t : graph.program(LaneId{l})) {
      b.in_program[t.value] = 1;
      b.programs[l].push_back(t);
    }
  }
  return builder;
}

LaneId EventGraphBuilder::add_lane(DeviceId device, std::string name) {
  detail::BuilderState& b = *state_;
  if (device.value >= b.device_count) {
    throw ScheduleError(fmt::format("lane {} is placed on device {}, but the graph has {} devices",
                                    name, device.value, b.device_count));
  }
  b.lanes.push_back({device, std::move(name)});
  b.programs.emplace_back();
  return LaneId{static_cast<std::uint32_t>(b.lanes.size() - 1)};
}

void detail::TaskColumns::reserve(std::size_t n) {
  kind.reserve(n);
  device.reserve(n);
  stage.reserve(n);
  microbatch.reserve(n);
  chunk.reserve(n);
  duration.reserve(n);
  memory_delta.reserve(n);
  lane.reserve(n);
  if (!iteration.empty()) iteration.reserve(n);
  if (!paired.empty()) paired.reserve(n);
  if (!release_share.empty()) release_share.reserve(n);
}

void detail::TaskColumns::resize(std::size_t n) {
  kind.resize(n);
  device.resize(n);
  if (!stage.empty()) stage.resize(n);
  microbatch.resize(n);
  if (!chunk.empty()) chunk.resize(n);
  if (!duration.empty()) duration.resize(n);
  if (!memory_delta.empty()) memory_delta.resize(n);
  if (!lane.empty()) lane.resize(n);
  if (!iteration.empty()) iteration.resize(n);
  if (!paired.empty()) paired.resize(n);
  if (!release_share.empty()) release_share.resize(n);
}

namespace {
// A column holding each task's device id as another id type.
template <class Id>
void devices_as(std::span<const DeviceId> device, BigVector<Id>& out) {
  out.resize(device.size());
  for (std::size_t t = 0; t < device.size(); ++t) out[t] = Id{device[t].value};
}

// The cost columns from a table of costs by place.
void costs_from(const detail::TaskColumns& c, BigVector<TimeNs>* duration,
                BigVector<double>* memory_delta) {
  const std::size_t n = c.size();
  if (duration != nullptr) duration->resize(n);
  if (memory_delta != nullptr) memory_delta->resize(n);
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t at = c.placed.index(c.device[t], c.chunk.empty() ? 0 : c.chunk[t], c.kind[t]);
    if (duration != nullptr) (*duration)[t] = c.placed.duration[at];
    if (memory_delta != nullptr) (*memory_delta)[t] = c.placed.memory_delta[at];
  }
}
}  // namespace

void detail::TaskColumns::fill_derived_columns() {
  if (stage.size() != size()) devices_as(device, stage);
  if (lane.size() != size()) devices_as(device, lane);
  if (!placed.empty()) {
    costs_from(*this, &duration, &memory_delta);
    placed = {};
  }
  if (chunk.size() != size()) chunk.assign(size(), 0);
}

void detail::TaskColumns::write_out_stage() {
  if (stage.size() != size()) devices_as(device, stage);
}

void detail::TaskColumns::write_out_lane() {
  if (lane.size() != size()) devices_as(device, lane);
}

void detail::TaskColumns::write_out_chunk() {
  if (chunk.size() != size()) chunk.assign(size(), 0);
}

void detail::TaskColumns::write_out_costs(bool durations, bool memory_deltas) {
  if (placed.empty()) return;
  costs_from(*this, durations ? &duration : nullptr, memory_deltas ? &memory_delta : nullptr);
  placed = {};
}

void detail::TaskColumns::push_back(const TaskSpec& spec) {
  kind.push_back(spec.kind);
  device.push_back(spec.device);
  stage.push_back(spec.stage);
  microbatch.push_back(spec.microbatch);
  chunk.push_back(spec.chunk);
  duration.push_back(spec.duration);
  memory_delta.push_back(spec.memory_delta);
  lane.push_back(spec.lane.valid() ? spec.lane : LaneId{spec.device.value});
  // A column left empty while every value is its default is written out, defaults before,
  // at the first task that is not (which may be the first task of all).
  const auto optional_column = [this](auto& column, bool departs, auto value, auto fallback) {
    if (column.empty() && !departs) return;
    if (column.empty()) {
      column.reserve(kind.capacity());
      column.resize(kind.size() - 1, fallback);
    }
    column.push_back(value);
  };
  optional_column(iteration, spec.iteration != 0, spec.iteration, std::uint32_t{0});
  optional_column(paired, spec.paired, static_cast<std::uint8_t>(spec.paired ? 1 : 0),
                  std::uint8_t{0});
  optional_column(release_share, spec.release_share != 1.0, spec.release_share, 1.0);
}

void EventGraphBuilder::reserve(std::size_t tasks, std::size_t edges) {
  state_->tasks.reserve(tasks);
  state_->in_program.reserve(tasks);
  state_->edge_from.reserve(edges);
  state_->edge_to.reserve(edges);
}

namespace detail {

void check_new_task(const TaskSpec& spec, std::uint32_t devices, std::size_t task_count,
                    std::optional<DeviceId> lane_owner) {
  if (spec.device.value >= devices) {
    throw ScheduleError(fmt::format("task {} is placed on device {}, but the graph has {} devices",
                                    task_label(spec.kind, spec.microbatch, spec.chunk),
                                    spec.device.value, devices));
  }
  if (spec.duration < 0) {
    throw ScheduleError(fmt::format("task {} has a negative duration ({} ns)",
                                    task_label(spec.kind, spec.microbatch, spec.chunk),
                                    spec.duration));
  }
  if (!(spec.release_share >= 0.0 && spec.release_share <= 1.0)) {
    throw ScheduleError(fmt::format("task {} has release share {}; expected a share in [0, 1]",
                                    task_label(spec.kind, spec.microbatch, spec.chunk),
                                    spec.release_share));
  }
  if (spec.lane.valid() && (!lane_owner || *lane_owner != spec.device)) {
    throw ScheduleError(fmt::format("task {} on device {} names lane {}, which {}",
                                    task_label(spec.kind, spec.microbatch, spec.chunk),
                                    spec.device.value, spec.lane.value,
                                    !lane_owner ? "does not exist" : "belongs to another device"));
  }
  if (task_count >= (std::size_t{1} << 31) - 1) {
    throw ScheduleError("too many tasks for one graph (limit 2^31 - 1)");
  }
}

}  // namespace detail

TaskId EventGraphBuilder::add_task(const TaskSpec& spec) {
  detail::BuilderState& b = *state_;
  std::optional<DeviceId> lane_owner;
  if (spec.lane.valid() && spec.lane.value < b.lanes.size()) {
    lane_owner = b.lanes[spec.lane.value].device;
  }
  detail::check_new_task(spec, b.device_count, b.tasks.size(), lane_owner);
  const TaskId id{static_cast<std::uint32_t>(b.tasks.size())};
  b.tasks.push_back(spec);
  b.in_program.push_back(0);
  return id;
}

void EventGraphBuilder::check_task(TaskId id, const char* what) const {
  if (id.value >= state_->tasks.size()) {
    throw ScheduleError(fmt::format("{}: task id {} does not exist (the graph has {} tasks)", what,
                                    id.value, state_->tasks.size()));
  }
}

void EventGraphBuilder::add_dependence(TaskId from, TaskId to) {
  check_task(from, "dependence source");
  check_task(to, "dependence target");
  const detail::TaskColumns& c = state_->tasks;
  if (from == to) {
    throw ScheduleError(
        fmt::format("task {} cannot depend on itself",
                    task_label(c.kind[from.value], c.microbatch[from.value], c.chunk[from.value])));
  }
  state_->edge_from.push_back(from);
  state_->edge_to.push_back(to);
}

void EventGraphBuilder::append_to_program(TaskId task) {
  check_task(task, "program entry");
  detail::BuilderState& b = *state_;
  const detail::TaskColumns& c = b.tasks;
  if (b.in_program[task.value]) {
    throw ScheduleError(
        fmt::format("task {} appears twice in the program of device {}",
                    task_label(c.kind[task.value], c.microbatch[task.value], c.chunk[task.value]),
                    c.device[task.value].value));
  }
  b.in_program[task.value] = 1;
  b.programs[c.lane[task.value].value].push_back(task);
}

EventGraph EventGraphBuilder::freeze() && {
  detail::BuilderState& b = *state_;
  EventGraph g;
  g.storage_ = std::make_shared<detail::GraphStorage>();
  detail::GraphStorage& s = *g.storage_;
  const std::size_t n = b.tasks.size();
  s.device_count = b.device_count;
  s.lanes = std::move(b.lanes);
  s.tasks = std::move(b.tasks);

  std::size_t programmed = 0;
  s.program_offset.assign(b.programs.size() + 1, 0);
  for (std::size_t l = 0; l < b.programs.size(); ++l) {
    programmed += b.programs[l].size();
    s.program_offset[l + 1] = static_cast<std::uint32_t>(programmed);
  }
  if (programmed != 0 && programmed != n) {
    g.bind();  // for the labels
    for (std::size_t t = 0; t < n; ++t) {
      if (!b.in_program[t]) {
        throw ScheduleError(fmt::format(
            "task {} on device {} has no place in its device's program ({} of {} tasks have one)",
            g.label(TaskId{static_cast<std::uint32_t>(t)}), s.tasks.device[t].value, programmed,
            n));
      }
    }
  }
  s.has_program_order = programmed == n && n > 0;
  s.program.reserve(programmed);
  for (auto& program : b.programs) {
    s.program.insert(s.program.end(), program.begin(), program.end());
    program = {};
  }
  build_csr(n, s.program, s.program_offset, true, b.edge_to, b.edge_from, s.pred_offset, s.pred);
  build_csr(n, s.program, s.program_offset, false, b.edge_from, b.edge_to, s.succ.offset,
            s.succ.list);
  // Without communication lanes every task is on its device's compute lane (add_task checks
  // a named lane's device): the column says nothing.
  if (s.lanes.size() <= s.device_count) s.tasks.lane = {};
  g.bind();
  g.sort_topologically();
  return g;
}

void EventGraph::bind() {
  const detail::GraphStorage& s = *storage_;
  const detail::TaskColumns& c = s.tasks;
  const auto column = [](const auto& v) { return v.empty() ? nullptr : v.data(); };
  task_count_ = c.size();
  edge_count_ = s.pred.size();
  device_count_ = s.device_count;
  lanes_ = s.lanes;
  kind_ = c.kind.data();
  device_ = c.device.data();
  stage_ = column(c.stage);
  microbatch_ = c.microbatch.data();
  chunk_ = column(c.chunk);
  placed_chunks_ = c.placed.empty() ? 0 : c.placed.chunks;
  duration_ = c.placed.empty() ? c.duration.data() : c.placed.duration.data();
  memory_delta_ = c.placed.empty() ? c.memory_delta.data() : c.placed.memory_delta.data();
  lane_ = column(c.lane);
  iteration_ = column(c.iteration);
  paired_ = column(c.paired);
  release_share_ = c.release_share;
  pred_offset_ = s.pred_offset.data();
  pred_ = s.pred.data();
  succ_offset_ = column(s.succ.offset);
  succ_ = s.succ.list.data();
  program_offset_ = s.program_offset.data();
  program_ = s.program.data();
  has_program_order_ = s.has_program_order;
  ids_are_topological_ = s.ids_are_topological;
}

void EventGraph::sort_topologically() {
  const std::size_t n = task_count();
  // Kahn's algorithm with a FIFO seeded in id order: deterministic, O(tasks + edges).
  BigVector<TaskId>& topo = storage_->topological_order;
  BigVector<std::uint32_t> remaining(n);
  for (std::size_t t = 0; t < n; ++t) remaining[t] = pred_offset_[t + 1] - pred_offset_[t];
  topo.reserve(n);
  for (std::size_t t = 0; t < n; ++t) {
    if (remaining[t] == 0) topo.push_back(TaskId{static_cast<std::uint32_t>(t)});
  }
  for (std::size_t head = 0; head < topo.size(); ++head) {
    for (const Adjacent& s : successors(topo[head])) {
      if (--remaining[s.task().value] == 0) topo.push_back(s.task());
    }
  }
  if (topo.size() != n) {
    // Every stuck task has a stuck predecessor; walking back from the lowest stuck id must
    // revisit a task, and the loop between the two visits is a cycle.
    std::uint32_t start = 0;
    while (remaining[start] == 0) ++start;
    std::vector<std::uint32_t> seen_at(n, std::numeric_limits<std::uint32_t>::max());
    std::vector<TaskId> walk;
    TaskId current{start};
    while (seen_at[current.value] == std::numeric_limits<std::uint32_t>::max()) {
      seen_at[current.value] = static_cast<std::uint32_t>(walk.size());
      walk.push_back(current);
      for (const Adjacent& p : predecessors(current)) {
        if (remaining[p.task().value] != 0) {
          current = p.task();
          break;
        }
      }
    }
    std::vector<TaskId> loop(walk.begin() + seen_at[current.value], walk.end());
    std::reverse(loop.begin(), loop.end());  // predecessor walk, printed in dependence order
    std::vector<std::string> names;
    std::string chain;
    for (TaskId t : loop) {
      names.push_back(fmt::format("{}@d{}", label(t), device(t).value));
      chain += names.back() + " -> ";
    }
    chain += names.front();
    const std::size_t stuck = n - topo.size();
    throw CycleError(fmt::format("dependence cycle (the schedule deadlocks): {} ({} of {} tasks "
                                 "can never start)",
                                 chain, stuck, n),
                     std::move(names));
  }
}

std::string EventGraph::label(TaskId t) const {
  char text[kMaxTaskLabel];
  return {text, put_label(text, t)};
}

TaskId EventGraph::pair_partner(TaskId t) const {
  if (!has_pairs()) return TaskId{};
  if (paired(t)) {
    const auto before = predecessors(t);
    return !before.empty() && before.front().kind() == EdgeKind::Order ? before.front().task()
                                                                       : TaskId{};
  }
  const auto after = successors(t);
  return !after.empty() && after.front().kind() == EdgeKind::Order && paired(after.front().task())
             ? after.front().task()
             : TaskId{};
}

bool EventGraph::has_kind(TaskKind kind) const {
  static_assert(sizeof(TaskKind) == 1);
  return task_count_ > 0 && std::memchr(kind_, static_cast<int>(kind), task_count_) != nullptr;
}

TaskSpec EventGraph::spec(TaskId t) const {
  return TaskSpec{kind(t),      device(t),   stage(t),        microbatch(t),
                  chunk(t),     duration(t), memory_delta(t), lane(t),
                  iteration(t), paired(t),   release_share(t)};
}

EventGraph detail::GraphAccess::assemble(GraphParts parts) {
  const std::size_t n = parts.tasks.size();
  const TaskColumns& c = parts.tasks;
  const bool columns_agree =
      c.device.size() == n && (c.stage.empty() || c.stage.size() == n) &&
      c.microbatch.size() == n && (c.chunk.empty() || c.chunk.size() == n) &&
      (c.placed.empty() ? c.duration.size() == n && c.memory_delta.size() == n
                        : c.duration.empty() && c.memory_delta.empty() &&
                              c.placed.memory_delta.size() == c.placed.duration.size() &&
                              c.placed.duration.size() ==
                                  std::size_t{parts.device_count} * c.placed.chunks * 4 &&
                              (c.placed.chunks <= 1 || c.chunk.size() == n)) &&
      (c.lane.empty() || c.lane.size() == n) && (c.iteration.empty() || c.iteration.size() == n) &&
      (c.paired.empty() || c.paired.size() == n) &&
      (c.release_share.empty() || c.release_share.size() == n);
  const auto csr_agrees = [n](const BigVector<std::uint32_t>& offset,
                              const BigVector<Adjacent>& adjacent) {
    return offset.size() == n + 1 && offset.front() == 0 && offset.back() == adjacent.size();
  };
  const bool derive_successors = parts.succ_offset.empty() && parts.succ.empty();
  if (!columns_agree || !csr_agrees(parts.pred_offset, parts.pred) ||
      (!derive_successors &&
       (!csr_agrees(parts.succ_offset, parts.succ) || parts.pred.size() != parts.succ.size())) ||
      parts.lanes.size() < parts.device_count ||
      parts.program_offset.size() != parts.lanes.size() + 1 ||
      parts.program_offset.back() != parts.program.size() ||
      (!parts.program.empty() && parts.program.size() != n) ||
      (!parts.topological_order.empty() && parts.topological_order.size() != n)) {
    throw std::invalid_argument("EventGraph::assemble: the graph's arrays disagree in size");
  }
  GraphStorage s;
  s.device_count = parts.device_count;
  s.lanes = std::move(parts.lanes);
  s.tasks = std::move(parts.tasks);
  s.pred_offset = std::move(parts.pred_offset);
  s.pred = std::move(parts.pred);
  s.succ.offset = std::move(parts.succ_offset);
  s.succ.list = std::move(parts.succ);
  s.program_offset = std::move(parts.program_offset);
  s.program = std::move(parts.program);
  s.has_program_order = n > 0 && s.program.size() == n;
  s.ids_are_topological = parts.topological_order.empty();
  s.topological_order = std::move(parts.topological_order);
  if (s.lanes.size() <= s.device_count) s.tasks.lane = {};
  return adopt(std::move(s));
}

EventGraph detail::GraphAccess::adopt(GraphStorage storage) {
  EventGraph g;
  g.storage_ = std::make_shared<GraphStorage>(std::move(storage));
  g.bind();
  return g;
}

detail::GraphStorage detail::GraphAccess::take(EventGraph&& graph) {
  std::shared_ptr<GraphStorage> shared = std::move(graph.storage_);
  graph.clear();
  if (shared == nullptr) return {};
  GraphStorage out = shared.use_count() == 1 ? std::move(*shared) : GraphStorage(*shared);
  out.derived = std::make_shared<DerivedArrays>();  // the taker changes the arrays
  return out;
}

std::span<const LaneId> EventGraph::lanes_of_tasks() const {
  if (task_count_ == 0) return {};
  if (lane_ != nullptr) return {lane_, task_count_};
  return storage_->derived->lane.get([&](BigVector<LaneId>& lane) { devices_as(devices(), lane); });
}

std::span<const StageId> EventGraph::stages() const {
  if (task_count_ == 0) return {};
  if (stage_ != nullptr) return {stage_, task_count_};
  return storage_->derived->stage.get(
      [&](BigVector<StageId>& stage) { devices_as(devices(), stage); });
}

std::span<const std::uint32_t> EventGraph::chunks() const {
  if (task_count_ == 0) return {};
  if (chunk_ != nullptr) return {chunk_, task_count_};
  return storage_->derived->chunk.get(
      [&](BigVector<std::uint32_t>& chunk) { chunk.assign(task_count(), 0); });
}

std::span<const TimeNs> EventGraph::durations() const {
  if (placed_chunks_ == 0) return {duration_, task_count_};
  return storage_->derived->duration.get(
      [&](BigVector<TimeNs>& duration) { costs_from(storage_->tasks, &duration, nullptr); });
}

std::span<const double> EventGraph::memory_deltas() const {
  if (placed_chunks_ == 0) return {memory_delta_, task_count_};
  return storage_->derived->memory_delta.get([&](BigVector<double>& memory_delta) {
    costs_from(storage_->tasks, nullptr, &memory_delta);
  });
}

double EventGraph::total_duration(double start) const {
  double total = start;
  for (std::uint32_t t = 0; t < task_count_; ++t) {
    total += static_cast<double>(duration_[cost_index(TaskId{t})]);
  }
  return total;
}

std::span<const TaskId> EventGraph::topological_order() const {
  if (task_count_ == 0) return {};
  if (!ids_are_topological_) return storage_->topological_order;
  return storage_->derived->topological_order.get([&](BigVector<TaskId>& order) {
    order.resize(task_count());
    for (std::size_t t = 0; t < order.size(); ++t) order[t] = TaskId{static_cast<std::uint32_t>(t)};
  });
}

namespace {
// The predecessor lists turned around, in the order GraphParts documents: a list's order
// edge first (the program successor), then its backward data successors, then the rest,
// each group by id. One pass per group, over tasks in id order.
void derive_successors(const EventGraph& graph, detail::Adjacency& succ) {
  const std::size_t n = graph.task_count();
  succ.offset.assign(n + 1, 0);
  for (std::uint32_t v = 0; v < n; ++v) {
    for (const Adjacent& p : graph.predecessors(TaskId{v})) ++succ.offset[p.task().value + 1];
  }
  for (std::size_t t = 0; t < n; ++t) succ.offset[t + 1] += succ.offset[t];
  succ.list.resize(graph.edge_count());
  BigVector<std::uint32_t> next(succ.offset.begin(), succ.offset.end() - 1);
  const auto place = [&](auto&& takes) {
    for (std::uint32_t v = 0; v < n; ++v) {
      for (const Adjacent& p : graph.predecessors(TaskId{v})) {
        if (takes(p, v)) succ.list[next[p.task().value]++] = Adjacent(TaskId{v}, p.kind());
      }
    }
  };
  place([](const Adjacent& p, std::uint32_t) { return p.kind() == EdgeKind::Order; });
  const std::span<const TaskKind> kind = graph.kinds();
  const auto backward = [&](std::uint32_t v) {
    return kind[v] == TaskKind::B || kind[v] == TaskKind::BW;
  };
  place([&](const Adjacent& p, std::uint32_t v) {
    return p.kind() == EdgeKind::Data && backward(v);
  });
  place([&](const Adjacent& p, std::uint32_t v) {
    return p.kind() == EdgeKind::Data && !backward(v);
  });
}
}  // namespace

std::span<const Adjacent> EventGraph::derived_successors(TaskId t) const {
  const detail::Adjacency& s = storage_->derived->successors.get(
      [this](detail::Adjacency& lists) { derive_successors(*this, lists); });
  return {s.list.data() + s.offset[t.value], s.list.data() + s.offset[t.value + 1]};
}

}  // namespace perflow
