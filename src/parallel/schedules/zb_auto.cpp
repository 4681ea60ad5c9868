// The Zero Bubble automatic scheduler (Qi et al., "Zero Bubble Pipeline Parallelism",
// ICLR 2024, section 3.2 "heuristic algorithm"), following the greedy construction of the
// reference repository (github.com/sail-sg/zero-bubble-pipeline-parallelism,
// megatron/core/pipeline_parallel/auto_schedule.py and zerobubble/scheduler/zb.py, the
// initial solution it hands to the ILP; the ILP itself is not run here).
//
// The construction walks the microbatches in order while keeping, per stage, the end time
// of its last task and the completion time of every F and B it placed:
//  - microbatch 0: every stage runs F0, then each stage takes as many extra warm-up
//    forwards as fit in the memory limit and in the time until its first B can start
//    (optionally allowing a bubble before that B), thinned so that each stage warms up
//    with fewer forwards than the one before; then B0 from the last stage back to the first;
//  - microbatch i >= 1: each stage decides whether to run one more forward (stage j runs one
//    only if stage j+1 does; "prioritize B" lets a stage skip its forward when it is already
//    two ahead and the forward would delay the next stage's B); before every F and every B a
//    stage runs pending W's while memory requires it and while they fit in the gap before
//    the F's / B's input arrives (optionally also when the gap is not longer than the
//    largest bubble seen so far); the first stage runs all pending W's once its forwards
//    are done; then B_i from the last stage back to the first;
//  - finally every stage runs its remaining W's.
// The reference tries the 2 x 2 x 2 combinations of its three switches and keeps the one
// with the shortest longest stage span; this one keeps the one with the shortest makespan
// (then the shortest longest span, then the reference's order), so it never finishes after
// the reference's choice. The construction is O(p * m) per combination. Each build notes the
// switches it consulted, those whose other value would have changed what it did (the warm-up
// forwards, the stages running a forward for some microbatch, a W run before a task): a
// combination differing from one already built only in switches that build did not consult
// would build the same schedule, so it is skipped; and the winner's steps are kept from its
// build rather than built again.
//
// Memory is counted in units of one F's activation per stage: F adds 1, B frees the
// stage's backward_frees, W frees the rest. memory_limit (default p, 1F1B's memory) bounds
// it on every stage; the result never exceeds it.
//
// Like the reference, the timing it plans with includes the point-to-point communication
// time between stages (CostTable::p2p_latency, set from the config's network.p2p_latency).
#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "../detail/schedules.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/huge_page_allocator.hpp"

namespace perflow::parallel::detail {
namespace {

struct Switches {
  bool allow_bubble_before_first_b;
  bool prioritize_b;
  bool no_bubble_greedy;
};

// The switches as bits: which ones a run consulted in a way that changed what it did.
enum SwitchBit : unsigned { kAllowBubble = 1u << 0, kPrioritizeB = 1u << 1, kGreedy = 1u << 2 };

unsigned bits(const Switches& s) {
  return (s.allow_bubble_before_first_b ? kAllowBubble : 0u) |
         (s.prioritize_b ? kPrioritizeB : 0u) | (s.no_bubble_greedy ? kGreedy : 0u);
}

struct StageCosts {
  TimeNs f = 0;
  TimeNs b = 0;
  TimeNs w = 0;
  double b_frees = 0;  // fraction of one activation B frees; W frees 1 - b_frees
};

struct Outcome {
  bool ok = false;
  TimeNs makespan = 0;
  TimeNs longest_span = 0;
};

class GreedyBuilder {
 public:
  GreedyBuilder(std::uint32_t stages, std::uint32_t microbatches, std::vector<StageCosts> costs,
                double memory_limit, TimeNs comm)
      : p_(stages),
        m_(microbatches),
        costs_(std::move(costs)),
        limit_(memory_limit),
        comm_(comm),
        f_(p_),
        b_(p_),
        w_(p_),
        end_(p_),
        bubble_(p_),
        f_done_(std::size_t{p_} * m_, 0),
        b_done_(std::size_t{p_} * m_, 0),
        kinds_(std::size_t{p_} * m_ * 3),
        kept_kinds_(std::size_t{p_} * m_ * 3) {}

