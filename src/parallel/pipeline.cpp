#include "perflow/parallel/pipeline.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::parallel {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// Slots per (microbatch, position): forward, backward (B or BW), weight (W).
enum Slot : std::uint32_t { kForward = 0, kBackward = 1, kWeight = 2, kSlots = 3 };

Slot slot_of(TaskKind kind) {
  switch (kind) {
    case TaskKind::F:
      return kForward;
    case TaskKind::B:
    case TaskKind::BW:
      return kBackward;
    case TaskKind::W:
      return kWeight;
    case TaskKind::Send:  // schedules place compute only
    case TaskKind::AllReduce:
    case TaskKind::Optimizer:
    case TaskKind::Recv:
    case TaskKind::Sync:
    case TaskKind::R:
    case TaskKind::D2H:
    case TaskKind::H2D:
    case TaskKind::A2A:
      break;
  }
  return kForward;
}

}  // namespace

void split_fused_backward(PipelinePlan& plan) {
  for (std::size_t d = 0; d < plan.programs.size(); ++d) {
    auto& program = plan.programs[d];
    // Each BW before a pair's F moves it one step later.
    if (d < plan.overlapped_pairs.size()) {
      std::uint32_t fused = 0;
      std::size_t next = 0;
      for (std::uint32_t& position : plan.overlapped_pairs[d]) {
        for (; next < position; ++next) fused += program[next].kind == TaskKind::BW ? 1u : 0u;
        position += fused;
      }
    }
    std::vector<Step> split;
    split.reserve(program.size() + program.size() / 2);
    for (const Step& step : program) {
      if (step.kind == TaskKind::BW) {
        split.push_back({TaskKind::B, step.microbatch, step.chunk});
        split.push_back({TaskKind::W, step.microbatch, step.chunk});
      } else {
        split.push_back(step);
      }
    }
    program = std::move(split);
  }
}

