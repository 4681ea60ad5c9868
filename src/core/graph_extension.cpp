#include "perflow/core/detail/graph_extension.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "detail/task_admission.hpp"
#include "perflow/core/error.hpp"

namespace perflow::detail {

GraphExtension::GraphExtension(EventGraph base) : base_(std::move(base)) {}

void GraphExtension::reserve(std::size_t tasks, std::size_t edges) {
  added_.reserve(tasks);
  // Each added task is inserted or appended once; room not written costs nothing.
  before_.reserve(tasks);
  appended_.reserve(tasks);
  edge_from_.reserve(edges);
  edge_to_.reserve(edges);
}

LaneId GraphExtension::add_lane(DeviceId device, std::string name) {
  if (device.value >= base_.device_count()) {
    throw ScheduleError(fmt::format("lane {} is placed on device {}, but the graph has {} devices",
                                    name, device.value, base_.device_count()));
  }
  lanes_.push_back({device, std::move(name)});
  return LaneId{static_cast<std::uint32_t>(base_.lane_count() + lanes_.size() - 1)};
}

TaskId GraphExtension::add_task(const TaskSpec& spec) {
  std::optional<DeviceId> lane_owner;
  if (spec.lane.valid()) {
    const std::size_t base_lanes = base_.lane_count();
    if (spec.lane.value < base_lanes) {
      lane_owner = base_.lane_info(spec.lane).device;
    } else if (spec.lane.value < base_lanes + lanes_.size()) {
      lane_owner = lanes_[spec.lane.value - base_lanes].device;
    }
  }
  detail::check_new_task(spec, base_.device_count(), task_count(), lane_owner);
  const TaskId id{static_cast<std::uint32_t>(task_count())};
  added_.push_back(spec);
  return id;
}

TaskSpec GraphExtension::spec(TaskId t) const {
  if (is_base(t)) {
    TaskSpec s = base_.spec(t);
    if (!durations_.empty()) s.duration = durations_[t.value];
    if (!memory_deltas_.empty()) s.memory_delta = memory_deltas_[t.value];
    return s;
  }
  const std::size_t i = t.value - base_.task_count();
  const TaskColumns& a = added_;
  return TaskSpec{a.kind[i],
                  a.device[i],
                  a.stage[i],
                  a.microbatch[i],
                  a.chunk[i],
                  a.duration[i],
                  a.memory_delta[i],
                  a.lane[i],
                  a.iteration.empty() ? 0 : a.iteration[i],
                  !a.paired.empty() && a.paired[i] != 0,
                  a.release_share.empty() ? 1.0 : a.release_share[i]};
}

void GraphExtension::check_task(TaskId id, const char* what) const {
  if (id.value >= task_count()) {
    throw ScheduleError(fmt::format("{}: task id {} does not exist (the graph has {} tasks)", what,
                                    id.value, task_count()));
  }
}

void GraphExtension::check_added(TaskId id, const char* what) const {
  check_task(id, what);
  if (id.value < base_.task_count()) {
    throw std::logic_error(fmt::format("{}: task id {} is not an added task", what, id.value));
  }
}

void GraphExtension::add_dependence(TaskId from, TaskId to) {
  check_task(from, "dependence source");
  check_task(to, "dependence target");
  if (from == to) {
    throw ScheduleError(fmt::format("task id {} cannot depend on itself", from.value));
  }
  edge_from_.push_back(from);
  edge_to_.push_back(to);
}

void GraphExtension::insert_before(TaskId anchor, TaskId task) {
  check_added(task, "program entry");
  if (anchor.value >= base_.task_count()) {
    throw std::logic_error("GraphExtension::insert_before: the anchor is not a base task");
  }
  before_.emplace_back(anchor, task);
}

void GraphExtension::append_to_program(TaskId task) {
  check_added(task, "program entry");
  appended_.push_back(task);
}

void GraphExtension::set_duration(TaskId task, TimeNs duration) {
  check_base(task);
  if (durations_.empty()) {
    const std::size_t n = base_.task_count();
    durations_.reserve((n + added_.kind.capacity()) * 3 / 2);
    durations_.resize(n);
    for (std::uint32_t t = 0; t < n; ++t) durations_[t] = base_.duration(TaskId{t});
  }
  durations_[task.value] = duration;
}

void GraphExtension::set_memory_delta(TaskId task, double memory_delta) {
  check_base(task);
  if (memory_deltas_.empty()) {
    const std::size_t n = base_.task_count();
    memory_deltas_.reserve((n + added_.kind.capacity()) * 3 / 2);
    memory_deltas_.resize(n);
    for (std::uint32_t t = 0; t < n; ++t) memory_deltas_[t] = base_.memory_delta(TaskId{t});
  }
  memory_deltas_[task.value] = memory_delta;
}

void GraphExtension::check_base(TaskId task) const {
  if (task.value >= base_.task_count()) {
    throw std::logic_error(
        fmt::format("GraphExtension: task id {} is not a base task", task.value));
  }
}

void GraphExtension::set_paired(TaskId task) {
  check_base(task);
  paired_.push_back(task);
}

void GraphExtension::begin_freeze() {
  const auto base_n = static_cast<std::uint32_t>(base_.task_count());
  const std::size_t n = task_count();
  const std::uint32_t base_lanes = base_.lane_count();
  const std::size_t lanes = base_lanes + lanes_.size();
  const auto lane_of_added = [&](TaskId t) { return added_.lane[t.value - base_n].value; };

  // The appended tasks grouped by lane and the inserted ones by anchor, each group in the
  // order of the calls (counting sorts). A pass that inserts while walking the programs in
  // order (recomputation does) makes its calls in program order already: the programs are
  // then merged with them as they are, without the sort (fast_programs).
  std::vector<std::uint32_t> append_offset(lanes + 1, 0);
  for (const TaskId t : appended_) ++append_offset[lane_of_added(t) + 1];
  for (std::size_t l = 0; l < lanes; ++l) append_offset[l + 1] += append_offset[l];
  std::vector<TaskId> append(appended_.size());
  for (const TaskId t : appended_) append[append_offset[lane_of_added(t)]++] = t;
  for (std::size_t l = lanes; l > 0; --l) append_offset[l] = append_offset[l - 1];
  append_offset[0] = 0;

  program_offset_.assign(lanes + 1, 0);
  program_.reserve((base_.has_program_order() ? base_.task_count() : 0) + before_.size() +
                   appended_.size());
  // Every lane's program: per base task, the tasks inserted before it (`insert(t)` pushes
  // them), then the task; then the lane's appended tasks.
  const auto merge_programs = [&](auto&& insert) {
    program_.clear();
    for (std::size_t l = 0; l < lanes; ++l) {
      if (l < base_lanes) {
        for (const TaskId t : base_.program(LaneId{static_cast<std::uint32_t>(l)})) {
          insert(t, l);
          program_.push_back(t);
        }
      }
      program_.insert(program_.end(), append.begin() + append_offset[l],
                      append.begin() + append_offset[l + 1]);
      program_offset_[l + 1] = static_cast<std::uint32_t>(program_.size());
    }
  };
  const auto check_lane = [&](TaskId task, std::size_t lane) {
    if (lane_of_added(task) != lane) {
      throw std::logic_error("GraphExtension::insert_before: the task is on another lane");
    }
  };
  std::size_t next = 0;  // the next insert_before call, while they come in program order
  merge_programs([&](TaskId t, std::size_t lane) {
    for (; next < before_.size() && before_[next].first == t; ++next) {
      check_lane(before_[next].second, lane);
      program_.push_back(before_[next].second);
    }
  });
  if (next != before_.size()) {
    BigVector<std::uint32_t> before_offset(std::size_t{base_n} + 1, 0);
    for (const auto& [anchor, task] : before_) {
      check_lane(task, base_.lane(anchor).value);
      ++before_offset[anchor.value + 1];
    }
    for (std::size_t t = 0; t < base_n; ++t) before_offset[t + 1] += before_offset[t];
    BigVector<TaskId> before(before_.size());
    for (const auto& [anchor, task] : before_) before[before_offset[anchor.value]++] = task;
    for (std::size_t t = base_n; t > 0; --t) before_offset[t] = before_offset[t - 1];
    before_offset[0] = 0;
    merge_programs([&](TaskId t, std::size_t) {
      for (std::uint32_t i = before_offset[t.value]; i < before_offset[t.value + 1]; ++i) {
        program_.push_back(before[i]);
      }
    });
  }
  if (!program_.empty() && program_.size() != n) {
    throw ScheduleError(fmt::format("{} of the extended graph's {} tasks have a place in a program",
                                    program_.size(), n));
  }

  pred_offset_.assign(n + 1, 0);
  succ_offset_.assign(n + 1, 0);
  for (std::size_t l = 0; l < lanes; ++l) {
    for (std::uint32_t i = program_offset_[l] + 1; i < program_offset_[l + 1]; ++i) {
      ++succ_offset_[program_[i - 1].value + 1];
      ++pred_offset_[program_[i].value + 1];
    }
  }
  for (std::size_t e = 0; e < edge_from_.size(); ++e) {
    ++succ_offset_[edge_from_[e].value + 1];
    ++pred_offset_[edge_to_[e].value + 1];
  }
}

void GraphExtension::place_order_edges() {
  const std::size_t n = task_count();
  for (std::size_t t = 0; t < n; ++t) {
    pred_offset_[t + 1] += pred_offset_[t];
    succ_offset_[t + 1] += succ_offset_[t];
  }
  pred_.resize(pred_offset_[n]);
  succ_.resize(succ_offset_[n]);
  // Each offset is its list's cursor until finish_freeze puts them back.
  for (std::size_t l = 0; l + 1 < program_offset_.size(); ++l) {
    for (std::uint32_t i = program_offset_[l] + 1; i < program_offset_[l + 1]; ++i) {
      const TaskId before = program_[i - 1];
      const TaskId after = program_[i];
      succ_[succ_offset_[before.value]++] = Adjacent(after, EdgeKind::Order);
      pred_[pred_offset_[after.value]++] = Adjacent(before, EdgeKind::Order);
    }
  }
}

namespace {
// Room for `total` rows, and half as many again when the column must move: a later pass
// then appends in place (room not written costs no memory until it is).
template <class T>
void make_room(BigVector<T>& column, std::size_t total) {
  if (column.capacity() < total) column.reserve(total + total / 2);
}

// Appends `added`'s rows of a column to `column`.
template <class T>
void append_column(BigVector<T>& column, const BigVector<T>& added, std::size_t total) {
  make_room(column, total);
  column.insert(column.end(), added.begin(), added.end());
}

// A column left empty while every value is `fallback` (iteration, paired, release share):
// stays empty while both sides are, else holds the base's rows then the added ones, either
// side's missing rows written as `fallback`.
template <class T>
void append_optional_column(BigVector<T>& column, const BigVector<T>& added, std::size_t base_n,
                            std::size_t total, T fallback) {
  if (added.empty() && column.empty()) return;
  if (column.empty()) column.assign(base_n, fallback);
  if (added.empty()) {
    column.resize(total, fallback);
  } else {
    append_column(column, added, total);
  }
}
}  // namespace

EventGraph GraphExtension::finish_freeze() {
  const std::size_t n = task_count();
  const std::size_t base_n = base_.task_count();
  for (std::size_t e = 0; e < edge_from_.size(); ++e) {
    succ_[succ_offset_[edge_from_[e].value]++] = Adjacent(edge_to_[e], EdgeKind::Data);
    pred_[pred_offset_[edge_to_[e].value]++] = Adjacent(edge_from_[e], EdgeKind::Data);
  }
  for (std::size_t t = n; t > 0; --t) {
    pred_offset_[t] = pred_offset_[t - 1];
    succ_offset_[t] = succ_offset_[t - 1];
  }
  pred_offset_[0] = 0;
  succ_offset_[0] = 0;

  // The columns: the base's, written out where an added row or a change needs it.
  GraphStorage base = GraphAccess::take(std::move(base_));
  TaskColumns c = std::move(base.tasks);
  const TaskColumns& a = added_;
  const std::size_t added = a.size();
  bool stage = !c.stage.empty(), chunk = !c.chunk.empty(), lane = !c.lane.empty();
  for (std::size_t i = 0; i < added; ++i) {
    stage = stage || a.stage[i].value != a.device[i].value;
    chunk = chunk || a.chunk[i] != 0;
    lane = lane || a.lane[i].value != a.device[i].value;
  }
  const bool costs = added > 0 || !durations_.empty() || !memory_deltas_.empty();
  if (stage && c.stage.empty()) make_room(c.stage, n);
  if (chunk && c.chunk.empty()) make_room(c.chunk, n);
  if (lane && c.lane.empty()) make_room(c.lane, n);
  if (costs && !c.placed.empty()) {
    if (durations_.empty()) make_room(c.duration, n);
    if (memory_deltas_.empty()) make_room(c.memory_delta, n);
  }
  if (stage) c.write_out_stage();
  if (chunk) c.write_out_chunk();
  if (lane) c.write_out_lane();
  if (costs) {
    c.write_out_costs(durations_.empty(), memory_deltas_.empty());
    if (!durations_.empty()) c.duration = std::move(durations_);
    if (!memory_deltas_.empty()) c.memory_delta = std::move(memory_deltas_);
  }
  if (added > 0) {
    append_column(c.kind, a.kind, n);
    append_column(c.device, a.device, n);
    append_column(c.microbatch, a.microbatch, n);
    if (stage) append_column(c.stage, a.stage, n);
    if (chunk) append_column(c.chunk, a.chunk, n);
    if (lane) append_column(c.lane, a.lane, n);
    append_column(c.duration, a.duration, n);
    append_column(c.memory_delta, a.memory_delta, n);
    append_optional_column(c.iteration, a.iteration, base_n, n, std::uint32_t{0});
    append_optional_column(c.paired, a.paired, base_n, n, std::uint8_t{0});
    append_optional_column(c.release_share, a.release_share, base_n, n, 1.0);
  }
  if (!paired_.empty() && c.paired.empty()) c.paired.assign(n, 0);
  for (const TaskId t : paired_) c.paired[t.value] = 1;

  GraphStorage s;
  s.device_count = base.device_count;
  s.lanes = std::move(base.lanes);
  s.lanes.insert(s.lanes.end(), std::make_move_iterator(lanes_.begin()),
                 std::make_move_iterator(lanes_.end()));
  s.tasks = std::move(c);
  s.pred_offset = std::move(pred_offset_);
  s.pred = std::move(pred_);
  s.succ.offset = std::move(succ_offset_);
  s.succ.list = std::move(succ_);
  s.has_program_order = n > 0 && program_.size() == n;
  s.program_offset = std::move(program_offset_);
  s.program = std::move(program_);
  if (s.lanes.size() <= s.device_count) s.tasks.lane = {};
  const bool base_identity = base.ids_are_topological;
  const BigVector<TaskId> base_order = std::move(base.topological_order);
  base = GraphStorage{};  // the base's other arrays are freed before the order is sorted
  EventGraph g = GraphAccess::adopt(std::move(s));
  if (BigVector<TaskId> order; merged_order(g, base_n, base_identity, base_order, order)) {
    g.storage_->topological_order = std::move(order);
  } else {
    g.sort_topologically();
  }
  return g;
}

namespace {
// Kahn's order over the added tasks and the edges between them, seeded by id: into
// `sequence` as indices from 0 (task base_n + i). False on a cycle among them.
bool added_in_topological_order(const EventGraph& g, std::size_t base_n,
                                BigVector<std::uint32_t>& sequence) {
  const std::size_t added = g.task_count() - base_n;
  BigVector<std::uint32_t> waiting(added, 0);  // added predecessors not yet placed
  sequence.clear();
  sequence.reserve(added);
  for (std::size_t a = 0; a < added; ++a) {
    for (const Adjacent& p : g.predecessors(TaskId{static_cast<std::uint32_t>(base_n + a)})) {
      if (p.task().value >= base_n) ++waiting[a];
    }
    if (waiting[a] == 0) sequence.push_back(static_cast<std::uint32_t>(a));
  }
  for (std::size_t head = 0; head < sequence.size(); ++head) {
    const TaskId v{static_cast<std::uint32_t>(base_n + sequence[head])};
    for (const Adjacent& s : g.successors(v)) {
      const std::uint32_t w = s.task().value;
      if (w >= base_n && --waiting[w - base_n] == 0) {
        sequence.push_back(static_cast<std::uint32_t>(w - base_n));
      }
    }
  }
  return sequence.size() == added;
}
}  // namespace

// The base's order with each added task right after the last of its predecessors, added
// tasks after the same base task by id (or, when an added task feeds one added before it,
// in Kahn's order over the added tasks): a topological order that visits tasks near where
// the base's order did, so a pass over it reads the columns almost in order (Kahn's order
// jumps between the base's tasks and the added ones). False when
// an edge goes backwards in it (a dependence the pass added between base tasks, or an
// added task after its base consumer); the caller sorts then.
//
// Only the edges the pass made need checking: an edge between base tasks that the base had
// keeps its order (the base's order is topological, and a program's order edge between two
// base tasks is one the base had: an inserted task splits it, an appended one follows it).
// An added task comes after each of its predecessors by construction; what is left are its
// edges to base tasks, and the dependences between base tasks the pass added or rewrote.
bool GraphExtension::merged_order(const EventGraph& g, std::size_t base_n, bool base_identity,
                                  const BigVector<TaskId>& base_order,
                                  BigVector<TaskId>& order) const {
  const std::size_t n = g.task_count();
  if (n == 0) return true;
  BigVector<std::uint32_t> position;  // of each base task in the base order
  if (!base_identity) {
    position.resize(base_n);
    for (std::uint32_t i = 0; i < base_n; ++i) position[base_order[i].value] = i;
  }
  const auto position_of = [&](std::uint32_t u) { return base_identity ? u : position[u]; };
  const auto before = [&](TaskId u, TaskId w) {
    return position_of(u.value) < position_of(w.value);
  };
  for (const auto& [u, w] : new_base_edges_) {
    if (!before(u, w)) return false;
  }
  for (std::size_t e = 0; e < edge_from_.size(); ++e) {
    if (edge_from_[e].value < base_n && edge_to_[e].value < base_n &&
        !before(edge_from_[e], edge_to_[e])) {
      return false;
    }
  }
  // The added tasks in an order that visits each after its added predecessors: by id, or,
  // when a pass made an edge from an added task to one added before it (offloading's copy
  // back into the R that recomputation added first), Kahn's order over the added tasks
  // alone, seeded by id.
  const std::size_t added = n - base_n;
  const auto feeds_an_earlier_one = [&] {
    for (auto v = static_cast<std::uint32_t>(base_n); v < n; ++v) {
      for (const Adjacent& p : g.predecessors(TaskId{v})) {
        if (p.task().value > v) return true;
      }
    }
    return false;
  };
  BigVector<std::uint32_t> sequence;  // empty: by id
  if (feeds_an_earlier_one() && !added_in_topological_order(g, base_n, sequence)) {
    return false;  // a cycle among the added tasks
  }
  // Per added task: 1 + the position of the last base task it follows (0: none); it goes
  // right before the base task at that position.
  BigVector<std::uint32_t> attach(added);
  std::vector<std::uint32_t> count(base_n + 2, 0);
  for (std::size_t i = 0; i < added; ++i) {
    const std::size_t a = sequence.empty() ? i : sequence[i];
    const auto v = static_cast<std::uint32_t>(base_n + a);
    std::uint32_t at = 0;
    for (const Adjacent& p : g.predecessors(TaskId{v})) {
      const std::uint32_t u = p.task().value;
      at = std::max(at, u < base_n ? position_of(u) + 1 : attach[u - base_n]);
    }
    attach[a] = at;
    ++count[at + 1];
  }
  // An added task's base successors must come after its place.
  for (std::size_t a = 0; a < added; ++a) {
    for (const Adjacent& s : g.successors(TaskId{static_cast<std::uint32_t>(base_n + a)})) {
      const std::uint32_t w = s.task().value;
      if (w < base_n && position_of(w) < attach[a]) return false;
    }
  }
  for (std::size_t k = 0; k + 1 < count.size(); ++k) count[k + 1] += count[k];
  order.resize(n);
  std::size_t next = 0;
  // Added tasks grouped by attach point, in the sequence's order within a group.
  BigVector<std::uint32_t> grouped(added);
  for (std::size_t i = 0; i < added; ++i) {
    const std::size_t a = sequence.empty() ? i : sequence[i];
    grouped[count[attach[a]]++] = static_cast<std::uint32_t>(base_n + a);
  }
  std::size_t g_at = 0;
  for (std::uint32_t k = 0; k <= base_n; ++k) {
    for (; g_at < added && attach[grouped[g_at] - base_n] == k; ++g_at) {
      order[next++] = TaskId{grouped[g_at]};
    }
    if (k < base_n) order[next++] = base_identity ? TaskId{k} : base_order[k];
  }
  return true;
}

}  // namespace perflow::detail