  /// Builds one combination, recording its steps. The outcome is not ok (the steps then
  /// partial) if the construction gets stuck, which the checks in put() and fill_before()
  /// turn into a failure instead of an invalid order.
  Outcome run(const Switches& s);

  /// Keeps the last run's steps (the next run records over the ones kept before): the
  /// search keeps its best run's this way instead of running it again.
  void keep_steps() { kinds_.swap(kept_kinds_); }
  /// Stage j's kept program (3m steps).
  void kept_program(std::uint32_t j, std::vector<Step>& program) const;

  /// The switches whose value changed a decision of the last run (SwitchBit), up to where it
  /// ended: a combination differing only in other switches builds the same schedule.
  [[nodiscard]] unsigned consulted() const { return consulted_; }

 private:
  static constexpr double kEps = 1e-9;

  double memory(std::uint32_t j) const {
    const double backward_pending = static_cast<double>(b_[j] - w_[j]);
    return static_cast<double>(f_[j] - w_[j]) - backward_pending * costs_[j].b_frees;
  }
  double w_frees(std::uint32_t j) const { return 1.0 - costs_[j].b_frees; }
  bool fits(double amount) const { return amount <= limit_ + kEps; }
  // Microbatch-major: the stages of one microbatch are next to each other, and a step of the
  // construction works on one or two microbatches across the stages.
  TimeNs& f_time(std::uint32_t j, std::uint32_t mb) { return f_done_[std::size_t{mb} * p_ + j]; }
  TimeNs f_time(std::uint32_t j, std::uint32_t mb) const {
    return f_done_[std::size_t{mb} * p_ + j];
  }
  TimeNs& b_time(std::uint32_t j, std::uint32_t mb) { return b_done_[std::size_t{mb} * p_ + j]; }

  bool put(std::uint32_t j, TaskKind kind);
  /// Microbatch 0's extra warm-up forwards per stage, once every stage ran its F0: as many
  /// as fit in memory and end before the stage's first B can start (or, `allow_bubble`,
  /// start before it), thinned so that each stage warms up with fewer than the one before.
  [[nodiscard]] std::vector<std::uint32_t> warm_up_forwards(bool allow_bubble) const;
  /// "Prioritize B", for a stage already two forwards ahead of stage j+1: true if stage j
  /// should skip its next forward, which would delay stage j+1's next B.
  [[nodiscard]] bool would_delay_next_b(std::uint32_t j) const;
  /// Runs W's on stage j before a task whose input arrives at `ready`; false if stuck.
  bool fill_before(std::uint32_t j, double task_memory, TimeNs ready, bool has_ready,
                   const Switches& s);