namespace {

// The position of `step`, run on `device`, after the checks both builds make (same
// messages): a compute kind, microbatch and chunk in range, a position in the layout.
std::uint32_t checked_position(const PipelinePlan& plan, const PipelineLayout& layout,
                               std::uint32_t device, const Step& step) {
  const auto where = [&] {  // only formatted on error: the callers' loops are hot
    return fmt::format("{} on device {}", task_label(step.kind, step.microbatch, step.chunk),
                       device);
  };
  if (!is_compute(step.kind)) {
    throw ScheduleError(fmt::format("{}: a schedule places F, B, W and BW tasks only", where()));
  }
  if (step.microbatch >= plan.microbatches || step.chunk >= plan.chunks) {
    throw ScheduleError(fmt::format("{}: microbatch or chunk out of range (m={}, chunks={})",
                                    where(), plan.microbatches, plan.chunks));
  }
  const std::uint32_t position = layout.position(step.microbatch, device, step.chunk);
  if (position == PipelineLayout::kNone) {
    throw ScheduleError(fmt::format("{}: microbatch {} does not run chunk {} in this layout",
                                    where(), step.microbatch, step.chunk));
  }
  return position;
}

// A step placed twice.
[[noreturn]] void repeated_step(std::uint32_t device, const Step& step) {
  throw ScheduleError(fmt::format("{} on device {}: appears more than once",
                                  task_label(step.kind, step.microbatch, step.chunk), device));
}

// The plain build through EventGraphBuilder (tasks in device-major program order, Kahn's
// topological order at freeze). The one-pass build below falls back to it for the inputs it
// refuses, so every error reads as this path words it: a deadlock as a CycleError naming
// the tasks on the cycle, a negative cost as the builder's message.
EventGraph build_through_builder(const PipelinePlan& plan, const CostTable& costs) {
  if (plan.programs.size() != plan.stages) {
    throw ScheduleError(fmt::format("the plan has {} device programs for {} stages",
                                    plan.programs.size(), plan.stages));
  }
  const PipelineLayout layout(plan.shape, plan.stages, plan.chunks, plan.microbatches);
  const std::uint32_t positions = layout.positions();
  const std::size_t slots = std::size_t{plan.microbatches} * positions * kSlots;
  std::vector<std::uint32_t> task_at(slots, kNone);
  const auto slot_index = [&](std::uint32_t microbatch, std::uint32_t position, Slot slot) {
    return (std::size_t{microbatch} * positions + position) * kSlots + slot;
  };

  std::size_t task_count = 0;
  for (const auto& program : plan.programs) task_count += program.size();
  EventGraphBuilder builder(plan.stages);
  builder.reserve(task_count, task_count * 2);

  // Tasks in device-major program order: ids follow execution, which keeps the
  // simulation's memory accesses sequential.
  bool any_fused = false;
  std::vector<TaskKind> kinds;  // by task id, to check fused/split per slot below
  kinds.reserve(task_count);
  for (std::uint32_t device = 0; device < plan.stages; ++device) {
    for (const Step& step : plan.programs[device]) {
      const std::uint32_t position = checked_position(plan, layout, device, step);
      std::uint32_t& entry = task_at[slot_index(step.microbatch, position, slot_of(step.kind))];
      if (entry != kNone) repeated_step(device, step);
      any_fused = any_fused || step.kind == TaskKind::BW;
      const TaskCosts& c = costs.at(StageId{device}, step.chunk);
      const TaskId id =
          builder.add_task(TaskSpec{step.kind, DeviceId{device}, StageId{device}, step.microbatch,
                                    step.chunk, c.duration(step.kind), c.memory_delta(step.kind)});
      entry = id.value;
      kinds.push_back(step.kind);
      builder.append_to_program(id);
    }
  }

  // Every (microbatch, position) needs an F and either a BW, or a B and a W.
  for (std::uint32_t mb = 0; mb < plan.microbatches; ++mb) {
    for (std::uint32_t pos = 0; pos < positions; ++pos) {
      const std::uint32_t f = task_at[slot_index(mb, pos, kForward)];
      const std::uint32_t b = task_at[slot_index(mb, pos, kBackward)];
      const std::uint32_t w = task_at[slot_index(mb, pos, kWeight)];
      const auto missing = [&](TaskKind kind) {
        return ScheduleError(fmt::format("{} is missing from the program of device {}",
                                         task_label(kind, mb, layout.chunk_of(mb, pos)),
                                         layout.device_of(mb, pos)));
      };
      if (f == kNone) throw missing(TaskKind::F);
      if (b == kNone) throw missing(w != kNone || !any_fused ? TaskKind::B : TaskKind::BW);
      const bool fused = kinds[b] == TaskKind::BW;
      if (!fused && w == kNone) throw missing(TaskKind::W);
      if (fused && w != kNone) {
        throw ScheduleError(fmt::format(
            "{} on device {} has no B to follow: that backward is the fused {}",
            task_label(TaskKind::W, mb, layout.chunk_of(mb, pos)), layout.device_of(mb, pos),
            task_label(TaskKind::BW, mb, layout.chunk_of(mb, pos))));
      }
    }
  }

  for (std::uint32_t mb = 0; mb < plan.microbatches; ++mb) {
    for (std::uint32_t pos = 0; pos < positions; ++pos) {
      const TaskId f{task_at[slot_index(mb, pos, kForward)]};
      const TaskId b{task_at[slot_index(mb, pos, kBackward)]};
      if (pos > 0) builder.add_dependence(TaskId{task_at[slot_index(mb, pos - 1, kForward)]}, f);
      if (pos + 1 < positions) {
        builder.add_dependence(TaskId{task_at[slot_index(mb, pos + 1, kBackward)]}, b);
      }
      builder.add_dependence(f, b);
      const std::uint32_t w = task_at[slot_index(mb, pos, kWeight)];
      if (w != kNone) builder.add_dependence(b, TaskId{w});
    }
  }
  return std::move(builder).freeze();
}

// A slot in the plan whose task is not built yet (the backward's says whether it is a BW).
constexpr std::uint32_t kPending = kNone - 1;
constexpr std::uint32_t kPendingFused = kNone - 2;

// The one-pass build. Tasks get their ids in a topological order: devices take turns
// running their programs as far as the dependences allow (a device that must wait is woken
// by the task it waits for), and each task is written out when it runs - its columns, its
// predecessor list, its place in its device's program, and its entries in its
// predecessors' successor lists, all at positions known from the pipeline's regular
// structure. Nothing is sorted or scattered afterwards, and a simulation then walks the
// ids in order with each task's predecessors a short way behind. The adjacency lists come
// out exactly as build_through_builder orders them. Returns nullopt for what that path
// reports better: a deadlock, a negative duration.
class OnePassBuild {
 public:
  OnePassBuild(const PipelinePlan& plan, const CostTable& costs)
      : plan_(plan),
        layout_(plan.shape, plan.stages, plan.chunks, plan.microbatches),
        positions_(layout_.positions()),
        microbatches_(plan.microbatches),
        slots_(std::size_t{plan.microbatches} * positions_ * kSlots, kNone) {
    costs_.reserve(std::size_t{plan.stages} * plan.chunks);
    for (std::uint32_t d = 0; d < plan.stages; ++d) {
      for (std::uint32_t c = 0; c < plan.chunks; ++c) {
        const TaskCosts& entry = costs.at(StageId{d}, c);
        KindCosts& k = costs_.emplace_back();
        for (const TaskKind kind : {TaskKind::F, TaskKind::B, TaskKind::W, TaskKind::BW}) {
          k.duration[static_cast<std::size_t>(kind)] = entry.duration(kind);
          k.memory_delta[static_cast<std::size_t>(kind)] = entry.memory_delta(kind);
        }
      }
    }
  }

