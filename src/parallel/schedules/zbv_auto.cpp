// ZBV automatic scheduler (Qi et al., "Zero Bubble Pipeline Parallelism", arXiv 2401.10241
// section 6; the V-shape heuristic of the ZB runtime, PipelineGraph.try_v_schedule in
// megatron/core/pipeline_parallel/zerobubble/scheduler/zbv.py of
// github.com/sail-sg/zero-bubble-pipeline-parallelism). It places every task greedily while
// simulating the pipeline, under a per-device activation limit (memory_limit, in F
// activations; default 2p):
//   1. one forward of chunk 0 per device; then, from the last device up, each device adds
//      chunk-0 forwards (to itself and every device above it) while they fit in memory and
//      end before its first chunk-1 forward can start, then runs that chunk-1 forward;
//   2. each device catches up with the forwards of the device above it, alternating chunks;
//   3. 2m rounds: every device runs one B (chunk 1 when its downstream B is ready, else chunk
//      0), then at most one F (chunk 1 when ready, else chunk 0). Before a B or F that would
//      wait for its input, deferred W's fill the wait; W's also run when memory is short.
//   4. the remaining W's.
// Each device's accumulated waiting ("stage bubble") is tracked; a pass may be rerun with the
// previous pass's bubbles as "approved" ones, which lets the other devices fill more, for as
// long as the largest bubble shrinks. The runtime tries this with and without W-filling before
// B's and before F's and keeps the smallest largest bubble.
//
// Differences from the runtime, all chosen so the result never finishes later than the
// runtime's own choice: every pass of every variant is a candidate and the one with the
// shortest simulated makespan wins (ties: smaller largest bubble, then earlier pass); a
// variant that gets stuck (the runtime would stop on an assertion) is skipped instead of
// failing the whole search; and the rerun chain is capped at kMaxPasses passes. Costs may
// differ per (device, chunk); memory is counted in F activations of the chunk (F adds 1, B
// frees backward_frees, W the rest). Like the runtime's heuristic (and zb), the placement
// adds the point-to-point time (CostTable::p2p_latency) to every input that crosses devices.
//
// The search gives the same result with less work: a variant differing from one already
// searched only in switches that none of its passes consulted (no decision went differently
// for them) would run the same passes and is skipped; a chain stops before a pass that would
// decide everything as the one before it (every device's approved bubble within the range
// that decides its fills the same way), which would end it unimproved; and the winner's
// steps are kept from its pass rather than built again.
//
// Cost: O(p*m) per pass plus O(p^2 * min(m, memory_limit)) for step 2.
#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "../detail/schedules.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/huge_page_allocator.hpp"

namespace perflow::parallel::detail {
namespace {

constexpr int kMaxPasses = 32;
constexpr TimeNs kUnset = -1;
constexpr double kMemoryEps = 1e-9;

// Task kinds of the heuristic and its "lanes": lane c of F is chunk c; lane c of B and W is
// chunk 1-c, so lane 0 always flows down the devices and lane 1 up.
enum Cat : std::uint32_t { kF = 0, kB = 1, kW = 2 };
constexpr std::uint32_t slot(Cat cat, std::uint32_t lane) { return cat * 2 + lane; }
constexpr std::uint32_t chunk_of(Cat cat, std::uint32_t lane) {
  return cat == kF ? lane : 1 - lane;
}

struct Model {
  std::uint32_t p = 0;
  std::uint32_t m = 0;
  double max_mem = 0;
  TimeNs comm = 0;                          // added to every cross-device input
  std::vector<std::array<TimeNs, 6>> cost;  // per device, by slot
  std::vector<std::array<double, 6>> mem;   // per device, by slot (F activations)
};

// Thrown inside a pass when the greedy placement gets stuck; never leaves this file.
struct Stuck {
  const char* why;
};

// The two switches of a variant, as bits: which ones a pass consulted in a way that changed
// what it did.
enum Switch : unsigned { kFillB = 1u << 0, kFillF = 1u << 1 };

struct Variant {
  bool fill_b;
  bool fill_f;
};

// What the search keeps of a pass besides its steps.
struct PassOutcome {
  std::vector<TimeNs> bubble;  // per device
  TimeNs max_bubble = 0;
  TimeNs makespan = 0;
};

// One greedy pass. The buffers are sized once and reused by every pass of the search.
class Pass {
 public:
  explicit Pass(const Model& model)
      : md_(model),
        approved_(model.p, 0),
        keep_from_(model.p),
        keep_below_(model.p),
        count_(model.p),
        end_(std::size_t{model.p} * model.m * 6),
        now_(model.p),
        mem_(model.p),
        bubble_(model.p),
        pending_(std::size_t{model.p} * model.m * 2),
        pending_head_(model.p),
        pending_tail_(model.p),
        placed_(model.p),
        steps_(std::size_t{model.p} * model.m * 6),
        kept_steps_(std::size_t{model.p} * model.m * 6) {}

