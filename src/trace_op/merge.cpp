// merge: the union of graph parts, joined again at their open boundaries (and at any extra
// dependences given by key).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "detail/graph_copy.hpp"
#include "perflow/core/error.hpp"
#include "perflow/trace_op/operators.hpp"

namespace perflow::trace_op {
namespace {

constexpr std::size_t kNoPart = std::numeric_limits<std::size_t>::max();

struct StageOwner {
  StageId stage;
  std::size_t part;
};

struct IndexEntry {
  TaskKey key;
  TaskId task;
};

class Merger {
 public:
  explicit Merger(std::span<const GraphPart> parts) : parts_(parts) {}

  EventGraph run(std::span<const Boundary> extra) {
    index_stages();
    check_tasks();
    index_keys();

    EventGraphBuilder builder(device_count_);
    builder.reserve(total_tasks_, total_edges_ + extra.size());
    for (const GraphPart& part : parts_) {
      const auto n = static_cast<std::uint32_t>(part.graph.task_count());
      for (std::uint32_t v = 0; v < n; ++v) {
        (void)builder.add_task(detail::task_spec(part.graph, TaskId{v}));
      }
    }
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      detail::for_each_data_edge(parts_[p].graph, [&](TaskId from, TaskId to) {
        builder.add_dependence(global(p, from), global(p, to));
      });
    }
    // Each open boundary appears in both parts it connects: join it once.
    std::vector<Boundary> open;
    for (const GraphPart& part : parts_) {
      open.insert(open.end(), part.open.begin(), part.open.end());
    }
    std::sort(open.begin(), open.end());
    open.erase(std::unique(open.begin(), open.end()), open.end());
    for (const Boundary& b : open) {
      builder.add_dependence(find(b, b.from, "open boundary"), find(b, b.to, "open boundary"));
    }
    for (const Boundary& b : extra) {
      builder.add_dependence(find(b, b.from, "extra dependence"),
                             find(b, b.to, "extra dependence"));
    }
    // Devices are disjoint across parts, so each device's program comes from one part.
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      const EventGraph& g = parts_[p].graph;
      for (std::uint32_t d = 0; d < g.device_count(); ++d) {
        for (const TaskId t : g.program(DeviceId{d})) builder.append_to_program(global(p, t));
      }
    }
    return std::move(builder).freeze();
  }

 private:
  std::string describe(std::size_t p) const {
    return fmt::format("part {} (stages {})", p, detail::format_stages(parts_[p].stages));
  }

  TaskId global(std::size_t p, TaskId local) const {
    return TaskId{static_cast<std::uint32_t>(offset_[p] + local.value)};
  }

  std::size_t owner_of(StageId stage) const {
    const auto it = std::lower_bound(owners_.begin(), owners_.end(), stage,
                                     [](const StageOwner& o, StageId s) { return o.stage < s; });
    return it != owners_.end() && it->stage == stage ? it->part : kNoPart;
  }

