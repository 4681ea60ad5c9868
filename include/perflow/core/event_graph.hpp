#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "perflow/core/huge_page_allocator.hpp"
#include "perflow/core/id.hpp"
#include "perflow/core/task.hpp"
#include "perflow/core/time.hpp"

namespace perflow {

/// `data`: a real dependence (the successor consumes the predecessor's result), which may
/// cross devices and then pays communication. `order`: program order on one device.
enum class EdgeKind : std::uint8_t { Data, Order };

/// One end of an edge as stored in the compressed adjacency: the task at the other end and
/// the edge's kind, packed into 32 bits (task ids are below 2^31).
class Adjacent {
 public:
  constexpr Adjacent() = default;
  constexpr Adjacent(TaskId task, EdgeKind kind)
      : bits_(task.value << 1 | static_cast<std::uint32_t>(kind)) {}

  [[nodiscard]] constexpr TaskId task() const { return TaskId{bits_ >> 1}; }
  [[nodiscard]] constexpr EdgeKind kind() const { return static_cast<EdgeKind>(bits_ & 1u); }

 private:
  std::uint32_t bits_ = 0;
};

/// Adjacency arrays are sized from the edge count, then every entry written.
template <>
struct GrowsUnwritten<Adjacent> : std::true_type {};

/// Everything a builder says about one task.
struct TaskSpec {
  TaskKind kind = TaskKind::F;
  DeviceId device{0};
  StageId stage{0};
  std::uint32_t microbatch = 0;
  std::uint32_t chunk = 0;
  TimeNs duration = 0;
  /// Signed change of activation memory when the task runs (F allocates, W/BW free).
  double memory_delta = 0.0;
  /// The lane (stream) it runs on; invalid (the default) means its device's compute lane.
  LaneId lane{};
  /// The training iteration it belongs to (0 unless several iterations are simulated).
  std::uint32_t iteration = 0;
  /// The second task of an overlapped forward-backward pair (DualPipe's F&B): it runs with
  /// the task before it in its lane's program as one unit, whose span that task's box holds
  /// (this one takes no time of its own). How timelines and traces know to draw the two as
  /// one pair.
  bool paired = false;
  /// The share of each data predecessor's run after which the task may start, in [0, 1]: what
  /// it needs is produced part-way through them, as a gradient bucket is ready for its
  /// reduction once the backward has computed the bucket's last gradient, before the backward
  /// task as a whole ends. 1 (the default) waits for them to finish.
  double release_share = 1.0;
};

/// A lane: one sequential stream of work on a device. Lanes 0..devices-1 are the devices'
/// compute streams (lane d belongs to device d); communication streams are added after them.
struct LaneInfo {
  DeviceId device;
  std::string name;  ///< "compute", or e.g. "send 1>2", "dp all-reduce"
};

class EventGraph;

namespace detail {
class GraphExtension;

/// What a compute task costs at each place (device, chunk), by kind F, B, W, BW: a pipeline
/// graph's tasks take their duration and memory delta from here instead of from columns.
struct PlacedCosts {
  std::uint32_t chunks = 0;      ///< chunks per device
  std::vector<TimeNs> duration;  ///< entry index(device, chunk, kind)
  std::vector<double> memory_delta;

  [[nodiscard]] bool empty() const { return duration.empty(); }
  [[nodiscard]] std::size_t index(DeviceId device, std::uint32_t chunk, TaskKind kind) const {
    return (std::size_t{device.value} * chunks + chunk) * 4 + static_cast<std::size_t>(kind);
  }
};

/// The per-task columns (struct of arrays) shared by the builder and the frozen graph.
struct TaskColumns {
  BigVector<TaskKind> kind;
  BigVector<DeviceId> device;
  /// A frozen graph may leave it empty when every task's stage is its device (a pipeline
  /// graph does).
  BigVector<StageId> stage;
  BigVector<std::uint32_t> microbatch;
  /// A frozen graph may leave it empty when every task is in chunk 0.
  BigVector<std::uint32_t> chunk;
  /// A frozen graph may leave both empty when `placed` holds every task's costs.
  BigVector<TimeNs> duration;
  BigVector<double> memory_delta;
  PlacedCosts placed;
  /// A frozen graph may leave it empty when every task runs on its device's compute lane
  /// (freeze does whenever the graph has no communication lanes).
  BigVector<LaneId> lane;
  /// Empty while every task is in iteration 0 (one iteration: no column to pay for).
  BigVector<std::uint32_t> iteration;
  /// TaskSpec::paired; empty while no task is paired.
  BigVector<std::uint8_t> paired;
  /// TaskSpec::release_share; empty while every share is 1.
  BigVector<double> release_share;

