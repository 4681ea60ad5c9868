#include "perflow/parallel/pipeline.hpp"

#include <limits>

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
      break;
  }
  return kForward;
}

}  // namespace

void split_fused_backward(PipelinePlan& plan) {
  for (auto& program : plan.programs) {
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

EventGraph build_pipeline_graph(const PipelinePlan& plan, const CostTable& costs) {
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
      const auto where = [&] {  // only formatted on error: this loop is hot
        return fmt::format("{} on device {}", task_label(step.kind, step.microbatch, step.chunk),
                           device);
      };
      if (!is_compute(step.kind)) {
        throw ScheduleError(
            fmt::format("{}: a schedule places F, B, W and BW tasks only", where()));
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
      std::uint32_t& entry = task_at[slot_index(step.microbatch, position, slot_of(step.kind))];
      if (entry != kNone) throw ScheduleError(fmt::format("{}: appears more than once", where()));
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

}  // namespace perflow::parallel