  // Marks every step's slot, with the same checks and messages as build_through_builder.
  void place_steps() {
    for (std::uint32_t device = 0; device < plan_.stages; ++device) {
      for (const Step& step : plan_.programs[device]) {
        const std::uint32_t position = checked_position(plan_, layout_, device, step);
        std::uint32_t& entry = slot(step.microbatch, position, slot_of(step.kind));
        if (entry != kNone) repeated_step(device, step);
        entry = step.kind == TaskKind::BW ? kPendingFused : kPending;
        any_fused_ = any_fused_ || step.kind == TaskKind::BW;
        ++task_count_;
      }
    }
  }

  // Every (microbatch, position) needs an F and either a BW, or a B and a W. Counts the
  // data dependences on the way. Scans in the table's order; a gap is then reported by
  // microbatch first, as build_through_builder does.
  void check_complete() {
    bool complete = true;
    for (std::uint32_t pos = 0; pos < positions_; ++pos) {
      for (std::uint32_t mb = 0; mb < plan_.microbatches; ++mb) {
        const std::uint32_t backward = slot(mb, pos, kBackward);
        const bool w = slot(mb, pos, kWeight) != kNone;
        complete = complete && slot(mb, pos, kForward) != kNone && backward != kNone &&
                   (backward == kPendingFused) != w;
        data_edges_ += (pos > 0 ? 1u : 0u) + (pos + 1 < positions_ ? 1u : 0u) + 1u + (w ? 1u : 0u);
      }
    }
    if (complete) return;
    for (std::uint32_t mb = 0; mb < plan_.microbatches; ++mb) {
      for (std::uint32_t pos = 0; pos < positions_; ++pos) {
        const bool f = slot(mb, pos, kForward) != kNone;
        const std::uint32_t backward = slot(mb, pos, kBackward);
        const bool b = backward != kNone;
        const bool w = slot(mb, pos, kWeight) != kNone;
        const auto missing = [&](TaskKind kind) {
          return ScheduleError(fmt::format("{} is missing from the program of device {}",
                                           task_label(kind, mb, layout_.chunk_of(mb, pos)),
                                           layout_.device_of(mb, pos)));
        };
        if (!f) throw missing(TaskKind::F);
        if (!b) throw missing(w || !any_fused_ ? TaskKind::B : TaskKind::BW);
        const bool fused = backward == kPendingFused;
        if (!fused && !w) throw missing(TaskKind::W);
        if (fused && w) {
          throw ScheduleError(fmt::format(
              "{} on device {} has no B to follow: that backward is the fused {}",
              task_label(TaskKind::W, mb, layout_.chunk_of(mb, pos)), layout_.device_of(mb, pos),
              task_label(TaskKind::BW, mb, layout_.chunk_of(mb, pos))));
        }
      }
    }
  }