  std::uint32_t p_;
  std::uint32_t m_;
  std::vector<StageCosts> costs_;
  double limit_;
  TimeNs comm_;
  std::vector<std::uint32_t> f_, b_, w_;
  std::vector<TimeNs> end_, bubble_;
  TimeNs max_bubble_ = 0;
  BigVector<TimeNs> f_done_, b_done_;
  // Per stage, 3m: the kinds of the current run's steps, in order. A step's microbatch is
  // implied: the n-th F (B, W) of a stage is microbatch n.
  BigVector<TaskKind> kinds_;
  BigVector<TaskKind> kept_kinds_;
  unsigned consulted_ = 0;
};

bool GreedyBuilder::put(std::uint32_t j, TaskKind kind) {
  const StageCosts& c = costs_[j];
  TimeNs finish = 0;
  TimeNs* slot = nullptr;
  std::uint32_t mb = 0;
  switch (kind) {
    case TaskKind::F: {
      mb = f_[j];
      if (mb >= m_ || (j > 0 && f_[j - 1] <= mb)) return false;
      finish = end_[j] + c.f;
      if (j > 0) finish = std::max(finish, f_time(j - 1, mb) + comm_ + c.f);
      slot = &f_time(j, mb);
      break;
    }
    case TaskKind::B: {
      mb = b_[j];
      if (mb >= f_[j] || (j + 1 < p_ && b_[j + 1] <= mb)) return false;
      finish = end_[j] + c.b;
      if (j + 1 < p_) finish = std::max(finish, b_time(j + 1, mb) + comm_ + c.b);
      slot = &b_time(j, mb);
      break;
    }
    default: {
      mb = w_[j];
      if (mb >= b_[j]) return false;
      finish = end_[j] + c.w;
      break;
    }
  }
  const TimeNs own = kind == TaskKind::F ? c.f : kind == TaskKind::B ? c.b : c.w;
  const TimeNs idle = finish - (end_[j] + own);
  if (f_[j] > 0) {
    bubble_[j] += idle;
    max_bubble_ = std::max(max_bubble_, bubble_[j]);
  }
  end_[j] = finish;
  if (slot != nullptr) *slot = finish;
  kinds_[std::size_t{j} * m_ * 3 + f_[j] + b_[j] + w_[j]] = kind;
  if (kind == TaskKind::F) ++f_[j];
  if (kind == TaskKind::B) ++b_[j];
  if (kind == TaskKind::W) ++w_[j];
  return true;
}

void GreedyBuilder::kept_program(std::uint32_t j, std::vector<Step>& program) const {
  std::array<std::uint32_t, 3> next{};  // by kind: F, B, W
  program.reserve(std::size_t{m_} * 3);
  const auto* kind = kept_kinds_.data() + std::size_t{j} * m_ * 3;
  for (std::size_t n = 0; n < std::size_t{m_} * 3; ++n) {
    program.push_back({kind[n], next[static_cast<std::size_t>(kind[n])]++, 0});
  }
}

std::vector<std::uint32_t> GreedyBuilder::warm_up_forwards(bool allow_bubble) const {
  std::vector<std::uint32_t> extra(p_, 0);
  TimeNs first_b_ready = f_time(p_ - 1, 0) + costs_[p_ - 1].b;
  for (std::uint32_t j = p_ - 1; j-- > 0;) {
    double mem = memory(j);
    TimeNs t = end_[j];
    while (f_[j] + extra[j] < m_ && fits(mem + 1.0)) {
      if (allow_bubble ? t + costs_[j].f > first_b_ready + comm_ : t >= first_b_ready + comm_) {
        break;
      }
      mem += 1.0;
      t += costs_[j].f;
      ++extra[j];
    }
    first_b_ready = std::max(t, first_b_ready + comm_) + costs_[j].b;
  }
  for (std::uint32_t j = 1; j < p_; ++j) {
    while (extra[j] > 0 && extra[j] >= extra[j - 1] && f_[j] + extra[j] < m_) --extra[j];
    extra[j] = std::min(extra[j], extra[j - 1]);  // never outrun the previous stage
  }
  return extra;
}

bool GreedyBuilder::would_delay_next_b(std::uint32_t j) const {
  const TimeNs next_b = end_[j + 1] + costs_[j + 1].f + costs_[j + 1].b + comm_;
  if (end_[j] >= next_b) return true;
  TimeNs w_cost = 0;
  double mem = memory(j) + 1.0;
  for (std::uint32_t k = w_[j]; !fits(mem) && k < b_[j]; ++k) {
    w_cost += costs_[j].w;
    mem -= w_frees(j);
  }
  return end_[j] + costs_[j].f + w_cost > next_b && next_b - end_[j] <= max_bubble_ - bubble_[j];
}

bool GreedyBuilder::fill_before(std::uint32_t j, double task_memory, TimeNs ready, bool has_ready,
                                const Switches& s) {
  while (!fits(memory(j) + task_memory)) {
    if (!put(j, TaskKind::W)) return false;  // the reference's "Cannot fit memory"
  }
  if (!has_ready) return true;
  while (w_[j] < b_[j] && end_[j] + costs_[j].w <= ready) put(j, TaskKind::W);
  if (w_[j] < b_[j] && end_[j] < ready) {
    // A W would overrun the arrival; run it anyway unless the gap is a bubble no longer
    // than the largest one so far and the greedy switch is off.
    const bool long_gap = ready - end_[j] > max_bubble_ - bubble_[j];
    if (!long_gap) consulted_ |= kGreedy;
    if (long_gap || s.no_bubble_greedy) put(j, TaskKind::W);
  }
  return true;
}

Outcome GreedyBuilder::run(const Switches& s) {
  std::fill(f_.begin(), f_.end(), 0u);
  std::fill(b_.begin(), b_.end(), 0u);
  std::fill(w_.begin(), w_.end(), 0u);
  std::fill(end_.begin(), end_.end(), TimeNs{0});
  std::fill(bubble_.begin(), bubble_.end(), TimeNs{0});
  max_bubble_ = 0;
  consulted_ = 0;
  Outcome fail;
  // Microbatch 0: F0 everywhere, extra warm-up forwards, then B0 back up the pipeline.
  for (std::uint32_t j = 0; j < p_; ++j) {
    if (!put(j, TaskKind::F)) return fail;
  }
  const std::vector<std::uint32_t> extra = warm_up_forwards(s.allow_bubble_before_first_b);
  // The switch is consulted only where it changes the warm-up.
  if (extra != warm_up_forwards(!s.allow_bubble_before_first_b)) consulted_ |= kAllowBubble;
  for (std::uint32_t j = 0; j < p_; ++j) {
    for (std::uint32_t k = 0; k < extra[j]; ++k) {
      if (!put(j, TaskKind::F)) return fail;
    }
  }
  for (std::uint32_t j = p_; j-- > 0;) {
    if (!put(j, TaskKind::B)) return fail;
  }

  // Which stages run a forward this microbatch, with the switch as set and flipped.
  std::vector<std::uint8_t> wants_f(p_, 0);
  std::vector<std::uint8_t> wants_f_flipped(p_, 0);
  for (std::uint32_t i = 1; i < m_; ++i) {
    bool any_yields = false;
    for (std::uint32_t j = 0; j < p_; ++j) {
      const std::uint8_t may = f_[j] < m_ ? 1 : 0;
      const bool yields = may != 0 && j + 1 < p_ && f_[j] >= f_[j + 1] + 2 && would_delay_next_b(j);
      any_yields = any_yields || yields;
      const std::uint8_t prioritized = yields ? 0 : may;
      wants_f[j] = s.prioritize_b ? prioritized : may;
      wants_f_flipped[j] = s.prioritize_b ? may : prioritized;
    }
    for (std::uint32_t j = p_ - 1; j-- > 0;) wants_f[j] = std::min(wants_f[j], wants_f[j + 1]);
    if (any_yields) {
      // The switch is consulted only where it changes which stages run a forward.
      for (std::uint32_t j = p_ - 1; j-- > 0;) {
        wants_f_flipped[j] = std::min(wants_f_flipped[j], wants_f_flipped[j + 1]);
      }
      if (wants_f != wants_f_flipped) consulted_ |= kPrioritizeB;
    }
    for (std::uint32_t j = 0; j < p_; ++j) {
      if (wants_f[j] == 0) continue;
      const bool has_ready = j > 0 && f_[j - 1] > f_[j];
      const TimeNs ready = has_ready ? f_time(j - 1, f_[j]) + comm_ : 0;
      if (j > 0 && !has_ready) return fail;
      if (!fill_before(j, 1.0, ready, has_ready, s) || !put(j, TaskKind::F)) return fail;
    }
    for (std::uint32_t j = p_; j-- > 0;) {
      const bool has_ready = j + 1 < p_;
      const TimeNs ready = has_ready ? b_time(j + 1, i) + comm_ : 0;
      if (!fill_before(j, -costs_[j].b_frees, ready, has_ready, s)) return fail;
      if (j == 0 && f_[0] == m_) {
        while (w_[0] < b_[0]) put(0, TaskKind::W);
      }
      if (!put(j, TaskKind::B)) return fail;
    }
  }
  for (std::uint32_t j = 0; j < p_; ++j) {
    while (w_[j] < m_) {
      if (!put(j, TaskKind::W)) return fail;
    }
  }

  Outcome out{true, 0, 0};
  for (std::uint32_t j = 0; j < p_; ++j) {
    out.makespan = std::max(out.makespan, end_[j]);
    out.longest_span = std::max(out.longest_span, end_[j] - (f_time(j, 0) - costs_[j].f));
  }
  return out;
}

}  // namespace

PipelinePlan plan_zb_auto(const PipelineSpec& spec, const CostTable& costs) {
  require_sizes(spec, 1);
  const double limit =
      spec.memory_limit == 0 ? static_cast<double>(spec.stages) : spec.memory_limit;
  if (!(limit >= 1.0)) {
    throw ScheduleError(fmt::format("{} needs memory_limit >= 1 (one forward's activation), "
                                    "got {}",
                                    spec.schedule, limit),
                        "memory_limit");
  }
  std::vector<StageCosts> stage_costs(spec.stages);
  for (std::uint32_t d = 0; d < spec.stages; ++d) {
    const TaskCosts& c = costs.at(StageId{d}, 0);
    stage_costs[d] = {c.duration(TaskKind::F), c.duration(TaskKind::B), c.duration(TaskKind::W),
                      std::clamp(c.backward_frees, 0.0, 1.0)};
  }
  GreedyBuilder builder(spec.stages, spec.microbatches, std::move(stage_costs), limit,
                        costs.p2p_latency());

  // The reference's order of the eight combinations.
  std::array<Switches, 8> all{};
  std::size_t n = 0;
  for (const bool allow : {true, false}) {
    for (const bool prioritize : {true, false}) {
      for (const bool greedy : {true, false}) all[n++] = {allow, prioritize, greedy};
    }
  }
  std::size_t best = all.size();
  Outcome best_outcome;
  // Each combination run, and the switches its run consulted.
  std::vector<std::pair<unsigned, unsigned>> runs;
  for (std::size_t k = 0; k < all.size(); ++k) {
    // A combination differing from one already run only in switches that run never consulted
    // builds the same schedule: it could not win.
    const unsigned switches = bits(all[k]);
    if (std::any_of(runs.begin(), runs.end(),
                    [&](const auto& run) { return ((run.first ^ switches) & run.second) == 0; })) {
      continue;
    }
    const Outcome o = builder.run(all[k]);
    runs.emplace_back(switches, builder.consulted());
    if (!o.ok) continue;
    if (best == all.size() || o.makespan < best_outcome.makespan ||
        (o.makespan == best_outcome.makespan && o.longest_span < best_outcome.longest_span)) {
      best = k;
      best_outcome = o;
      builder.keep_steps();
    }
  }
  if (best == all.size()) {
    throw ScheduleError(
        fmt::format("{} cannot fit the schedule in memory_limit {}", spec.schedule, limit),
        "memory_limit");
  }
  PipelinePlan plan = empty_plan(spec, PipelineShape::Linear);
  for (std::uint32_t j = 0; j < spec.stages; ++j) builder.kept_program(j, plan.programs[j]);
  return plan;
}

}  // namespace perflow::parallel::detail