  // Which part holds each stage: no stage in two parts.
  void index_stages() {
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      for (const StageId s : parts_[p].stages) owners_.push_back(StageOwner{s, p});
    }
    std::stable_sort(owners_.begin(), owners_.end(),
                     [](const StageOwner& a, const StageOwner& b) { return a.stage < b.stage; });
    for (std::size_t i = 1; i < owners_.size(); ++i) {
      const StageOwner& a = owners_[i - 1];
      const StageOwner& b = owners_[i];
      if (a.stage != b.stage) continue;
      if (a.part == b.part) {
        throw ScheduleError(
            fmt::format("merge: part {} lists stage {} twice", a.part, a.stage.value));
      }
      throw ScheduleError(fmt::format("merge: stage {} is in {} and in {}", a.stage.value,
                                      describe(a.part), describe(b.part)));
    }
  }

  // Every task belongs to a stage its part lists; no device runs tasks of two parts; all
  // parts agree on the sizes and on having a program order.
  void check_tasks() {
    struct DeviceUse {
      std::size_t part = kNoPart;
      TaskId task;
    };
    std::vector<DeviceUse> device_use;
    std::optional<std::size_t> reference;  // the first part with tasks
    std::uint32_t ref_microbatches = 0;
    std::uint32_t ref_chunks = 0;
    offset_.reserve(parts_.size());
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      const EventGraph& g = parts_[p].graph;
      const auto n = static_cast<std::uint32_t>(g.task_count());
      offset_.push_back(total_tasks_);
      total_tasks_ += n;
      total_edges_ += detail::data_edge_count(g) + parts_[p].open.size();
      device_count_ = std::max(device_count_, g.device_count());
      if (device_use.size() < g.device_count()) device_use.resize(g.device_count());
      std::uint32_t microbatches = 0;
      std::uint32_t chunks = 0;
      for (std::uint32_t v = 0; v < n; ++v) {
        const TaskId t{v};
        const StageId stage = g.stage(t);
        if (const std::size_t owner = owner_of(stage); owner != p) {
          throw ScheduleError(
              owner == kNoPart
                  ? fmt::format("merge: {} has task {} of stage {}, which it does not list",
                                describe(p), g.label(t), stage.value)
                  : fmt::format("merge: {} has task {} of stage {}, which {} holds", describe(p),
                                g.label(t), stage.value, describe(owner)));
        }
        DeviceUse& use = device_use[g.device(t).value];
        if (use.part == kNoPart) {
          use = DeviceUse{p, t};
        } else if (use.part != p) {
          const EventGraph& other = parts_[use.part].graph;
          throw ScheduleError(
              fmt::format("merge: device {} runs {} of {} and {} of {}", g.device(t).value,
                          detail::key_label(detail::task_key(other, use.task)), describe(use.part),
                          detail::key_label(detail::task_key(g, t)), describe(p)));
        }
        microbatches = std::max(microbatches, g.microbatch(t) + 1);
        chunks = std::max(chunks, g.chunk(t) + 1);
      }
      if (n == 0) continue;
      if (!reference) {
        reference = p;
        ref_microbatches = microbatches;
        ref_chunks = chunks;
        has_program_order_ = g.has_program_order();
        continue;
      }
      if (microbatches != ref_microbatches) {
        throw ScheduleError(fmt::format("merge: {} has {} microbatches, but {} has {}", describe(p),
                                        microbatches, describe(*reference), ref_microbatches),
                            "microbatches");
      }
      if (chunks != ref_chunks) {
        throw ScheduleError(fmt::format("merge: {} has {} chunks, but {} has {}", describe(p),
                                        chunks, describe(*reference), ref_chunks),
                            "chunks");
      }
      if (g.has_program_order() != has_program_order_) {
        const std::size_t with = has_program_order_ ? *reference : p;
        const std::size_t without = has_program_order_ ? p : *reference;
        throw ScheduleError(fmt::format("merge: {} has a program order, but {} has none",
                                        describe(with), describe(without)));
      }
    }
  }

  // TaskKey -> merged id, sorted for binary search; a key must name one task.
  void index_keys() {
    index_.reserve(total_tasks_);
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      const EventGraph& g = parts_[p].graph;
      const auto n = static_cast<std::uint32_t>(g.task_count());
      for (std::uint32_t v = 0; v < n; ++v) {
        index_.push_back(IndexEntry{detail::task_key(g, TaskId{v}), global(p, TaskId{v})});
      }
    }
    std::sort(index_.begin(), index_.end(), [](const IndexEntry& a, const IndexEntry& b) {
      return a.key < b.key || (a.key == b.key && a.task < b.task);
    });
    for (std::size_t i = 1; i < index_.size(); ++i) {
      if (index_[i - 1].key == index_[i].key) {
        throw ScheduleError(fmt::format("merge: {} has two tasks {}",
                                        describe(owner_of(index_[i].key.stage)),
                                        detail::key_label(index_[i].key)));
      }
    }
  }

  TaskId find(const Boundary& b, const TaskKey& key, const char* what) const {
    const auto it =
        std::lower_bound(index_.begin(), index_.end(), key,
                         [](const IndexEntry& e, const TaskKey& k) { return e.key < k; });
    if (it != index_.end() && it->key == key) return it->task;
    const std::size_t owner = owner_of(key.stage);
    const std::string why = owner == kNoPart
                                ? fmt::format("no part holds stage {}", key.stage.value)
                                : fmt::format("{} has no task {}", describe(owner),
                                              task_label(key.kind, key.microbatch, key.chunk));
    throw ScheduleError(fmt::format("merge: {} {} -> {}: {}", what, detail::key_label(b.from),
                                    detail::key_label(b.to), why));
  }

  std::span<const GraphPart> parts_;
  std::vector<StageOwner> owners_;   // sorted by stage
  std::vector<std::size_t> offset_;  // first merged id of each part
  std::vector<IndexEntry> index_;    // sorted by key
  std::size_t total_tasks_ = 0;
  std::size_t total_edges_ = 0;
  std::uint32_t device_count_ = 0;
  bool has_program_order_ = false;
};

}  // namespace

EventGraph merge(std::span<const GraphPart> parts, std::span<const Boundary> extra) {
  return Merger(parts).run(extra);
}

}  // namespace perflow::trace_op
