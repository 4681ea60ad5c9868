#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/huge_page_allocator.hpp"

namespace perflow {

/// Adjacency arrays are sized from the edge count, then every entry written.
template <>
struct GrowsUnwritten<Adjacent> : std::true_type {};

namespace detail {

/// How a frozen graph keeps its arrays: for the modules that build graphs (core's builders,
/// the pipeline builder, the passes) and the simulator's hot loop, not for users of graphs,
/// who read an EventGraph through its accessors and spans.

/// What a compute task costs at each place (device, chunk), by kind F, B, W, BW: a pipeline
/// graph's tasks take their duration and memory delta from here instead of from columns.
struct PlacedCosts {
  std::uint32_t chunks = 0;      ///< chunks per device
  std::vector<TimeNs> duration;  ///< entry index(device, chunk, kind)
  std::vector<double> memory_delta;

  [[nodiscard]] bool empty() const { return duration.empty(); }
  [[nodiscard]] std::size_t index(DeviceId device, std::uint32_t chunk, TaskKind kind) const {
    return place_index(device, chunks, chunk, kind);
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

/// What a frozen graph derives on first use.
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
/// pipeline builder does, in one pass): assemble() takes them over.
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

/// Everything a frozen graph holds. EventGraph reads it through views (pointers into these
/// arrays); the graph's copies share it, as they share what it derives.
struct GraphStorage {
  std::uint32_t device_count = 0;
  std::vector<LaneInfo> lanes;
  TaskColumns tasks;
  BigVector<std::uint32_t> pred_offset;
  BigVector<Adjacent> pred;
  Adjacency succ;  ///< empty when derived on first use (`derived`)
  BigVector<std::uint32_t> program_offset;
  BigVector<TaskId> program;
  BigVector<TaskId> topological_order;  ///< empty when the ids are the order
  bool has_program_order = false;
  bool ids_are_topological = false;
  std::shared_ptr<DerivedArrays> derived = std::make_shared<DerivedArrays>();
};

/// What the modules that build graphs do with a graph's storage.
class GraphAccess {
 public:
  /// A graph from arrays a builder wrote directly. Throws std::invalid_argument if their
  /// sizes disagree; the builder guarantees the rest (ids in range, edges listed in both
  /// directions, programs consistent with the order edges, an acyclic graph).
  static EventGraph assemble(GraphParts parts);
  /// A graph holding `storage`, whose arrays are complete and consistent.
  static EventGraph adopt(GraphStorage storage);
  [[nodiscard]] static const GraphStorage& storage(const EventGraph& graph) {
    return *graph.storage_;
  }
  /// `graph`'s storage to take arrays from: its own, copied first when another graph
  /// shares it. `graph` is left empty.
  [[nodiscard]] static GraphStorage take(EventGraph&& graph);
  /// Where a pipeline graph keeps its tasks' costs (per device, chunk and kind) instead of
  /// duration and memory_delta columns; null when the graph has the columns.
  [[nodiscard]] static const PlacedCosts* placed_costs(const EventGraph& graph) {
    return graph.storage_ == nullptr || graph.storage_->tasks.placed.empty()
               ? nullptr
               : &graph.storage_->tasks.placed;
  }
};

}  // namespace detail
}  // namespace perflow