  std::optional<EventGraph> run() {
    const std::uint32_t p = plan_.stages;
    const std::size_t n = task_count_;
    std::size_t order_edges = 0;
    detail::GraphParts g;
    g.device_count = p;
    g.lanes.reserve(p);
    g.program_offset.assign(std::size_t{p} + 1, 0);
    for (std::uint32_t d = 0; d < p; ++d) {
      g.lanes.push_back({DeviceId{d}, "compute"});
      const std::size_t length = plan_.programs[d].size();
      g.program_offset[d + 1] = g.program_offset[d] + static_cast<std::uint32_t>(length);
      order_edges += length > 0 ? length - 1 : 0;
    }
    const std::size_t edges = order_edges + data_edges_;
    detail::TaskColumns& t = g.tasks;
    t.resize(n);
    g.pred_offset.resize(n + 1);
    g.pred.resize(edges);
    g.succ_offset.resize(n + 1);
    g.succ.resize(edges);
    g.program.resize(n);
    g.pred_offset[0] = 0;
    g.succ_offset[0] = 0;
    parts_ = &g;

    std::vector<std::uint32_t> cursor(p, 0);
    std::vector<std::uint32_t> last(p, kNone);
    // Devices that may be able to run their next step: a ring, each device in it at most once.
    std::vector<std::uint32_t> ring(p);
    std::vector<std::uint8_t> queued(p, 0);
    std::size_t head = 0;
    std::size_t size = 0;
    const auto wake = [&](std::uint32_t d) {
      if (queued[d] || cursor[d] == plan_.programs[d].size()) return;
      queued[d] = 1;
      ring[(head + size++) % p] = d;
    };
    for (std::uint32_t d = 0; d < p; ++d) wake(d);
    while (size > 0) {
      const std::uint32_t d = ring[head];
      head = (head + 1) % p;
      --size;
      queued[d] = 0;
      const std::vector<Step>& program = plan_.programs[d];
      for (std::uint32_t& i = cursor[d]; i < program.size(); ++i) {
        // Devices take turns a step or two at a time, too many streams for the hardware to
        // prefetch: fetch this device's next steps now.
        __builtin_prefetch(program.data() + std::min<std::size_t>(i + 16, program.size() - 1));
        const Step step = program[i];
        const std::uint32_t pos = layout_.position(step.microbatch, d, step.chunk);
        if (!ready(step, pos)) break;
        const KindCosts& c = costs_[std::size_t{d} * plan_.chunks + step.chunk];
        const auto kind = static_cast<std::size_t>(step.kind);
        if (c.duration[kind] < 0) return std::nullopt;
        const std::uint32_t id = emit(step, d, pos, c.duration[kind], c.memory_delta[kind], last[d],
                                      i + 1 < program.size());
        g.program[g.program_offset[d] + i] = TaskId{id};
        last[d] = id;
        // The one dependent that may wait on another device: F feeds the next position's
        // F, B the previous position's B.
        if (step.kind == TaskKind::F && pos + 1 < positions_) {
          wake(layout_.device_of(step.microbatch, pos + 1));
        } else if ((step.kind == TaskKind::B || step.kind == TaskKind::BW) && pos > 0) {
          wake(layout_.device_of(step.microbatch, pos - 1));
        }
      }
    }
    if (next_id_ != n) return std::nullopt;  // deadlock
    return EventGraph::assemble(std::move(g));
  }

 private:
  std::uint32_t& slot(std::uint32_t microbatch, std::uint32_t position, Slot s) {
    // Position-major: a device walks its microbatches in order, reading its own position
    // and its neighbours', so each of those is a sequential stream.
    return slots_[(std::size_t{position} * microbatches_ + microbatch) * kSlots + s];
  }
  static bool built(std::uint32_t entry) { return entry < kPendingFused; }

  bool ready(const Step& step, std::uint32_t pos) {
    switch (slot_of(step.kind)) {
      case kForward:
        return pos == 0 || built(slot(step.microbatch, pos - 1, kForward));
      case kBackward:
        return (pos + 1 == positions_ || built(slot(step.microbatch, pos + 1, kBackward))) &&
               built(slot(step.microbatch, pos, kForward));
      case kWeight:
      case kSlots:
        break;
    }
    return built(slot(step.microbatch, pos, kBackward));
  }