  [[nodiscard]] std::size_t size() const { return kind.size(); }
  void reserve(std::size_t n);
  /// n rows of the kind, device and microbatch columns and of every other one that holds
  /// rows, to be written by index (contents unspecified until then). The columns left empty
  /// stay so (a frozen graph derives them).
  void resize(std::size_t n);
  void push_back(const TaskSpec& spec);
  /// Writes out every column a frozen graph left to derive (stage, lane, chunk, costs), for
  /// a builder.
  void fill_derived_columns();
  /// Each writes out one column a frozen graph may leave to derive, if it is left out.
  void write_out_stage();
  void write_out_lane();
  void write_out_chunk();
  /// The duration and memory columns from `placed`, which is then cleared; a column not
  /// asked for is left for the caller to write.
  void write_out_costs(bool durations = true, bool memory_deltas = true);
};

/// Compressed adjacency lists: task t's entries are list[offset[t], offset[t + 1]).
struct Adjacency {
  BigVector<std::uint32_t> offset;  ///< tasks + 1 entries
  BigVector<Adjacent> list;
};

/// An array a frozen graph derives from its other arrays on first use, once, whichever
/// thread asks first (a frozen graph is read from many threads at once): what a builder
/// leaves out because most runs never read it.
template <class Array>
class DerivedOnce {
 public:
  template <class Derive>
  const Array& get(Derive&& derive) const {
    if (!ready_.load(std::memory_order_acquire)) {
      const std::lock_guard lock(mutex_);
      if (!ready_.load(std::memory_order_relaxed)) {
        derive(array_);
        ready_.store(true, std::memory_order_release);
      }
    }
    return array_;
  }

 private:
  mutable std::atomic<bool> ready_{false};
  mutable std::mutex mutex_;
  mutable Array array_;
};

/// What a frozen graph derives on first use; shared by the graph's copies, which derive the
/// same arrays.
struct DerivedArrays {
  DerivedOnce<BigVector<StageId>> stage;
  DerivedOnce<BigVector<LaneId>> lane;
  DerivedOnce<BigVector<std::uint32_t>> chunk;
  DerivedOnce<BigVector<TimeNs>> duration;
  DerivedOnce<BigVector<double>> memory_delta;
  DerivedOnce<BigVector<TaskId>> topological_order;
  DerivedOnce<Adjacency> successors;
};

/// A frozen graph's arrays, for builders that write the compressed form directly (the
/// pipeline builder does, in one pass): EventGraph::assemble takes them over.
struct GraphParts {
  std::uint32_t device_count = 0;
  std::vector<LaneInfo> lanes;
  TaskColumns tasks;
  BigVector<std::uint32_t> pred_offset;  ///< tasks + 1 entries
  BigVector<Adjacent> pred;              ///< per task: its order edge first, then data edges
  /// When both are empty, the graph derives them from the predecessor lists on first use,
  /// each list in the order build_pipeline_graph's reference build gives a pipeline graph:
  /// the order edge, then the data successors that are backwards (B, BW), then the others,
  /// each group by id. Only a pipeline-shaped graph (at most one data successor of each
  /// group) gets its builder's order back that way.
  BigVector<std::uint32_t> succ_offset;
  BigVector<Adjacent> succ;
  BigVector<std::uint32_t> program_offset;  ///< lanes + 1 entries
  BigVector<TaskId> program;
  /// Empty when the ids themselves are a topological order (every edge goes from a lower
  /// to a higher id).
  BigVector<TaskId> topological_order;
};
}  // namespace detail

/// Collects tasks, dependences and per-device program orders, then `freeze()`s them into
/// an immutable EventGraph. Ids are dense and handed out in insertion order.
class EventGraphBuilder {
 public:
  explicit EventGraphBuilder(std::uint32_t device_count);
  /// A builder holding everything in `graph` (same task ids, lanes, data dependences and
  /// programs), to which more can be added: how passes such as communication lowering and
  /// data parallelism extend a built graph. `keep_dependence(from, to)`, if given, says
  /// which data dependences to carry over.
  static EventGraphBuilder extend(const EventGraph& graph,
                                  const std::function<bool(TaskId, TaskId)>& keep_dependence = {});

