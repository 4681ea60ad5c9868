#include "perflow/parallel/schedule_registry.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "detail/schedules.hpp"
#include "perflow/core/did_you_mean.hpp"
#include "perflow/core/error.hpp"

namespace perflow::parallel {

void ScheduleRegistry::add(ScheduleInfo info) {
  if (find(info.name) != nullptr) {
    throw std::invalid_argument(fmt::format("schedule '{}' is already registered", info.name));
  }
  schedules_.push_back(std::move(info));
}

const ScheduleInfo* ScheduleRegistry::find(std::string_view name) const {
  for (const ScheduleInfo& info : schedules_) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const ScheduleInfo& ScheduleRegistry::get(std::string_view name) const {
  if (const ScheduleInfo* info = find(name)) return *info;
  const std::vector<std::string> valid = names();
  throw UnknownNameError(fmt::format("unknown schedule '{}'{} (valid: {})", name,
                                     did_you_mean_suffix(name, valid), fmt::join(valid, ", ")));
}

std::vector<std::string> ScheduleRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(schedules_.size());
  for (const ScheduleInfo& info : schedules_) out.push_back(info.name);
  return out;
}

void register_builtin_schedules(ScheduleRegistry& registry) {
  using namespace detail;
  // Non-chunked.
  registry.add({"gpipe", "GPipe: all forwards, then all backwards (Huang et al., 2019)",
                "chunks = 1", kNoOptions, &plan_gpipe});
  registry.add({"1f1b",
                "1F1B / PipeDream-Flush: warm-up forwards, then one forward one backward "
                "(Megatron-LM's non-interleaved schedule)",
                "chunks = 1", kNoOptions, &plan_1f1b});
  registry.add({"eager-1f1b",
                "1F1B with 2(p-d)-1 forwards before the first backward so sends overlap "
                "compute (PyTorch ScheduleInterleaved1F1B warm-up with one stage; PaddlePaddle "
                "Eager1F1B)",
                "chunks = 1", kNoOptions, &plan_eager_1f1b});
  // Interleaved (virtual pipeline).
  registry.add({"interleaved-1f1b",
                "Megatron-LM's interleaved 1F1B over v model chunks per device "
                "(Narayanan et al., SC'21)",
                "chunks >= 2; stages <= microbatch_group_size (default: stages) <= "
                "microbatches; microbatches mod microbatch_group_size is 0 or >= stages",
                kMicrobatchGroupSize, &plan_interleaved_1f1b});
  registry.add({"looped-bfs",
                "Breadth-first looped schedule: forwards chunk by chunk, then backwards by chunk "
                "in reverse, microbatches in reverse (PyTorch ScheduleLoopedBFS)",
                "chunks >= 1", kNoOptions, &plan_looped_bfs});
  // Zero Bubble (Qi et al., ICLR'24).
  registry.add({"zb-h1", "Zero Bubble ZB-H1: split B/W, W fills the 1F1B cool-down; 1F1B memory",
                "chunks = 1", kNoOptions, &plan_zb_h1});
  registry.add({"zb-h2",
                "Zero Bubble ZB-H2: extra warm-up forwards, no bubble at F=B=W; about 2x 1F1B "
                "memory (fewer than 2p-1 microbatches run, with some bubble)",
                "chunks = 1", kNoOptions, &plan_zb_h2});
  registry.add({"zb",
                "Zero Bubble automatic scheduler: places F, B, W under a memory limit from "
                "the per-stage costs",
                "chunks = 1; memory_limit >= 1 in F activations (default: stages)", kMemoryLimit,
                &plan_zb_auto});
  // V-shape (two chunks per device, down and back up).
  registry.add({"zbv", "Zero Bubble V: handcrafted V-shape schedule with split B/W",
                "chunks = 2; any microbatches >= 1 (built for max(m, 2p-1), padding dropped)",
                kNoOptions, &plan_zbv});
  registry.add({"zbv-auto",
                "Zero Bubble V-shape automatic scheduler under a memory limit (ZB runtime)",
                "chunks = 2; memory_limit in F activations (default and practical minimum: 2 x "
                "stages)",
                kMemoryLimit, &plan_zbv_auto});
  registry.add({"1f1b-v", "V-shape 1F1B with fused backward (Qi et al.)", "chunks = 2", kNoOptions,
                &plan_1f1b_v});
  registry.add({"v-half",
                "V-Half: V-shape schedule with half of 1F1B's activation memory (Qi et al., "
                "Pipeline Parallelism with Controllable Memory)",
                "chunks = 2; memory_limit >= its peak (default: the peak, 2 floor(p/2) + 2 "
                "chunk activations)",
                kMemoryLimit, &plan_v_half});
  registry.add({"v-min",
                "V-Min: V-shape schedule with a third of 1F1B's activation memory (same "
                "paper)",
                "chunks = 2; memory_limit >= its peak (default: the peak, 2 floor((p+1)/3) + 2 "
                "chunk activations)",
                kMemoryLimit, &plan_v_min});
  // DualPipe (DeepSeek-V3).
  registry.add({"dualpipe",
                "DeepSeek DualPipe: two opposite pipelines, F and B of different microbatches "
                "paired",
                "chunks = 2; stages and microbatches even; microbatches >= 2 x stages", kNoOptions,
                &plan_dualpipe});
  registry.add({"dualpipev", "DeepSeek DualPipeV: the V-shape (cut-in-half) DualPipe",
                "chunks = 2; microbatches >= 2 x stages", kNoOptions, &plan_dualpipev});
  // User-given.
  registry.add({"custom",
                "A program order per device given in the config (pipeline.order), checked",
                "chunks >= 1 (shape: linear for 1 chunk, interleaved (default for 2+), or v / "
                "dualpipe for 2); every task exactly once",
                kProgramOrder | kShape, &plan_custom});
}

const ScheduleRegistry& builtin_schedules() {
  static const ScheduleRegistry registry = [] {
    ScheduleRegistry r;
    register_builtin_schedules(r);
    return r;
  }();
  return registry;
}

PipelinePlan plan_schedule(const PipelineSpec& spec, const CostTable& costs,
                           const ScheduleRegistry& registry) {
  const ScheduleInfo& info = registry.get(spec.schedule);
  const auto refuse_unless = [&](bool given, ScheduleOptions option, const char* field) {
    if (!given || (info.options & option) != 0) return;
    std::vector<std::string> takers;
    for (const ScheduleInfo& s : registry.all()) {
      if ((s.options & option) != 0) takers.push_back(s.name);
    }
    throw ScheduleError(fmt::format("{} does not take {} (schedules that do: {})", info.name, field,
                                    fmt::join(takers, ", ")),
                        field);
  };
  refuse_unless(spec.microbatch_group_size != 0, kMicrobatchGroupSize, "microbatch_group_size");
  refuse_unless(spec.memory_limit != 0, kMemoryLimit, "memory_limit");
  refuse_unless(!spec.order.empty(), kProgramOrder, "order");
  refuse_unless(spec.shape.has_value(), kShape, "shape");
  PipelinePlan plan = info.plan(spec, costs);
  if (spec.split_backward) split_fused_backward(plan);
  return plan;
}

EventGraph build_schedule(const PipelineSpec& spec, const CostTable& costs,
                          const ScheduleRegistry& registry) {
  return build_pipeline_graph(plan_schedule(spec, costs, registry), costs);
}

PipelineShape schedule_shape(const PipelineSpec& spec) {
  const std::string_view name = spec.schedule;
  if (name == "custom") {
    return spec.shape.value_or(spec.chunks == 1 ? PipelineShape::Linear
                                                : PipelineShape::Interleaved);
  }
  if (name == "dualpipe") return PipelineShape::DualPipe;
  if (name == "looped-bfs") return PipelineShape::Interleaved;  // with 1 chunk: linear
  for (const std::string_view v : {"zbv", "zbv-auto", "1f1b-v", "v-half", "v-min", "dualpipev"}) {
    if (name == v) return PipelineShape::VShape;
  }
  return spec.chunks == 1 ? PipelineShape::Linear : PipelineShape::Interleaved;
}

}  // namespace perflow::parallel