  /// Runs the pass of `variant` with the previous pass's bubbles (`approved`, or none),
  /// recording its steps. Throws Stuck.
  PassOutcome run(const Variant& variant, const std::vector<TimeNs>* approved) {
    reset(variant, approved);
    const std::uint32_t p = md_.p;
    const std::uint32_t m = md_.m;
    // 1. Warm-up along the V.
    for (std::uint32_t s = 0; s < p; ++s) put(kF, 0, s);
    for (std::uint32_t s = p; s-- > 0;) {
      if (s == p - 1) {
        put(kF, 1, s);
        continue;
      }
      const TimeNs turn = end_at(kF, 1, s + 1, 0) + md_.comm;
      while (fits(mem_[s] + static_cast<double>(2 + 2 * s)) &&
             now_[s] + md_.cost[s][slot(kF, 0)] <= turn && count_[s][slot(kF, 0)] < m) {
        for (std::uint32_t j = 0; j <= s; ++j) put(kF, 0, j);
      }
      put(kF, 1, s);
    }
    // 2. Each device catches up with the forwards of the one above it.
    std::uint32_t lane = 0;
    for (std::uint32_t s = 1; s < p; ++s) {
      const auto& here = count_[s];
      const auto& above = count_[s - 1];
      while (here[0] + here[1] < above[0] + above[1] || (here[1] <= above[1] && above[1] < m)) {
        for (std::uint32_t j = p; j-- > s;) {
          if (count_[j][slot(kF, lane)] < m) put(kF, lane, j);
        }
        lane = 1 - lane;
      }
    }
    // 3. One B and at most one F per device and round.
    std::vector<std::uint32_t> lane0;
    std::vector<std::uint32_t> lane1;
    lane0.reserve(p);
    lane1.reserve(p);
    for (std::uint32_t round = 0; round < 2 * m; ++round) {
      for (std::uint32_t s = 0; s < p; ++s) {
        const double b_mem = std::max(md_.mem[s][slot(kB, 0)], md_.mem[s][slot(kB, 1)]);
        while (!fits(mem_[s] + b_mem)) put_w(s);
      }
      lane0.clear();
      lane1.clear();
      for (std::uint32_t s = 0; s < p; ++s) {
        const auto& c = count_[s];
        if (c[slot(kB, 1)] >= c[slot(kB, 0)]) {
          lane0.push_back(s);
        } else if (s == p - 1 || end_at(kB, 1, s + 1, c[slot(kB, 1)]) >= 0 || c[slot(kB, 0)] >= m) {
          lane1.push_back(s);
        } else {
          lane0.push_back(s);
        }
      }
      for (auto it = lane1.rbegin(); it != lane1.rend(); ++it) {
        const std::uint32_t s = *it;
        std::optional<std::size_t> dep;
        if (s < p - 1) dep = id(kB, 1, s + 1, count_[s][slot(kB, 1)]);
        fill_before(s, dep, 0);  // always allowed
        put(kB, 1, s);
      }
      for (const std::uint32_t s : lane0) {
        std::optional<std::size_t> dep;
        if (s > 0) dep = id(kB, 0, s - 1, count_[s][slot(kB, 0)]);
        fill_before(s, dep, kFillB);
        put(kB, 0, s);
      }
      for (std::uint32_t s = 0; s < p; ++s) {
        const auto& c = count_[s];
        if (c[slot(kF, 1)] >= m) continue;
        int next = -1;
        if (c[slot(kF, 1)] >= c[slot(kF, 0)]) {
          next = 0;
        } else if (s == p - 1 || end_at(kF, 1, s + 1, c[slot(kF, 1)]) >= 0) {
          next = 1;
        } else if (c[slot(kF, 0)] < m && (s == 0 || end_at(kF, 0, s - 1, c[slot(kF, 0)]) >= 0)) {
          next = 0;
        }
        if (next < 0) continue;
        while (!fits(mem_[s] + md_.mem[s][slot(kF, 0)])) put_w(s);
        std::optional<std::size_t> dep;
        if (next == 0 && s > 0) dep = id(kF, 0, s - 1, c[slot(kF, 0)]);
        if (next == 1 && s < p - 1) dep = id(kF, 1, s + 1, c[slot(kF, 1)]);
        fill_before(s, dep, kFillF);
        put(kF, static_cast<std::uint32_t>(next), s);
      }
    }
    // 4. The remaining weight gradients.
    for (std::uint32_t s = 0; s < p; ++s) {
      while (has_w(s)) put_w(s);
    }
    for (std::uint32_t s = 0; s < p; ++s) {
      if (placed_[s] != m * 6) throw Stuck{"tasks left unplaced"};
    }
    PassOutcome r;
    r.max_bubble = max_bubble_;
    r.makespan = *std::max_element(now_.begin(), now_.end());
    r.bubble = bubble_;
    return r;
  }

