#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/pipeline.hpp"

namespace perflow::parallel {

/// Options beyond the sizes that a schedule honours (a bit set). `split_backward` is
/// accepted by every schedule (a no-op where the backward is already split).
enum ScheduleOptions : unsigned {
  kNoOptions = 0,
  kMicrobatchGroupSize = 1u << 0,  ///< PipelineSpec::microbatch_group_size
  kMemoryLimit = 1u << 1,          ///< PipelineSpec::memory_limit
  kProgramOrder = 1u << 2,         ///< PipelineSpec::order
  kShape = 1u << 3,                ///< PipelineSpec::shape
};

/// Where a schedule's chunks run (its plans' PipelineShape), as a rule of the spec, so the
/// shape is known before planning (a cost model places layers by it).
enum class ShapeRule : std::uint8_t {
  LinearOrInterleaved,  ///< linear with 1 chunk, interleaved with more
  Interleaved,          ///< interleaved at any chunk count (with 1 chunk it places as linear)
  VShape,               ///< V: down the devices and back up (takes exactly 2 chunks)
  DualPipe,             ///< two opposite pipelines over the same devices (exactly 2 chunks)
  /// PipelineSpec::shape, by default linear with 1 chunk and interleaved with more; the shape
  /// must suit the chunk count (linear 1, interleaved 2+, V and DualPipe 2) and DualPipe needs
  /// an even number of microbatches (`custom`).
  FromSpec,
};

/// The chunk counts (model chunks per device) a schedule takes: exactly `count`, or at least.
struct ChunkRule {
  std::uint32_t count = 1;
  bool exact = true;

  static constexpr ChunkRule exactly(std::uint32_t n) { return {n, true}; }
  static constexpr ChunkRule at_least(std::uint32_t n) { return {n, false}; }
  /// The one count it takes, if it fixes one.
  [[nodiscard]] std::optional<std::uint32_t> fixed() const;
  [[nodiscard]] bool accepts(std::uint32_t chunks) const;
  /// "chunks = 2", "chunks >= 1".
  [[nodiscard]] std::string text() const;
};

/// One rule a schedule puts on a spec beyond the sizes every schedule needs and its chunk count,
/// e.g. "microbatches >= 2 x stages".
struct ScheduleConstraint {
  /// The PipelineSpec field in which `spec` breaks the rule ("stages", "microbatches",
  /// "microbatch_group_size", "memory_limit", "order"), or an empty view when it holds.
  using Test = std::function<std::string_view(const PipelineSpec& spec)>;

  std::string text{};  ///< as `perflow schedules` lists it
  /// Null for a rule that only planning decides (a scheduler searching for a program within
  /// memory_limit may find none): `check` passes it; planning's refusal names `field`.
  Test test{};
  std::string field{};  ///< the field of an untested rule's refusal

  /// A rule `check` tests.
  static ScheduleConstraint checked(std::string text, Test test);
  /// A rule only planning decides; its refusal names `field`.
  static ScheduleConstraint at_planning(std::string text, std::string field);
};

/// A rule a spec breaks: the PipelineSpec field (as ScheduleError::field() names it) and the
/// rule's text.
struct ScheduleViolation {
  std::string field;
  std::string constraint;

