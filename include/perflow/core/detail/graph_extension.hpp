#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "perflow/core/detail/graph_storage.hpp"
#include "perflow/core/event_graph.hpp"

namespace perflow::detail {

/// What a graph pass writes: a frozen graph extended by tasks, lanes, dependences and
/// program positions, frozen again in one linear pass over the graph, without a builder's
/// copy of every task and edge. For the modules that build graphs (the passes); not for
/// users of graphs.
///
/// The base graph is read as it is while the pass runs (`graph()`); new tasks get the ids
/// after its tasks, in the order they are added. freeze() gives the graph that
/// EventGraphBuilder::extend(base) plus the same calls and freeze() would give, edge lists
/// in the same order: in each list the program edge first, then the base's data
/// dependences as the pass rewrites them (a successor list in its base order, a
/// predecessor list by source id), then the added ones in the order they were added. Columns
/// the base leaves out (stage, chunk, lane, costs by place) stay out while no added task or
/// change needs them.
///
/// Take the base by value and move it in (`GraphExtension x(std::move(graph))`): its arrays
/// become the result's; a copy is taken otherwise.
class GraphExtension {
 public:
  explicit GraphExtension(EventGraph base);

  /// The graph being extended, unchanged until freeze().
  [[nodiscard]] const EventGraph& graph() const { return base_; }
  /// Base tasks plus the tasks added so far.
  [[nodiscard]] std::size_t task_count() const { return base_.task_count() + added_.size(); }

  /// What task t (a base task, with the changes made so far, or an added one) is: for a
  /// pass that plans on the extended graph before it is frozen (a fused recipe does).
  [[nodiscard]] TaskKind kind(TaskId t) const {
    return is_base(t) ? base_.kind(t) : added_.kind[t.value - base_.task_count()];
  }
  [[nodiscard]] StageId stage(TaskId t) const {
    return is_base(t) ? base_.stage(t) : added_.stage[t.value - base_.task_count()];
  }
  [[nodiscard]] std::uint32_t chunk(TaskId t) const {
    return is_base(t) ? base_.chunk(t) : added_.chunk[t.value - base_.task_count()];
  }
  [[nodiscard]] std::uint32_t microbatch(TaskId t) const {
    return is_base(t) ? base_.microbatch(t) : added_.microbatch[t.value - base_.task_count()];
  }
  [[nodiscard]] std::uint32_t iteration(TaskId t) const {
    if (is_base(t)) return base_.iteration(t);
    return added_.iteration.empty() ? 0 : added_.iteration[t.value - base_.task_count()];
  }
  [[nodiscard]] double memory_delta(TaskId t) const {
    if (!is_base(t)) return added_.memory_delta[t.value - base_.task_count()];
    return memory_deltas_.empty() ? base_.memory_delta(t) : memory_deltas_[t.value];
  }
  /// Its TaskSpec, but `paired` as the base has it (set_paired is not seen).
  [[nodiscard]] TaskSpec spec(TaskId t) const;

  /// Room for `tasks` added tasks and `edges` added dependences.
  void reserve(std::size_t tasks, std::size_t edges);

  /// A lane on `device`, after the base's lanes and those added before it. Throws
  /// ScheduleError for an invalid device.
  LaneId add_lane(DeviceId device, std::string name);
  /// Checked as EventGraphBuilder::add_task checks it.
  TaskId add_task(const TaskSpec& spec);
  /// A data dependence, after every base dependence in both its lists.
  void add_dependence(TaskId from, TaskId to);

  /// `task` (an added one) right before base task `anchor` in anchor's lane's program, after
  /// any inserted there before it.
  void insert_before(TaskId anchor, TaskId task);
  /// `task` (an added one) at the end of its lane's program, after the base's program.
  void append_to_program(TaskId task);

  /// Changes of a base task's columns, applied at freeze().
  void set_duration(TaskId task, TimeNs duration);
  void set_memory_delta(TaskId task, double memory_delta);
  void set_paired(TaskId task);