  /// The switches whose value changed a decision of the last run (Switch bits), up to where
  /// it ended or got stuck: a variant differing only in other switches runs the same pass.
  [[nodiscard]] unsigned consulted() const { return consulted_; }

  /// Keeps the last run's steps (the next run records over the ones kept before): the
  /// search keeps its best pass's this way instead of running it again.
  void keep_steps() { steps_.swap(kept_steps_); }
  /// Device s's kept program (6m steps).
  void kept_program(std::uint32_t s, std::vector<Step>& program) const {
    std::array<std::uint32_t, 6> next{};  // by slot
    program.reserve(std::size_t{md_.m} * 6);
    const std::uint8_t* k = kept_steps_.data() + std::size_t{s} * md_.m * 6;
    for (std::size_t n = 0; n < std::size_t{md_.m} * 6; ++n) {
      const auto cat = static_cast<Cat>(k[n] / 2);
      const std::uint32_t lane = k[n] % 2u;
      program.push_back({cat == kF ? TaskKind::F : (cat == kB ? TaskKind::B : TaskKind::W),
                         next[k[n]]++, chunk_of(cat, lane)});
    }
  }

  /// Would a pass of the same variant with `bubbles` as its input decide everything as the
  /// last run did (every device's approved bubble where none of its decisions changes), and
  /// so repeat it exactly?
  [[nodiscard]] bool repeats_with(const std::vector<TimeNs>& bubbles) const {
    const TimeNs top = *std::max_element(bubbles.begin(), bubbles.end());
    for (std::uint32_t s = 0; s < md_.p; ++s) {
      const TimeNs approved = top - bubbles[s];
      if (approved < keep_from_[s] || approved >= keep_below_[s]) return false;
    }
    return true;
  }

