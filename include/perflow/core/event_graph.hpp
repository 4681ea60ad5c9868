#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

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
// How a graph keeps its arrays, and the code that writes them (core/detail/graph_storage.hpp,
// core/detail/graph_extension.hpp): for the modules that build graphs.
struct GraphStorage;
struct BuilderState;
class GraphAccess;
class GraphExtension;

/// Where a compute task's costs sit in a table of costs by place: per device, its chunks,
/// each with the four compute kinds F, B, W, BW.
constexpr std::size_t place_index(DeviceId device, std::uint32_t chunks, std::uint32_t chunk,
                                  TaskKind kind) {
  return (std::size_t{device.value} * chunks + chunk) * 4 + static_cast<std::size_t>(kind);
}
}  // namespace detail

/// Collects tasks, dependences and per-device program orders, then `freeze()`s them into
/// an immutable EventGraph. Ids are dense and handed out in insertion order.
class EventGraphBuilder {
 public:
  explicit EventGraphBuilder(std::uint32_t device_count);
  ~EventGraphBuilder();
  EventGraphBuilder(EventGraphBuilder&& other) noexcept;
  EventGraphBuilder& operator=(EventGraphBuilder&& other) noexcept;
  /// A builder holding all `other` holds so far.
  EventGraphBuilder(const EventGraphBuilder& other);
  EventGraphBuilder& operator=(const EventGraphBuilder& other);

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

  [[nodiscard]] std::size_t task_count() const;
  [[nodiscard]] std::uint32_t device_count() const;

  /// Builds the compressed graph and its topological order. Throws CycleError naming the
  /// tasks on a cycle, ScheduleError if only some tasks have a program position.
  [[nodiscard]] EventGraph freeze() &&;

 private:
  friend class EventGraph;

  void check_task(TaskId id, const char* what) const;

  std::unique_ptr<detail::BuilderState> state_;
};

/// An immutable task graph: tasks in struct-of-arrays, edges in CSR (both directions),
/// per-device program orders, and a topological order computed once at freeze time. A
/// graph assembled by a one-pass builder may leave out columns, the successor lists and the
/// identity order, and derives each on first use. Copies share the arrays (a graph never
/// changes). Simulation state lives outside, so one graph serves many simulations.
class EventGraph {
 public:
  EventGraph() = default;
  EventGraph(const EventGraph&) = default;
  EventGraph& operator=(const EventGraph&) = default;
  /// The source is left empty.
  EventGraph(EventGraph&& other) noexcept : EventGraph(other) { other.clear(); }
  EventGraph& operator=(EventGraph&& other) noexcept {
    if (this != &other) {
      *this = other;
      other.clear();
    }
    return *this;
  }
  ~EventGraph() = default;

  [[nodiscard]] std::size_t task_count() const { return task_count_; }
  [[nodiscard]] std::size_t edge_count() const { return edge_count_; }
  [[nodiscard]] std::uint32_t device_count() const { return device_count_; }
  /// Lanes 0..device_count()-1 are the compute lanes; communication lanes follow.
  [[nodiscard]] std::uint32_t lane_count() const {
    return static_cast<std::uint32_t>(lanes_.size());
  }
  [[nodiscard]] const LaneInfo& lane_info(LaneId l) const { return lanes_[l.value]; }
  [[nodiscard]] std::span<const LaneInfo> lanes() const { return lanes_; }

  [[nodiscard]] TaskKind kind(TaskId t) const { return kind_[t.value]; }
  [[nodiscard]] DeviceId device(TaskId t) const { return device_[t.value]; }
  [[nodiscard]] StageId stage(TaskId t) const {
    return stage_ == nullptr ? StageId{device_[t.value].value} : stage_[t.value];
  }
  [[nodiscard]] std::uint32_t microbatch(TaskId t) const { return microbatch_[t.value]; }
  [[nodiscard]] std::uint32_t chunk(TaskId t) const {
    return chunk_ == nullptr ? 0 : chunk_[t.value];
  }
  [[nodiscard]] TimeNs duration(TaskId t) const { return duration_[cost_index(t)]; }
  [[nodiscard]] double memory_delta(TaskId t) const { return memory_delta_[cost_index(t)]; }
  /// `start` plus every task's duration, added one at a time in id order.
  [[nodiscard]] double total_duration(double start = 0.0) const;
  [[nodiscard]] LaneId lane(TaskId t) const {
    return lane_ == nullptr ? LaneId{device_[t.value].value} : lane_[t.value];
  }
  /// True when the graph has lanes besides the devices' compute lanes; when it has none,
  /// every task runs on its device's (lane(t) is device(t)).
  [[nodiscard]] bool has_communication_lanes() const { return lanes_.size() > device_count_; }
  [[nodiscard]] std::uint32_t iteration(TaskId t) const {
    return iteration_ == nullptr ? 0 : iteration_[t.value];
  }
  /// True when the graph holds more than one training iteration (some task's is not 0).
  [[nodiscard]] bool has_iterations() const { return iteration_ != nullptr; }
  /// TaskSpec::paired: t is the second task of an overlapped pair.
  [[nodiscard]] bool paired(TaskId t) const { return paired_ != nullptr && paired_[t.value] != 0; }
  /// True when some task is paired.
  [[nodiscard]] bool has_pairs() const { return paired_ != nullptr; }
  /// TaskSpec::release_share of t.
  [[nodiscard]] double release_share(TaskId t) const {
    return release_share_.empty() ? 1.0 : release_share_[t.value];
  }
  /// Every task's release share, or empty while all are 1.
  [[nodiscard]] std::span<const double> release_shares() const { return release_share_; }
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

