#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/task.hpp"
#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/pipeline_layout.hpp"

namespace perflow::parallel {

/// One entry of a device's program: run `kind` of microbatch `microbatch`, chunk `chunk`.
struct Step {
  TaskKind kind = TaskKind::F;
  std::uint32_t microbatch = 0;
  std::uint32_t chunk = 0;

  friend bool operator==(const Step&, const Step&) = default;
};

/// What the user asks for: a schedule by name and the pipeline's sizes.
struct PipelineSpec {
  std::string schedule = "1f1b";
  std::uint32_t stages = 4;        ///< pipeline devices (p)
  std::uint32_t microbatches = 8;  ///< m
  std::uint32_t chunks = 1;        ///< model chunks per device (v)
  /// Run the backward as separate B and W tasks where the schedule would fuse them (BW).
  bool split_backward = false;
  /// Interleaved: microbatches per group (Megatron's microbatch_group_size_per_vp_stage);
  /// 0 means the schedule's default (p).
  std::uint32_t microbatch_group_size = 0;
  /// Automatic schedulers: peak activation per device, in units of one F's activation;
  /// 0 means the schedule's default.
  double memory_limit = 0;
  /// `custom`: each device's program, in order.
  std::vector<std::vector<Step>> order;
  /// `custom`: the shape the order's chunks take; default linear for one chunk, else
  /// interleaved.
  std::optional<PipelineShape> shape;
};

/// The most tasks a pipeline may have: 2^28 (about 40 GB of graph and trace).
inline constexpr std::uint64_t kMaxPipelineTasks = std::uint64_t{1} << 28;

/// Throws ScheduleError (field "microbatches") if stages x microbatches x chunks could need
/// more than kMaxPipelineTasks tasks. Cheap: call it before allocating anything per stage.
void check_task_limit(const PipelineSpec& spec);

/// What a schedule produces: the shape and, per device, the exact program order.
struct PipelinePlan {
  PipelineShape shape = PipelineShape::Linear;
  std::uint32_t stages = 0;
  std::uint32_t microbatches = 0;
  std::uint32_t chunks = 1;
  std::vector<std::vector<Step>> programs;  ///< one per device
  /// Per device (or empty): the positions i at which the reference runtime runs step i, an
  /// F, and step i + 1, a backward of the other chunk, as one overlapped forward-backward
  /// pair (DualPipe's F&B, where one's all-to-all hides behind the other's compute).
  /// parallel::overlap_pairs runs them as units; build_pipeline_graph alone runs them in
  /// sequence.
  std::vector<std::vector<std::uint32_t>> overlapped_pairs;
};

/// Turns a plan into an event graph: one task per step with its costs, the pipeline's data
/// dependences along each microbatch's path (F after the previous position's F; B after the
/// next position's B, the last position's B after its own F; B after its own F; W after its
/// own B; BW acts as B), and the programs as order edges. Each (microbatch, position) runs
/// either a fused BW or a B and a W, so schedules may mix both. Throws ScheduleError if a
/// task is missing, repeated, or placed where its microbatch never runs, and CycleError
/// (naming the waiting tasks) if the programs deadlock.
EventGraph build_pipeline_graph(const PipelinePlan& plan, const CostTable& costs);

/// Applies `split_backward`: replaces every BW step by B immediately followed by W (an
/// overlapped pair's backward becomes its B).
void split_fused_backward(PipelinePlan& plan);

}  // namespace perflow::parallel