 private:
  void reset(const Variant& variant, const std::vector<TimeNs>* approved) {
    variant_ = variant;
    consulted_ = 0;
    std::fill(approved_.begin(), approved_.end(), TimeNs{0});
    if (approved != nullptr) {
      const TimeNs top = *std::max_element(approved->begin(), approved->end());
      for (std::uint32_t s = 0; s < md_.p; ++s) approved_[s] = top - (*approved)[s];
    }
    std::fill(keep_from_.begin(), keep_from_.end(), std::numeric_limits<TimeNs>::min());
    std::fill(keep_below_.begin(), keep_below_.end(), std::numeric_limits<TimeNs>::max());
    std::fill(count_.begin(), count_.end(), std::array<std::uint32_t, 6>{});
    std::fill(end_.begin(), end_.end(), kUnset);
    std::fill(now_.begin(), now_.end(), TimeNs{0});
    std::fill(mem_.begin(), mem_.end(), 0.0);
    std::fill(bubble_.begin(), bubble_.end(), TimeNs{0});
    max_bubble_ = 0;
    std::fill(pending_head_.begin(), pending_head_.end(), 0u);
    std::fill(pending_tail_.begin(), pending_tail_.end(), 0u);
    std::fill(placed_.begin(), placed_.end(), 0u);
  }

  // end_ is device-major, then microbatch, then slot: a device's tasks of one microbatch
  // share a cache line, and neighbouring devices work on nearby microbatches.
  [[nodiscard]] std::size_t id(std::uint32_t k, std::uint32_t s, std::uint32_t mb) const {
    assert(s < md_.p && mb < md_.m);
    return (std::size_t{s} * md_.m + mb) * 6 + k;
  }
  [[nodiscard]] std::size_t id(Cat cat, std::uint32_t lane, std::uint32_t s,
                               std::uint32_t mb) const {
    return id(slot(cat, lane), s, mb);
  }
  [[nodiscard]] TimeNs end_at(Cat cat, std::uint32_t lane, std::uint32_t s,
                              std::uint32_t mb) const {
    return mb < md_.m ? end_[id(cat, lane, s, mb)] : kUnset;
  }
  [[nodiscard]] bool fits(double memory) const { return memory <= md_.max_mem + kMemoryEps; }

  // The bubble a device may still accept: the largest bubble so far, or more where the
  // previous pass approved more on some other device.
  [[nodiscard]] TimeNs allowed_bubble(std::uint32_t s) const {
    return std::max(max_bubble_, approved_[s]);
  }

  // Runs deferred W's on device s ahead of a task whose cross-device input is `dep` (none at
  // the ends of the V): every W that ends before the input arrives, then one more if the
  // wait would exceed the bubble this device may accept and the variant's switch `fill`
  // (0: none, always fill) allows it.
  void fill_before(std::uint32_t s, std::optional<std::size_t> dep, unsigned fill) {
    while (has_w(s) && dep && end_[*dep] + md_.comm >= now_[s] + next_w_cost(s)) put_w(s);
    // Without an input the runtime reads the last entry of its end-time table (the last W of
    // lane 1 on the last device), which is unset until the very end; kept as it is.
    const TimeNs arrival = dep ? end_[*dep] + md_.comm : end_[id(kW, 1, md_.p - 1, md_.m - 1)];
    if (!has_w(s)) return;
    const TimeNs gap = arrival - now_[s];
    if (gap > max_bubble_ - bubble_[s]) {
      // Only here does the approved bubble decide: note the range of it that decides the same.
      const TimeNs bound = gap + bubble_[s];  // fill iff approved_[s] < bound
      if (approved_[s] < bound) {
        keep_below_[s] = std::min(keep_below_[s], bound);
      } else {
        keep_from_[s] = std::max(keep_from_[s], bound);
      }
    }
    if (gap > allowed_bubble(s) - bubble_[s]) {
      consulted_ |= fill;
      if (allows(fill)) put_w(s);
    }
  }
  [[nodiscard]] bool allows(unsigned fill) const {
    if (fill == kFillB) return variant_.fill_b;
    if (fill == kFillF) return variant_.fill_f;
    return true;
  }

