#include "perflow/parallel/pipeline.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "perflow/core/detail/graph_storage.hpp"
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
    case TaskKind::ReduceScatter:
    case TaskKind::AllGather:
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
// predecessor list and its place in its device's program. Nothing is sorted or scattered
// afterwards, and a simulation then walks the ids in order with each task's predecessors a
// short way behind. What most runs never read is left for the graph to derive on first
// use: the stage and lane columns (each task's device), the identity topological order and
// the successor lists, which come out in build_through_builder's order. Costs are kept per
// (device, chunk) and kind, not per task. Returns nullopt for what that path reports better:
// a deadlock, a negative duration.
//
// The loop below runs once a task and a few hundred instructions each: what a step needs
// that depends only on its (device, chunk) - its position, the devices before and after
// it, its costs - is looked up once into a Placement, and the loop works on raw pointers
// (a fifth fewer instructions than looking each up per task).
class OnePassBuild {
 public:
  OnePassBuild(const PipelinePlan& plan, const CostTable& costs)
      : plan_(plan),
        layout_(plan.shape, plan.stages, plan.chunks, plan.microbatches),
        positions_(layout_.positions()),
        row_(std::size_t{plan.microbatches} * kSlots),
        slots_(std::size_t{plan.microbatches} * positions_ * kSlots, kNone) {
    placements_.reserve(std::size_t{plan.stages} * plan.chunks);
    for (std::uint32_t d = 0; d < plan.stages; ++d) {
      for (std::uint32_t c = 0; c < plan.chunks; ++c) {
        Placement& at = placements_.emplace_back();
        // DualPipe's direction is its chunk: a microbatch of that direction runs (d, c) here.
        const std::uint32_t microbatch =
            c == 0 || plan.microbatches == 0 ? 0 : plan.microbatches - 1;
        at.position = layout_.position(microbatch, d, c);
        if (at.position == PipelineLayout::kNone) continue;  // no step can use it
        at.next_device =
            at.position + 1 < positions_ ? layout_.device_of(microbatch, at.position + 1) : kNone;
        at.previous_device =
            at.position > 0 ? layout_.device_of(microbatch, at.position - 1) : kNone;
        const TaskCosts& entry = costs.at(StageId{d}, c);
        for (const TaskKind kind : {TaskKind::F, TaskKind::B, TaskKind::W, TaskKind::BW}) {
          at.duration[static_cast<std::size_t>(kind)] = entry.duration(kind);
          at.memory_delta[static_cast<std::size_t>(kind)] = entry.memory_delta(kind);
        }
      }
    }
  }