  /// An empty builder with `graph`'s devices and lanes (same ids and names), for passes that
  /// rebuild a graph task by task: every task and program is theirs to add.
  static EventGraphBuilder with_lanes_of(const EventGraph& graph);

  void reserve(std::size_t tasks, std::size_t edges);

  /// A communication lane on `device`; tasks name it in TaskSpec::lane. Throws
  /// ScheduleError for an invalid device.
  LaneId add_lane(DeviceId device, std::string name);

  TaskId add_task(const TaskSpec& spec);
  /// A data dependence: `to` cannot start before `from` finishes (plus communication).
  void add_dependence(TaskId from, TaskId to);
  /// Appends `task` to its lane's program; consecutive tasks get an `order` edge (made at
  /// freeze time, first in each adjacency list; data edges follow in insertion order).
  void append_to_program(TaskId task);

  [[nodiscard]] std::size_t task_count() const { return tasks_.size(); }
  [[nodiscard]] std::uint32_t device_count() const { return device_count_; }

  /// Builds the compressed graph and its topological order. Throws CycleError naming the
  /// tasks on a cycle, ScheduleError if only some tasks have a program position.
  [[nodiscard]] EventGraph freeze() &&;

 private:
  friend class EventGraph;

  void check_task(TaskId id, const char* what) const;

  std::uint32_t device_count_;
  std::vector<LaneInfo> lanes_;
  detail::TaskColumns tasks_;
  BigVector<TaskId> edge_from_;  // data dependences only
  BigVector<TaskId> edge_to_;
  std::vector<std::vector<TaskId>> programs_;  // per lane
  BigVector<std::uint8_t> in_program_;
};

/// An immutable task graph: tasks in struct-of-arrays, edges in CSR (both directions),
/// per-device program orders, and a topological order computed once at freeze time. A
/// graph assembled by a one-pass builder may leave out columns, the successor lists and the
/// identity order, and derives each on first use (see detail::GraphParts). Simulation state
/// lives outside, so one graph serves many simulations.
class EventGraph {
 public:
  EventGraph() = default;
  /// A graph from arrays a builder wrote directly. Throws std::invalid_argument if their
  /// sizes disagree; the builder guarantees the rest (ids in range, edges listed in both
  /// directions, programs consistent with the order edges, an acyclic graph).
  static EventGraph assemble(detail::GraphParts parts);

  [[nodiscard]] std::size_t task_count() const { return tasks_.size(); }
  [[nodiscard]] std::size_t edge_count() const { return pred_.size(); }
  [[nodiscard]] std::uint32_t device_count() const { return device_count_; }
  /// Lanes 0..device_count()-1 are the compute lanes; communication lanes follow.
  [[nodiscard]] std::uint32_t lane_count() const {
    return static_cast<std::uint32_t>(lanes_.size());
  }
  [[nodiscard]] const LaneInfo& lane_info(LaneId l) const { return lanes_[l.value]; }
  [[nodiscard]] std::span<const LaneInfo> lanes() const { return lanes_; }