  // Deferred W's of device s, by lane, first in first out.
  [[nodiscard]] bool has_w(std::uint32_t s) const { return pending_head_[s] < pending_tail_[s]; }
  [[nodiscard]] std::uint8_t next_w_lane(std::uint32_t s) const {
    return pending_[std::size_t{s} * md_.m * 2 + pending_head_[s]];
  }
  [[nodiscard]] TimeNs next_w_cost(std::uint32_t s) const {
    return md_.cost[s][slot(kW, next_w_lane(s))];
  }

  void put_w(std::uint32_t s) {
    if (!has_w(s)) throw Stuck{"no weight gradient to free memory"};
    const std::uint8_t lane = next_w_lane(s);
    ++pending_head_[s];
    put(kW, lane, s);
  }

  void put(Cat cat, std::uint32_t lane, std::uint32_t s) {
    const std::uint32_t k = slot(cat, lane);
    const std::uint32_t mb = count_[s][k];
    if (mb >= md_.m) throw Stuck{"microbatch count exceeded"};
    const double mem_after = mem_[s] + md_.mem[s][k];
    if (!fits(mem_after)) throw Stuck{"memory limit exceeded"};
    // Same-device predecessor the runtime requires: F lane 1 after F lane 0, B lane 0 after
    // F lane 1, B lane 1 after B lane 0, W after its B.
    if (k > 0) {
      const std::uint32_t before = cat == kW ? slot(kB, lane) : k - 1;
      if (end_[id(before, s, mb)] < 0) {
        throw Stuck{"same-device predecessor not placed"};
      }
    }
    const TimeNs duration = md_.cost[s][k];
    const TimeNs no_wait = now_[s] + duration;
    TimeNs finish = no_wait;
    if (cat != kW) {
      std::optional<std::size_t> dep;
      if (lane == 1 && s + 1 < md_.p) dep = id(cat, 1, s + 1, mb);
      if (lane == 0 && s > 0) dep = id(cat, 0, s - 1, mb);
      if (dep) {
        if (end_[*dep] < 0) throw Stuck{"cross-device input not placed"};
        finish = std::max(finish, end_[*dep] + md_.comm + duration);
      }
    }
    if (count_[s][slot(kF, 0)] > 0) {
      bubble_[s] += finish - no_wait;
      max_bubble_ = std::max(max_bubble_, bubble_[s]);
    }
    end_[id(cat, lane, s, mb)] = finish;
    now_[s] = finish;
    mem_[s] = mem_after;
    steps_[std::size_t{s} * md_.m * 6 + placed_[s]++] = static_cast<std::uint8_t>(k);
    if (cat == kB) {
      pending_[std::size_t{s} * md_.m * 2 + pending_tail_[s]++] = static_cast<std::uint8_t>(lane);
    }
    ++count_[s][k];
  }