  [[nodiscard]] std::span<const TaskKind> kinds() const { return {kind_, task_count_}; }
  [[nodiscard]] std::span<const DeviceId> devices() const { return {device_, task_count_}; }
  /// The columns below may be derived, as lanes_of_tasks() and stages() are.
  [[nodiscard]] std::span<const TimeNs> durations() const;
  [[nodiscard]] std::span<const double> memory_deltas() const;
  /// The lane and stage columns. A graph whose tasks all have their device as lane or stage
  /// may store no such column; it is then written out on the first call (once, and kept).
  [[nodiscard]] std::span<const LaneId> lanes_of_tasks() const;
  [[nodiscard]] std::span<const StageId> stages() const;
  [[nodiscard]] std::span<const std::uint32_t> microbatches() const {
    return {microbatch_, task_count_};
  }
  [[nodiscard]] std::span<const std::uint32_t> chunks() const;

  [[nodiscard]] std::span<const Adjacent> predecessors(TaskId t) const {
    return {pred_ + pred_offset_[t.value], pred_ + pred_offset_[t.value + 1]};
  }
  /// The program successor (the order edge) first, then the data successors. A graph built
  /// in one pass derives these lists on the first call (once, and kept).
  [[nodiscard]] std::span<const Adjacent> successors(TaskId t) const {
    if (succ_offset_ == nullptr) return derived_successors(t);
    return {succ_ + succ_offset_[t.value], succ_ + succ_offset_[t.value + 1]};
  }

  /// True when every task has a position in its lane's program (ordered simulation).
  [[nodiscard]] bool has_program_order() const { return has_program_order_; }
  /// The program of device d's compute lane.
  [[nodiscard]] std::span<const TaskId> program(DeviceId d) const {
    return program(LaneId{d.value});
  }
  [[nodiscard]] std::span<const TaskId> program(LaneId l) const {
    return {program_ + program_offset_[l.value], program_ + program_offset_[l.value + 1]};
  }

  /// Every task once, each after all its predecessors: Kahn's order with ties by task id; a
  /// graph a pass extended keeps its base's order with each added task right after its
  /// predecessors; or the ids in order where the builder made them topological (see
  /// ids_are_topological; that array is written out on the first call, so a pass over such
  /// a graph had better loop over the ids).
  [[nodiscard]] std::span<const TaskId> topological_order() const;
  /// True when every edge goes from a lower to a higher id, so a pass over the ids in
  /// order visits each task after its predecessors (and topological_order() is 0..n-1).
  [[nodiscard]] bool ids_are_topological() const { return ids_are_topological_; }

 private:
  friend class EventGraphBuilder;
  friend class detail::GraphAccess;
  friend class detail::GraphExtension;

  // The views below, read from storage_.
  void bind();
  void clear() noexcept {
    const EventGraph empty;
    *this = empty;
  }
  // Kahn's algorithm over the successor lists into the storage's topological order (FIFO
  // seeded by id); throws CycleError naming the tasks of a cycle.
  void sort_topologically();
  // Task t's successor list where the lists are derived on first use.
  [[nodiscard]] std::span<const Adjacent> derived_successors(TaskId t) const;
  [[nodiscard]] std::size_t cost_index(TaskId t) const {
    return placed_chunks_ == 0
               ? t.value
               : detail::place_index(device_[t.value], placed_chunks_, chunk(t), kind_[t.value]);
  }

  std::shared_ptr<detail::GraphStorage> storage_;
  // Views into storage_, so that the accessors above are a load or two. A column the graph
  // leaves out is null (its fallback applies); costs are per task, or per place when
  // placed_chunks_ is not 0 (a pipeline graph's).
  std::size_t task_count_ = 0;
  std::size_t edge_count_ = 0;
  std::uint32_t device_count_ = 0;
  std::span<const LaneInfo> lanes_;
  const TaskKind* kind_ = nullptr;
  const DeviceId* device_ = nullptr;
  const StageId* stage_ = nullptr;
  const std::uint32_t* microbatch_ = nullptr;
  const std::uint32_t* chunk_ = nullptr;
  const TimeNs* duration_ = nullptr;
  const double* memory_delta_ = nullptr;
  std::uint32_t placed_chunks_ = 0;
  const LaneId* lane_ = nullptr;
  const std::uint32_t* iteration_ = nullptr;
  const std::uint8_t* paired_ = nullptr;
  std::span<const double> release_share_;
  const std::uint32_t* pred_offset_ = nullptr;
  const Adjacent* pred_ = nullptr;
  const std::uint32_t* succ_offset_ = nullptr;  // null: derived on first use
  const Adjacent* succ_ = nullptr;
  const std::uint32_t* program_offset_ = nullptr;
  const TaskId* program_ = nullptr;
  bool has_program_order_ = false;
  bool ids_are_topological_ = false;
};

}  // namespace perflow