  /// The extended graph. `rewrite(u, v, emit)` is called for each data dependence u -> v
  /// of the base, in successor-list order of u by increasing u, twice (to count, then to
  /// write); it calls `emit(w)` for each dependence u -> w that takes its place: none drops
  /// it, `emit(v)` keeps it. It must emit the same both times. Throws CycleError as
  /// EventGraphBuilder::freeze does.
  template <class Rewrite>
  [[nodiscard]] EventGraph freeze(Rewrite&& rewrite) && {
    const auto base_edges = [&](auto&& visit) {
      const auto n = static_cast<std::uint32_t>(base_.task_count());
      for (std::uint32_t u = 0; u < n; ++u) {
        for (const Adjacent& s : base_.successors(TaskId{u})) {
          if (s.kind() != EdgeKind::Data) continue;
          rewrite(TaskId{u}, s.task(), [&](TaskId w) { visit(u, s.task().value, w.value); });
        }
      }
    };
    begin_freeze();
    const auto base_n = static_cast<std::uint32_t>(base_.task_count());
    base_edges([&](std::uint32_t u, std::uint32_t v, std::uint32_t w) {
      ++succ_offset_[u + 1];
      ++pred_offset_[w + 1];
      // A dependence between base tasks that the base did not have: the base's order may
      // not respect it.
      if (w != v && w < base_n) new_base_edges_.emplace_back(TaskId{u}, TaskId{w});
    });
    place_order_edges();
    base_edges([&](std::uint32_t u, std::uint32_t, std::uint32_t w) {
      succ_[succ_offset_[u]++] = Adjacent(TaskId{w}, EdgeKind::Data);
      pred_[pred_offset_[w]++] = Adjacent(TaskId{u}, EdgeKind::Data);
    });
    return finish_freeze();
  }
  /// The base, unchanged: for a pass that finds nothing to add after all.
  [[nodiscard]] EventGraph release() && { return std::move(base_); }
  /// Keeps every base dependence.
  [[nodiscard]] EventGraph freeze() && {
    return std::move(*this).freeze([](TaskId, TaskId v, auto&& emit) { emit(v); });
  }

 private:
  void check_task(TaskId id, const char* what) const;
  void check_added(TaskId id, const char* what) const;
  void check_base(TaskId task) const;
  [[nodiscard]] bool is_base(TaskId t) const { return t.value < base_.task_count(); }
  // freeze(): the new programs and the counts of program and added edges; then the offsets
  // and the program edges, each list's cursor at its first data entry; then the added
  // edges, the offsets back, the columns and the topological order.
  void begin_freeze();
  void place_order_edges();
  EventGraph finish_freeze();
  bool merged_order(const EventGraph& g, std::size_t base_n, bool base_identity,
                    const BigVector<TaskId>& base_order, BigVector<TaskId>& order) const;

  EventGraph base_;
  std::vector<LaneInfo> lanes_;  // added lanes
  TaskColumns added_;
  BigVector<TaskId> edge_from_;  // added dependences
  BigVector<TaskId> edge_to_;
  std::vector<std::pair<TaskId, TaskId>> before_;  // (anchor, task)
  std::vector<TaskId> appended_;
  // The base's cost columns with the changes, once one is made (else empty).
  BigVector<TimeNs> durations_;
  BigVector<double> memory_deltas_;
  std::vector<TaskId> paired_;
  // Data dependences between base tasks that the rewrite made (u, w), for the order.
  std::vector<std::pair<TaskId, TaskId>> new_base_edges_;

  // Being frozen.
  BigVector<std::uint32_t> program_offset_;
  BigVector<TaskId> program_;
  BigVector<std::uint32_t> pred_offset_;
  BigVector<Adjacent> pred_;
  BigVector<std::uint32_t> succ_offset_;
  BigVector<Adjacent> succ_;
};

}  // namespace perflow::detail