  [[nodiscard]] TaskKind kind(TaskId t) const { return tasks_.kind[t.value]; }
  [[nodiscard]] DeviceId device(TaskId t) const { return tasks_.device[t.value]; }
  [[nodiscard]] StageId stage(TaskId t) const {
    return tasks_.stage.empty() ? StageId{tasks_.device[t.value].value} : tasks_.stage[t.value];
  }
  [[nodiscard]] std::uint32_t microbatch(TaskId t) const { return tasks_.microbatch[t.value]; }
  [[nodiscard]] std::uint32_t chunk(TaskId t) const {
    return tasks_.chunk.empty() ? 0 : tasks_.chunk[t.value];
  }
  [[nodiscard]] TimeNs duration(TaskId t) const {
    return tasks_.placed.empty() ? tasks_.duration[t.value]
                                 : tasks_.placed.duration[placed_index(t)];
  }
  [[nodiscard]] double memory_delta(TaskId t) const {
    return tasks_.placed.empty() ? tasks_.memory_delta[t.value]
                                 : tasks_.placed.memory_delta[placed_index(t)];
  }
  /// Where a pipeline graph keeps its tasks' costs (per device, chunk and kind) instead of
  /// duration and memory_delta columns; null when the graph has the columns. For passes
  /// that read every task's cost and would rather not derive the columns.
  [[nodiscard]] const detail::PlacedCosts* placed_costs() const {
    return tasks_.placed.empty() ? nullptr : &tasks_.placed;
  }
  /// `start` plus every task's duration, added one at a time in id order.
  [[nodiscard]] double total_duration(double start = 0.0) const;
  [[nodiscard]] LaneId lane(TaskId t) const {
    return tasks_.lane.empty() ? LaneId{tasks_.device[t.value].value} : tasks_.lane[t.value];
  }
  /// True when the graph has lanes besides the devices' compute lanes; when it has none,
  /// every task runs on its device's (lane(t) is device(t)).
  [[nodiscard]] bool has_communication_lanes() const { return lanes_.size() > device_count_; }
  [[nodiscard]] std::uint32_t iteration(TaskId t) const {
    return tasks_.iteration.empty() ? 0 : tasks_.iteration[t.value];
  }
  /// True when the graph holds more than one training iteration (some task's is not 0).
  [[nodiscard]] bool has_iterations() const { return !tasks_.iteration.empty(); }
  /// TaskSpec::paired: t is the second task of an overlapped pair.
  [[nodiscard]] bool paired(TaskId t) const {
    return !tasks_.paired.empty() && tasks_.paired[t.value] != 0;
  }
  /// True when some task is paired.
  [[nodiscard]] bool has_pairs() const { return !tasks_.paired.empty(); }
  /// TaskSpec::release_share of t.
  [[nodiscard]] double release_share(TaskId t) const {
    return tasks_.release_share.empty() ? 1.0 : tasks_.release_share[t.value];
  }
  /// Every task's release share, or empty while all are 1.
  [[nodiscard]] std::span<const double> release_shares() const { return tasks_.release_share; }
  /// When a task whose release share is `share` may start after a data predecessor that ran
  /// [start, finish]: start + share x (finish - start), rounded down.
  [[nodiscard]] static TimeNs released_at(TimeNs start, TimeNs finish, double share) {
    return share >= 1.0 ? finish
                        : start + static_cast<TimeNs>(share * static_cast<double>(finish - start));
  }
  /// The other task of t's overlapped pair: for a paired task, the F before it in its lane's
  /// program; for that F, the paired task after it; invalid when t is in no pair. O(1): a
  /// program's order edge comes first in both adjacency lists.
  [[nodiscard]] TaskId pair_partner(TaskId t) const;
  /// True when some task is of `kind` (a byte search of the kind column).
  [[nodiscard]] bool has_kind(TaskKind kind) const;
  /// Everything a builder said about task t (its TaskSpec).
  [[nodiscard]] TaskSpec spec(TaskId t) const;
  /// "F3.0"; with several iterations the iteration follows: "F3.0@1".
  [[nodiscard]] std::string label(TaskId t) const;
  /// label(t)'s text written at `out` (kMaxTaskLabel bytes of room) without an allocation;
  /// returns its end. What writers of a label per task call.
  char* put_label(char* out, TaskId t) const {
    return put_task_label(out, {kind(t), microbatch(t), chunk(t)}, has_iterations(), iteration(t));
  }