  friend bool operator==(const ScheduleViolation&, const ScheduleViolation&) = default;
};

/// A named pipeline schedule: its shape, the sizes it takes and the function that produces
/// each device's program.
///
/// Registering a new schedule: write a planner (it checks the sizes itself and throws
/// ScheduleError naming the field, so planning still validates), then add a ScheduleInfo
/// with its shape rule, its chunk rule, and its other rules in the order the planner checks
/// them, so that `check` refuses what planning refuses, with the same field:
///
///   registry.add({.name = "my-v", .description = "...", .shape = ShapeRule::VShape,
///                 .chunks = ChunkRule::exactly(2),
///                 .rules = {ScheduleConstraint::checked(
///                     "microbatches >= 2 x stages", [](const PipelineSpec& s) {
///                       return s.microbatches < 2 * s.stages ? "microbatches" : "";
///                     })},
///                 .plan = &plan_my_v});
///
/// Its shape (schedule_shape), search's pruning (explore::enumerate_plans) and the listing
/// (schedule_listing, `perflow schedules`) then follow from the registry.
struct ScheduleInfo {
  std::string name;
  std::string description;  ///< one line
  ShapeRule shape = ShapeRule::LinearOrInterleaved;
  ChunkRule chunks = ChunkRule::exactly(1);
  /// Rules beyond the sizes every schedule needs and the chunk count, in the order the
  /// planner checks them.
  std::vector<ScheduleConstraint> rules{};
  unsigned options = kNoOptions;  ///< ScheduleOptions it honours; others are refused
  /// Throws ScheduleError (with the offending field) for sizes the schedule refuses.
  PipelinePlan (*plan)(const PipelineSpec& spec, const CostTable& costs) = nullptr;
  /// The rules as listed, e.g. "chunks = 2; microbatches >= 2 x stages": set by
  /// ScheduleRegistry::add from `chunks`, `shape` and `rules` (leave it empty).
  std::string constraints{};

  /// The shape `spec`'s plan has (FromSpec: spec.shape or the default), before planning.
  [[nodiscard]] PipelineShape shape_of(const PipelineSpec& spec) const;
  /// The first rule `spec` breaks, in the order planning checks them: an option the schedule
  /// does not take, the sizes every schedule needs (stages, microbatches, chunks >= 1, the
  /// task limit), the chunk rule, `rules`, the shape rule. Nothing: planning accepts the
  /// spec, apart from the rules only planning decides.
  [[nodiscard]] std::optional<ScheduleViolation> check(const PipelineSpec& spec) const;
  /// The listed text of the rules (what `constraints` holds once registered).
  [[nodiscard]] std::string constraint_text() const;
};

/// Schedules by name, in registration order. Filled by register_builtin_schedules(), or by
/// users adding their own.
class ScheduleRegistry {
 public:
  /// Sets info.constraints from its rules. Throws std::invalid_argument if the name is taken,
  /// the planner is missing, a V or DualPipe shape does not take exactly 2 chunks, or a given
  /// `constraints` text differs from the rules'.
  void add(ScheduleInfo info);
  [[nodiscard]] const ScheduleInfo* find(std::string_view name) const;
  /// Throws UnknownNameError listing the valid names and the closest match.
  [[nodiscard]] const ScheduleInfo& get(std::string_view name) const;
  [[nodiscard]] std::span<const ScheduleInfo> all() const { return schedules_; }
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  std::vector<ScheduleInfo> schedules_;
};

void register_builtin_schedules(ScheduleRegistry& registry);

/// The registry holding every built-in schedule (built once, on first use).
const ScheduleRegistry& builtin_schedules();

/// Plans `spec.schedule` (refusing options it does not honour, applying split_backward)
/// and builds its event graph.
EventGraph build_schedule(const PipelineSpec& spec, const CostTable& costs,
                          const ScheduleRegistry& registry = builtin_schedules());

/// Where `spec`'s chunks run: the shape its schedule's plan has (`custom`: its shape), known
/// before planning (a cost model places layers by it). A name the registry does not hold:
/// linear for 1 chunk, interleaved for more.
PipelineShape schedule_shape(const PipelineSpec& spec,
                             const ScheduleRegistry& registry = builtin_schedules());

/// `perflow schedules`' text: per schedule a line with its name and description, and an
/// indented line with its constraints.
std::string schedule_listing(const ScheduleRegistry& registry = builtin_schedules());

/// The plan alone, with split_backward applied.
PipelinePlan plan_schedule(const PipelineSpec& spec, const CostTable& costs,
                           const ScheduleRegistry& registry = builtin_schedules());

}  // namespace perflow::parallel