  const Model& md_;
  Variant variant_{};
  unsigned consulted_ = 0;
  std::vector<TimeNs> approved_;  // extra bubble each device may accept
  // Per device, the approved bubbles [keep_from_, keep_below_) that decide as approved_ did.
  std::vector<TimeNs> keep_from_;
  std::vector<TimeNs> keep_below_;
  std::vector<std::array<std::uint32_t, 6>> count_;
  BigVector<TimeNs> end_;
  std::vector<TimeNs> now_;
  std::vector<double> mem_;
  std::vector<TimeNs> bubble_;
  TimeNs max_bubble_ = 0;
  BigVector<std::uint8_t> pending_;  // per device (2m each): lanes of deferred W's, FIFO
  std::vector<std::uint32_t> pending_head_;
  std::vector<std::uint32_t> pending_tail_;
  // Per device, 6m: the slot of each step in order (its microbatch is implied: the n-th step
  // of a slot is microbatch n).
  std::vector<std::uint32_t> placed_;
  BigVector<std::uint8_t> steps_;
  BigVector<std::uint8_t> kept_steps_;
};

}  // namespace

PipelinePlan plan_zbv_auto(const PipelineSpec& spec, const CostTable& costs) {
  require_sizes(spec, 2);
  Model model;
  model.p = spec.stages;
  model.m = spec.microbatches;
  model.max_mem = spec.memory_limit > 0 ? spec.memory_limit : 2.0 * spec.stages;
  model.comm = costs.p2p_latency();
  model.cost.resize(model.p);
  model.mem.resize(model.p);
  for (std::uint32_t s = 0; s < model.p; ++s) {
    for (const Cat cat : {kF, kB, kW}) {
      for (std::uint32_t lane = 0; lane < 2; ++lane) {
        const TaskCosts& c = costs.at(StageId{s}, chunk_of(cat, lane));
        const std::uint32_t k = slot(cat, lane);
        const double frees = std::clamp(c.backward_frees, 0.0, 1.0);
        switch (cat) {
          case kF:
            model.cost[s][k] = c.duration(TaskKind::F);
            model.mem[s][k] = 1.0;
            break;
          case kB:
            model.cost[s][k] = c.duration(TaskKind::B);
            model.mem[s][k] = -frees;
            break;
          case kW:
            model.cost[s][k] = c.duration(TaskKind::W);
            model.mem[s][k] = -(1.0 - frees);
            break;
        }
      }
    }
  }

  // The winning pass so far (its steps kept by `pass`).
  struct Best {
    TimeNs makespan;
    TimeNs max_bubble;
  };
  std::optional<Best> best;
  Pass pass(model);
  // Each variant's rerun chain, and which switches any of its passes consulted.
  std::vector<std::pair<Variant, unsigned>> searched;
  for (const bool fill_b : {true, false}) {
    for (const bool fill_f : {true, false}) {
      const Variant variant{fill_b, fill_f};
      // A variant differing from a searched one only in switches that chain never consulted
      // runs the same passes: nothing in it could win.
      const bool same_as_searched =
          std::any_of(searched.begin(), searched.end(), [&](const auto& other) {
            const unsigned differ = (other.first.fill_b != fill_b ? kFillB : 0u) |
                                    (other.first.fill_f != fill_f ? kFillF : 0u);
            return (differ & other.second) == 0;
          });
      if (same_as_searched) continue;
      unsigned consulted = 0;
      try {
        std::vector<TimeNs> approved;
        TimeNs previous = 0;
        for (int k = 0; k < kMaxPasses; ++k) {
          const std::vector<TimeNs>* input = k == 0 ? nullptr : &approved;
          PassOutcome r = pass.run(variant, input);
          consulted |= pass.consulted();
          if (!best || r.makespan < best->makespan ||
              (r.makespan == best->makespan && r.max_bubble < best->max_bubble)) {
            best = Best{r.makespan, r.max_bubble};
            pass.keep_steps();
          }
          const bool improved = k == 0 || r.max_bubble < previous;
          previous = r.max_bubble;
          approved = std::move(r.bubble);
          if (!improved) break;
          // A next pass deciding everything as this one would repeat it and end the chain
          // unimproved.
          if (pass.repeats_with(approved)) break;
        }
      } catch (const Stuck&) {
        // The runtime would stop here; the other variants may still succeed.
        consulted |= pass.consulted();
      }
      searched.emplace_back(variant, consulted);
    }
  }
  if (!best) {
    throw ScheduleError(
        fmt::format("{} found no schedule for {} stages and {} microbatches within memory_limit "
                    "{} (the ZB V-shape heuristic needs about 2 x stages = {} F activations; "
                    "v-half and v-min need less)",
                    spec.schedule, spec.stages, spec.microbatches, model.max_mem, 2 * spec.stages),
        "memory_limit");
  }
  PipelinePlan plan = empty_plan(spec, PipelineShape::VShape);
  for (std::uint32_t s = 0; s < spec.stages; ++s) pass.kept_program(s, plan.programs[s]);
  return plan;
}

}  // namespace perflow::parallel::detail