  [[nodiscard]] std::span<const TaskKind> kinds() const { return tasks_.kind; }
  [[nodiscard]] std::span<const DeviceId> devices() const { return tasks_.device; }
  /// The columns below may be derived, as lanes_of_tasks() and stages() are.
  [[nodiscard]] std::span<const TimeNs> durations() const;
  [[nodiscard]] std::span<const double> memory_deltas() const;
  /// The lane and stage columns. A graph whose tasks all have their device as lane or stage
  /// may store no such column; it is then written out on the first call (once, and kept).
  [[nodiscard]] std::span<const LaneId> lanes_of_tasks() const;
  [[nodiscard]] std::span<const StageId> stages() const;
  [[nodiscard]] std::span<const std::uint32_t> microbatches() const { return tasks_.microbatch; }
  [[nodiscard]] std::span<const std::uint32_t> chunks() const;

  [[nodiscard]] std::span<const Adjacent> predecessors(TaskId t) const {
    return {pred_.data() + pred_offset_[t.value], pred_.data() + pred_offset_[t.value + 1]};
  }
  /// The program successor (the order edge) first, then the data successors. A graph built
  /// in one pass derives these lists on the first call (once, and kept).
  [[nodiscard]] std::span<const Adjacent> successors(TaskId t) const {
    const detail::Adjacency& s = succ_.offset.empty() ? derived_successors() : succ_;
    return {s.list.data() + s.offset[t.value], s.list.data() + s.offset[t.value + 1]};
  }

  /// True when every task has a position in its lane's program (ordered simulation).
  [[nodiscard]] bool has_program_order() const { return has_program_order_; }
  /// The program of device d's compute lane.
  [[nodiscard]] std::span<const TaskId> program(DeviceId d) const {
    return program(LaneId{d.value});
  }
  [[nodiscard]] std::span<const TaskId> program(LaneId l) const {
    return {program_.data() + program_offset_[l.value],
            program_.data() + program_offset_[l.value + 1]};
  }

  /// Every task once, each after all its predecessors: Kahn's order with ties by task id,
  /// or the ids in order where the builder made them topological (see ids_are_topological;
  /// that array is written out on the first call, so a pass over such a graph had better
  /// loop over the ids).
  [[nodiscard]] std::span<const TaskId> topological_order() const;
  /// True when every edge goes from a lower to a higher id, so a pass over the ids in
  /// order visits each task after its predecessors (and topological_order() is 0..n-1).
  [[nodiscard]] bool ids_are_topological() const { return ids_are_topological_; }

 private:
  friend class EventGraphBuilder;
  friend class detail::GraphExtension;

  // Kahn's algorithm over the successor lists into topo_ (FIFO seeded by id); throws
  // CycleError naming the tasks of a cycle.
  void sort_topologically();

  // Inline, so that a pass calling successors() per task pays a load and a branch once the
  // lists exist.
  [[nodiscard]] const detail::Adjacency& derived_successors() const {
    return derived_->successors.get([this](detail::Adjacency& lists) { derive_successors(lists); });
  }
  void derive_successors(detail::Adjacency& lists) const;
  [[nodiscard]] std::size_t placed_index(TaskId t) const {
    return tasks_.placed.index(tasks_.device[t.value], chunk(t), tasks_.kind[t.value]);
  }

  std::uint32_t device_count_ = 0;
  std::vector<LaneInfo> lanes_;
  detail::TaskColumns tasks_;
  BigVector<std::uint32_t> pred_offset_;
  BigVector<Adjacent> pred_;
  detail::Adjacency succ_;  // empty when derived_ holds them
  BigVector<std::uint32_t> program_offset_;
  BigVector<TaskId> program_;
  BigVector<TaskId> topo_;  // empty when the ids are the order
  bool has_program_order_ = false;
  bool ids_are_topological_ = false;
  std::shared_ptr<detail::DerivedArrays> derived_ = std::make_shared<detail::DerivedArrays>();
};

}  // namespace perflow