  // Appends task `id` and its edges; returns its id.
  std::uint32_t emit(const Step& step, std::uint32_t d, std::uint32_t pos, TimeNs duration,
                     double memory_delta, std::uint32_t order_pred, bool has_next_in_program) {
    detail::GraphParts& g = *parts_;
    const std::uint32_t id = next_id_++;
    detail::TaskColumns& t = g.tasks;
    t.kind[id] = step.kind;
    t.device[id] = DeviceId{d};
    t.stage[id] = StageId{d};
    t.microbatch[id] = step.microbatch;
    t.chunk[id] = step.chunk;
    t.duration[id] = duration;
    t.memory_delta[id] = memory_delta;
    t.lane[id] = LaneId{d};
    Adjacent* const pred = g.pred.data();
    std::uint32_t preds = g.pred_offset[id];

    // A predecessor's successor list is [order edge, data edges in build_through_builder's
    // insertion order]: F: B of its position, then F of the next; B: B of the previous
    // position, then W of its own. `from_end` places this task counting from the list's end.
    const auto link = [&](std::uint32_t from, std::uint32_t from_end) {
      pred[preds++] = Adjacent(TaskId{from}, EdgeKind::Data);
      g.succ[g.succ_offset[from + 1] - 1 - from_end] = Adjacent(TaskId{id}, EdgeKind::Data);
    };
    if (order_pred != kNone) {
      pred[preds++] = Adjacent(TaskId{order_pred}, EdgeKind::Order);
      g.succ[g.succ_offset[order_pred]] = Adjacent(TaskId{id}, EdgeKind::Order);
    }
    const std::uint32_t mb = step.microbatch;
    const bool has_next = pos + 1 < positions_;
    std::uint32_t successors = has_next_in_program ? 1u : 0u;
    const Slot kind = slot_of(step.kind);
    if (kind == kForward) {
      if (pos > 0) link(slot(mb, pos - 1, kForward), 0);
      successors += 1u + (has_next ? 1u : 0u);
    } else if (kind == kBackward) {
      if (has_next) link(slot(mb, pos + 1, kBackward), slot(mb, pos + 1, kWeight) != kNone);
      link(slot(mb, pos, kForward), has_next ? 1 : 0);
      successors += (pos > 0 ? 1u : 0u) + (slot(mb, pos, kWeight) != kNone ? 1u : 0u);
    } else {
      link(slot(mb, pos, kBackward), 0);
    }
    g.pred_offset[id + 1] = preds;
    g.succ_offset[id + 1] = g.succ_offset[id] + successors;
    slot(mb, pos, kind) = id;
    return id;
  }

  const PipelinePlan& plan_;
  PipelineLayout layout_;
  std::uint32_t positions_;
  std::uint32_t microbatches_;
  BigVector<std::uint32_t> slots_;  // (microbatch, position, slot): task id, kPending, kNone
  struct KindCosts {  // one (device, chunk)'s TaskCosts per compute kind, looked up once
    std::array<TimeNs, 4> duration{};
    std::array<double, 4> memory_delta{};
  };
  std::vector<KindCosts> costs_;  // (device, chunk)
  bool any_fused_ = false;
  std::size_t task_count_ = 0;
  std::size_t data_edges_ = 0;
  detail::GraphParts* parts_ = nullptr;
  std::uint32_t next_id_ = 0;
};

}  // namespace

EventGraph build_pipeline_graph(const PipelinePlan& plan, const CostTable& costs) {
  if (plan.programs.size() != plan.stages) {
    throw ScheduleError(fmt::format("the plan has {} device programs for {} stages",
                                    plan.programs.size(), plan.stages));
  }
  OnePassBuild build(plan, costs);
  build.place_steps();
  build.check_complete();
  if (std::optional<EventGraph> graph = build.run()) return std::move(*graph);
  (void)build_through_builder(plan, costs);  // throws the deadlock or the bad cost
  throw std::logic_error("build_pipeline_graph: the one-pass build refused a valid plan");
}

}  // namespace perflow::parallel
