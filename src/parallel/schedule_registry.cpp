#include "perflow/parallel/schedule_registry.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "detail/schedules.hpp"
#include "perflow/core/did_you_mean.hpp"
#include "perflow/core/error.hpp"

namespace perflow::parallel {

namespace {

// The note a FromSpec shape rule adds to the chunk rule's text: the rule its refusals name
// (a shape that does not suit the chunk count; DualPipe with odd microbatches).
constexpr std::string_view kFromSpecShapes =
    "shape: linear for 1 chunk, interleaved (default for 2+), or v / dualpipe for 2";

PipelineShape linear_or_interleaved(const PipelineSpec& spec) {
  return spec.chunks == 1 ? PipelineShape::Linear : PipelineShape::Interleaved;
}

}  // namespace

std::optional<std::uint32_t> ChunkRule::fixed() const {
  return exact ? std::optional<std::uint32_t>(count) : std::nullopt;
}

bool ChunkRule::accepts(std::uint32_t chunks) const {
  return exact ? chunks == count : chunks >= count;
}

std::string ChunkRule::text() const {
  return fmt::format("chunks {} {}", exact ? "=" : ">=", count);
}

ScheduleConstraint ScheduleConstraint::checked(std::string text, Test test) {
  return {std::move(text), std::move(test), {}};
}

ScheduleConstraint ScheduleConstraint::at_planning(std::string text, std::string field) {
  return {std::move(text), nullptr, std::move(field)};
}

PipelineShape ScheduleInfo::shape_of(const PipelineSpec& spec) const {
  switch (shape) {
    case ShapeRule::LinearOrInterleaved:
      return linear_or_interleaved(spec);
    case ShapeRule::Interleaved:
      return PipelineShape::Interleaved;
    case ShapeRule::VShape:
      return PipelineShape::VShape;
    case ShapeRule::DualPipe:
      return PipelineShape::DualPipe;
    case ShapeRule::FromSpec:
      return spec.shape.value_or(linear_or_interleaved(spec));
  }
  return linear_or_interleaved(spec);
}

std::optional<ScheduleViolation> ScheduleInfo::check(const PipelineSpec& spec) const {
  const auto violation = [](std::string_view field, std::string_view text) {
    return std::optional<ScheduleViolation>(
        ScheduleViolation{std::string(field), std::string(text)});
  };
  // Options first, as plan_schedule refuses them before planning.
  struct Given {
    bool given;
    ScheduleOptions option;
    std::string_view field;
  };
  for (const Given& g :
       {Given{spec.microbatch_group_size != 0, kMicrobatchGroupSize, "microbatch_group_size"},
        Given{spec.memory_limit != 0, kMemoryLimit, "memory_limit"},
        Given{!spec.order.empty(), kProgramOrder, "order"},
        Given{spec.shape.has_value(), kShape, "shape"}}) {
    if (g.given && (options & g.option) == 0) {
      return violation(g.field, fmt::format("does not take {}", g.field));
    }
  }
  // The sizes every schedule needs (detail::require_basic_sizes).
  if (spec.stages < 1) return violation("stages", "stages >= 1");
  if (spec.microbatches < 1) return violation("microbatches", "microbatches >= 1");
  if (spec.chunks < 1) return violation("chunks", "chunks >= 1");
  if (std::uint64_t{spec.stages} * spec.microbatches * spec.chunks * 3 > kMaxPipelineTasks) {
    return violation("microbatches", fmt::format("3 x stages x microbatches x chunks <= {} tasks",
                                                 kMaxPipelineTasks));
  }
  if (!chunks.accepts(spec.chunks)) return violation("chunks", chunks.text());
  for (const ScheduleConstraint& rule : rules) {
    if (!rule.test) continue;  // planning decides
    const std::string_view field = rule.test(spec);
    if (!field.empty()) return violation(field, rule.text);
  }
  if (shape == ShapeRule::FromSpec) {
    const PipelineShape s = shape_of(spec);
    const bool suits = s == PipelineShape::Linear        ? spec.chunks == 1
                       : s == PipelineShape::Interleaved ? spec.chunks >= 2
                                                         : spec.chunks == 2;
    if (!suits) return violation("shape", kFromSpecShapes);
    if (s == PipelineShape::DualPipe && spec.microbatches % 2 != 0) {
      return violation("microbatches", kFromSpecShapes);
    }
  }
  return std::nullopt;
}

std::string ScheduleInfo::constraint_text() const {
  std::string text = chunks.text();
  if (shape == ShapeRule::FromSpec) text += fmt::format(" ({})", kFromSpecShapes);
  for (const ScheduleConstraint& rule : rules) text += fmt::format("; {}", rule.text);
  return text;
}

void ScheduleRegistry::add(ScheduleInfo info) {
  if (find(info.name) != nullptr) {
    throw std::invalid_argument(fmt::format("schedule '{}' is already registered", info.name));
  }
  if (info.plan == nullptr) {
    throw std::invalid_argument(fmt::format("schedule '{}' has no planner", info.name));
  }
  if ((info.shape == ShapeRule::VShape || info.shape == ShapeRule::DualPipe) &&
      info.chunks.fixed() != 2u) {
    throw std::invalid_argument(
        fmt::format("schedule '{}': a V or DualPipe shape takes exactly 2 chunks, not {}",
                    info.name, info.chunks.text()));
  }
  std::string text = info.constraint_text();
  if (!info.constraints.empty() && info.constraints != text) {
    throw std::invalid_argument(fmt::format(
        "schedule '{}': constraints '{}' differ from its rules' '{}' (leave them empty)", info.name,
        info.constraints, text));
  }
  info.constraints = std::move(text);
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

namespace {

// Rules shared by several built-in schedules, each with the text `perflow schedules` lists.

// detail::require_interleaved_sizes: the group (microbatch_group_size, default stages) lies
// in [stages, microbatches], and a last group of fewer than stages microbatches is refused.
ScheduleConstraint interleaved_group() {
  return ScheduleConstraint::checked(
      "stages <= microbatch_group_size (default: stages) <= microbatches",
      [](const PipelineSpec& spec) -> std::string_view {
        const bool given = spec.microbatch_group_size != 0;
        const std::uint32_t group = given ? spec.microbatch_group_size : spec.stages;
        if (given && group < spec.stages) return "microbatch_group_size";
        if (group > spec.microbatches) return given ? "microbatch_group_size" : "microbatches";
        return {};
      });
}

ScheduleConstraint interleaved_last_group() {
  return ScheduleConstraint::checked(
      "microbatches mod microbatch_group_size is 0 or >= stages",
      [](const PipelineSpec& spec) -> std::string_view {
        const std::uint32_t group =
            spec.microbatch_group_size != 0 ? spec.microbatch_group_size : spec.stages;
        if (group == 0) return {};
        const std::uint32_t remainder = spec.microbatches % group;
        return remainder != 0 && remainder < spec.stages ? "microbatches" : "";
      });
}

ScheduleConstraint at_least_twice_stages() {
  return ScheduleConstraint::checked(
      "microbatches >= 2 x stages", [](const PipelineSpec& spec) -> std::string_view {
        return std::uint64_t{spec.microbatches} < std::uint64_t{2} * spec.stages ? "microbatches"
                                                                                 : "";
      });
}

// v-half and v-min (plan_v_building_block): the peak activation per device, in chunk
// activations, is 2 min(microbatches, k) with k = in_flight(stages) microbatches held at once
// (floor(p/2) + 1 for V-Half, floor((p+1)/3) + 1 for V-Min); a memory_limit below it is
// refused.
ScheduleConstraint v_building_block_peak(std::string text,
                                         std::uint32_t (*in_flight)(std::uint32_t stages)) {
  return ScheduleConstraint::checked(
      std::move(text), [in_flight](const PipelineSpec& spec) -> std::string_view {
        const double peak = 2.0 * std::min(spec.microbatches, in_flight(spec.stages));
        return spec.memory_limit > 0 && spec.memory_limit < peak ? "memory_limit" : "";
      });
}

std::uint32_t v_half_in_flight(std::uint32_t stages) { return stages / 2 + 1; }
std::uint32_t v_min_in_flight(std::uint32_t stages) { return (stages + 1) / 3 + 1; }

}  // namespace

void register_builtin_schedules(ScheduleRegistry& registry) {
  using namespace detail;
  using Rule = ScheduleConstraint;
  constexpr ChunkRule kOne = ChunkRule::exactly(1);
  constexpr ChunkRule kTwo = ChunkRule::exactly(2);
  // Non-chunked.
  registry.add({.name = "gpipe",
                .description = "GPipe: all forwards, then all backwards (Huang et al., 2019)",
                .chunks = kOne,
                .plan = &plan_gpipe});
  registry.add({.name = "1f1b",
                .description =
                    "1F1B / PipeDream-Flush: warm-up forwards, then one forward one backward "
                    "(Megatron-LM's non-interleaved schedule)",
                .chunks = kOne,
                .plan = &plan_1f1b});
  registry.add({.name = "eager-1f1b",
                .description =
                    "1F1B with 2(p-d)-1 forwards before the first backward so sends overlap "
                    "compute (PyTorch ScheduleInterleaved1F1B warm-up with one stage; "
                    "PaddlePaddle Eager1F1B)",
                .chunks = kOne,
                .plan = &plan_eager_1f1b});
  // Interleaved (virtual pipeline).
  registry.add({.name = "interleaved-1f1b",
                .description = "Megatron-LM's interleaved 1F1B over v model chunks per device "
                               "(Narayanan et al., SC'21)",
                .chunks = ChunkRule::at_least(2),
                .rules = {interleaved_group(), interleaved_last_group()},
                .options = kMicrobatchGroupSize,
                .plan = &plan_interleaved_1f1b});
  registry.add({.name = "looped-bfs",
                .description = "Breadth-first looped schedule: forwards chunk by chunk, then "
                               "backwards by chunk in reverse, microbatches in reverse (PyTorch "
                               "ScheduleLoopedBFS)",
                .shape = ShapeRule::Interleaved,  // with 1 chunk: placed as linear
                .chunks = ChunkRule::at_least(1),
                .plan = &plan_looped_bfs});
  // Zero Bubble (Qi et al., ICLR'24).
  registry.add(
      {.name = "zb-h1",
       .description = "Zero Bubble ZB-H1: split B/W, W fills the 1F1B cool-down; 1F1B memory",
       .chunks = kOne,
       .plan = &plan_zb_h1});
  registry.add({.name = "zb-h2",
                .description = "Zero Bubble ZB-H2: extra warm-up forwards, no bubble at F=B=W; "
                               "about 2x 1F1B memory (fewer than 2p-1 microbatches run, with "
                               "some bubble)",
                .chunks = kOne,
                .plan = &plan_zb_h2});
  registry.add({.name = "zb",
                .description = "Zero Bubble automatic scheduler: places F, B, W under a memory "
                               "limit from the per-stage costs",
                .chunks = kOne,
                .rules = {Rule::checked("memory_limit >= 1 in F activations (default: stages)",
                                        [](const PipelineSpec& spec) -> std::string_view {
                                          const double limit =
                                              spec.memory_limit == 0
                                                  ? static_cast<double>(spec.stages)
                                                  : spec.memory_limit;
                                          return limit >= 1.0 ? "" : "memory_limit";
                                        })},
                .options = kMemoryLimit,
                .plan = &plan_zb_auto});
  // V-shape (two chunks per device, down and back up).
  registry.add(
      {.name = "zbv",
       .description = "Zero Bubble V: handcrafted V-shape schedule with split B/W",
       .shape = ShapeRule::VShape,
       .chunks = kTwo,
       .rules = {Rule::checked("any microbatches >= 1 (built for max(m, 2p-1), padding dropped)",
                               [](const PipelineSpec& spec) -> std::string_view {
                                 return spec.microbatches >= 1 ? "" : "microbatches";
                               })},
       .plan = &plan_zbv});
  registry.add(
      {.name = "zbv-auto",
       .description = "Zero Bubble V-shape automatic scheduler under a memory limit (ZB runtime)",
       .shape = ShapeRule::VShape,
       .chunks = kTwo,
       // The heuristic may find no schedule within a limit below about 2 x stages.
       .rules = {Rule::at_planning(
           "memory_limit in F activations (default and practical minimum: 2 x stages)",
           "memory_limit")},
       .options = kMemoryLimit,
       .plan = &plan_zbv_auto});
  registry.add({.name = "1f1b-v",
                .description = "V-shape 1F1B with fused backward (Qi et al.)",
                .shape = ShapeRule::VShape,
                .chunks = kTwo,
                .plan = &plan_1f1b_v});
  registry.add({.name = "v-half",
                .description = "V-Half: V-shape schedule with half of 1F1B's activation memory "
                               "(Qi et al., Pipeline Parallelism with Controllable Memory)",
                .shape = ShapeRule::VShape,
                .chunks = kTwo,
                .rules = {v_building_block_peak(
                    "memory_limit >= its peak (default: the peak, 2 floor(p/2) + 2 chunk "
                    "activations)",
                    &v_half_in_flight)},
                .options = kMemoryLimit,
                .plan = &plan_v_half});
  registry.add({.name = "v-min",
                .description = "V-Min: V-shape schedule with a third of 1F1B's activation "
                               "memory (same paper)",
                .shape = ShapeRule::VShape,
                .chunks = kTwo,
                .rules = {v_building_block_peak(
                    "memory_limit >= its peak (default: the peak, 2 floor((p+1)/3) + 2 chunk "
                    "activations)",
                    &v_min_in_flight)},
                .options = kMemoryLimit,
                .plan = &plan_v_min});
  // DualPipe (DeepSeek-V3).
  registry.add({.name = "dualpipe",
                .description = "DeepSeek DualPipe: two opposite pipelines, F and B of different "
                               "microbatches paired",
                .shape = ShapeRule::DualPipe,
                .chunks = kTwo,
                .rules = {Rule::checked("stages and microbatches even",
                                        [](const PipelineSpec& spec) -> std::string_view {
                                          if (spec.stages % 2 != 0) return "stages";
                                          return spec.microbatches % 2 != 0 ? "microbatches" : "";
                                        }),
                          at_least_twice_stages()},
                .plan = &plan_dualpipe});
  registry.add({.name = "dualpipev",
                .description = "DeepSeek DualPipeV: the V-shape (cut-in-half) DualPipe",
                .shape = ShapeRule::VShape,
                .chunks = kTwo,
                .rules = {at_least_twice_stages()},
                .plan = &plan_dualpipev});
  // User-given. build_pipeline_graph checks the rest of "every task exactly once".
  registry.add(
      {.name = "custom",
       .description = "A program order per device given in the config (pipeline.order), checked",
       .shape = ShapeRule::FromSpec,
       .chunks = ChunkRule::at_least(1),
       .rules = {Rule::checked("every task exactly once",
                               [](const PipelineSpec& spec) -> std::string_view {
                                 return spec.order.size() == spec.stages ? "" : "order";
                               })},
       .options = kProgramOrder | kShape,
       .plan = &plan_custom});
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

PipelineShape schedule_shape(const PipelineSpec& spec, const ScheduleRegistry& registry) {
  if (const ScheduleInfo* info = registry.find(spec.schedule)) return info->shape_of(spec);
  return linear_or_interleaved(spec);
}

std::string schedule_listing(const ScheduleRegistry& registry) {
  std::size_t width = 0;
  for (const ScheduleInfo& s : registry.all()) width = std::max(width, s.name.size());
  std::string out;
  for (const ScheduleInfo& s : registry.all()) {
    out += fmt::format("{:<{}}  {}\n{:<{}}  constraints: {}\n", s.name, width, s.description, "",
                       width, s.constraints);
  }
  return out;
}

}  // namespace perflow::parallel