  // Marks every step's slot, with the same checks and messages as build_through_builder.
  void place_steps() {
    const bool dualpipe = plan_.shape == PipelineShape::DualPipe;
    const std::uint32_t half = plan_.microbatches / 2;
    for (std::uint32_t device = 0; device < plan_.stages; ++device) {
      for (const Step& step : plan_.programs[device]) {
        // The checks of checked_position, which words the error when one fails.
        std::uint32_t position = PipelineLayout::kNone;
        if (is_compute(step.kind) && step.microbatch < plan_.microbatches &&
            step.chunk < plan_.chunks &&
            (!dualpipe || step.chunk == (step.microbatch < half ? 0u : 1u))) {
          position = placement(device, step.chunk).position;
        }
        if (position == PipelineLayout::kNone) {
          position = checked_position(plan_, layout_, device, step);
        }
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
    std::size_t weights = 0;
    for (std::uint32_t pos = 0; pos < positions_; ++pos) {
      const std::uint32_t* s = slots_.data() + pos * row_;
      for (std::uint32_t mb = 0; mb < plan_.microbatches; ++mb, s += kSlots) {
        const bool w = s[kWeight] != kNone;
        complete = complete && s[kForward] != kNone && s[kBackward] != kNone &&
                   (s[kBackward] == kPendingFused) != w;
        weights += w ? 1u : 0u;
      }
    }
    // Per microbatch: F from the previous position, B from the next, F to B, B to W.
    const std::size_t chains = positions_ > 0 ? std::size_t{positions_} - 1 : 0;
    data_edges_ = std::size_t{plan_.microbatches} * (2 * chains + positions_) + weights;
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
    // Costs by place, not per task; no chunk column when every task is in chunk 0.
    t.placed.chunks = plan_.chunks;
    for (const Placement& at : placements_) {
      t.placed.duration.insert(t.placed.duration.end(), at.duration.begin(), at.duration.end());
      t.placed.memory_delta.insert(t.placed.memory_delta.end(), at.memory_delta.begin(),
                                   at.memory_delta.end());
    }
    if (plan_.chunks > 1) t.chunk.resize(n);
    t.resize(n);
    g.pred_offset.resize(n + 1);
    g.pred.resize(edges);
    g.program.resize(n);
    g.pred_offset[0] = 0;

    // The columns and lists as raw pointers: the compiler cannot keep a vector's data
    // pointer in a register across stores it cannot prove do not alias it.
    Columns out{t.kind.data(),        t.device.data(),
                t.microbatch.data(),  plan_.chunks > 1 ? t.chunk.data() : nullptr,
                g.pred_offset.data(), g.pred.data()};
    TaskId* const program_out = g.program.data();
    const std::uint32_t* const program_offset = g.program_offset.data();
    std::uint32_t* const slots = slots_.data();
    const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(row_);
    const Placement* const placements = placements_.data();
    const std::uint32_t chunks = plan_.chunks;

    std::vector<std::uint32_t> cursor(p, 0);
    std::vector<std::uint32_t> last(p, kNone);
    // Devices that may be able to run their next step: a ring, each device in it at most once.
    std::vector<std::uint32_t> ring(p);
    std::vector<std::uint8_t> queued(p, 0);
    std::uint32_t head = 0;
    std::uint32_t size = 0;
    const auto wake = [&](std::uint32_t d) {
      if (queued[d] || cursor[d] == plan_.programs[d].size()) return;
      queued[d] = 1;
      std::uint32_t at = head + size++;
      if (at >= p) at -= p;
      ring[at] = d;
    };
    for (std::uint32_t d = 0; d < p; ++d) wake(d);
    std::uint32_t id = 0;
    std::uint32_t preds = 0;  // edges listed so far: pred_offset[id]
    while (size > 0) {
      const std::uint32_t d = ring[head];
      head = head + 1 == p ? 0 : head + 1;
      --size;
      queued[d] = 0;
      const Step* const program = plan_.programs[d].data();
      const auto length = static_cast<std::uint32_t>(plan_.programs[d].size());
      const Placement* const mine = placements + std::size_t{d} * chunks;
      TaskId* const program_ids = program_out + program_offset[d];
      std::uint32_t i = cursor[d];
      std::uint32_t order_pred = last[d];
      for (; i < length; ++i) {
        const Step step = program[i];
        const Placement& at = mine[step.chunk];
        std::uint32_t* const here =
            slots + (at.position * row_ + std::size_t{step.microbatch} * kSlots);
        const bool first = at.previous_device == kNone;
        const bool final = at.next_device == kNone;
        // Ready: F after the previous position's F; a backward after its own F and the next
        // position's backward; W after its B. Tested first: either neighbour wakes a device,
        // and its next step often still waits on the other one.
        const bool ready = step.kind == TaskKind::F ? first || built(here[kForward - row])
                           : step.kind == TaskKind::W
                               ? built(here[kBackward])
                               : built(here[kForward]) && (final || built(here[kBackward + row]));
        if (!ready) break;
        // Devices take turns a step or two at a time, too many streams for the hardware to
        // prefetch: fetch this device's next steps now.
        __builtin_prefetch(program + std::min(i + 16, length - 1));
        const auto kind = static_cast<std::size_t>(step.kind);
        if (at.duration[kind] < 0) return std::nullopt;

        out.kind[id] = step.kind;
        out.device[id] = DeviceId{d};
        out.microbatch[id] = step.microbatch;
        if (out.chunk != nullptr) out.chunk[id] = step.chunk;
        // Predecessors as build_through_builder lists them: the order edge, then F: the
        // previous position's F; B: the next position's B, then its own F; W: its B.
        const auto link = [&](std::uint32_t from) {
          out.pred[preds++] = Adjacent(TaskId{from}, EdgeKind::Data);
        };
        if (order_pred != kNone) out.pred[preds++] = Adjacent(TaskId{order_pred}, EdgeKind::Order);
        if (step.kind == TaskKind::F) {
          if (!first) link(here[kForward - row]);
          here[kForward] = id;
          if (!final) wake(at.next_device);  // the next position's F may wait on this one
        } else if (step.kind == TaskKind::W) {
          link(here[kBackward]);
          here[kWeight] = id;
        } else {  // B or BW
          if (!final) link(here[kBackward + row]);
          link(here[kForward]);
          here[kBackward] = id;
        }
        out.pred_offset[id + 1] = preds;
        program_ids[i] = TaskId{id};
        order_pred = id++;
        // The previous position's backward may wait on this one.
        if (step.kind != TaskKind::F && step.kind != TaskKind::W && !first) {
          wake(at.previous_device);
        }
      }
      cursor[d] = i;
      last[d] = order_pred;
    }
    if (id != n) return std::nullopt;  // deadlock
    return detail::GraphAccess::assemble(std::move(g));
  }

 private:
  // Per (device, chunk): the position its steps run at, the devices of the positions on
  // either side (kNone past an end), and its costs per compute kind.
  struct Placement {
    std::uint32_t position = PipelineLayout::kNone;
    std::uint32_t next_device = kNone;
    std::uint32_t previous_device = kNone;
    std::array<TimeNs, 4> duration{};
    std::array<double, 4> memory_delta{};
  };
  struct Columns {
    TaskKind* kind;
    DeviceId* device;
    std::uint32_t* microbatch;
    std::uint32_t* chunk;  // null with one chunk
    std::uint32_t* pred_offset;
    Adjacent* pred;
  };

  const Placement& placement(std::uint32_t device, std::uint32_t chunk) const {
    return placements_[std::size_t{device} * plan_.chunks + chunk];
  }
  std::uint32_t& slot(std::uint32_t microbatch, std::uint32_t position, Slot s) {
    // Position-major: a device walks its microbatches in order, reading its own position
    // and its neighbours', so each of those is a sequential stream.
    return slots_[position * row_ + std::size_t{microbatch} * kSlots + s];
  }
  static bool built(std::uint32_t entry) { return entry < kPendingFused; }

  const PipelinePlan& plan_;
  PipelineLayout layout_;
  std::uint32_t positions_;
  std::size_t row_;                    // slots per position: microbatches x kSlots
  BigVector<std::uint32_t> slots_;     // (position, microbatch, slot): task id, kPending, kNone
  std::vector<Placement> placements_;  // (device, chunk)
  bool any_fused_ = false;
  std::size_t task_count_ = 0;
  std::size_t data_edges_ = 0;
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
