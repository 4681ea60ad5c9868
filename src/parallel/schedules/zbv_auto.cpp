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
// Cost: O(p*m) per pass plus O(p^2 * min(m, memory_limit)) for step 2.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "../detail/schedules.hpp"
#include "perflow/core/error.hpp"

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

struct PassResult {
  std::vector<std::vector<Step>> programs;
  std::vector<TimeNs> bubble;  // per device
  TimeNs max_bubble = 0;
  TimeNs makespan = 0;
};

class Pass {
 public:
  Pass(const Model& model, bool fill_f, bool fill_b, const std::vector<TimeNs>* approved)
      : md_(model),
        fill_f_(fill_f),
        fill_b_(fill_b),
        count_(model.p, std::array<std::uint32_t, 6>{}),
        end_(std::size_t{model.p} * model.m * 6, kUnset),
        now_(model.p, 0),
        mem_(model.p, 0.0),
        bubble_(model.p, 0),
        pending_(model.p),
        pending_head_(model.p, 0),
        programs_(model.p) {
    approved_.assign(model.p, 0);
    if (approved != nullptr) {
      const TimeNs top = *std::max_element(approved->begin(), approved->end());
      for (std::uint32_t s = 0; s < model.p; ++s) approved_[s] = top - (*approved)[s];
    }
    for (std::uint32_t s = 0; s < model.p; ++s) {
      programs_[s].reserve(std::size_t{model.m} * 6);
      pending_[s].reserve(std::size_t{model.m} * 2);
    }
  }

  PassResult run() {
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
        fill_before(s, dep, /*fill=*/true);
        put(kB, 1, s);
      }
      for (const std::uint32_t s : lane0) {
        std::optional<std::size_t> dep;
        if (s > 0) dep = id(kB, 0, s - 1, count_[s][slot(kB, 0)]);
        fill_before(s, dep, fill_b_);
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
        fill_before(s, dep, fill_f_);
        put(kF, static_cast<std::uint32_t>(next), s);
      }
    }
    // 4. The remaining weight gradients.
    for (std::uint32_t s = 0; s < p; ++s) {
      while (pending_head_[s] < pending_[s].size()) put_w(s);
    }
    for (std::uint32_t s = 0; s < p; ++s) {
      if (programs_[s].size() != std::size_t{m} * 6) throw Stuck{"tasks left unplaced"};
    }
    PassResult r;
    r.max_bubble = max_bubble_;
    r.makespan = *std::max_element(now_.begin(), now_.end());
    r.bubble = std::move(bubble_);
    r.programs = std::move(programs_);
    return r;
  }

 private:
  [[nodiscard]] std::size_t id(Cat cat, std::uint32_t lane, std::uint32_t s,
                               std::uint32_t mb) const {
    return ((std::size_t{slot(cat, lane)} * md_.p + s) * md_.m) + mb;
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
  // wait would exceed the bubble this device may accept (and `fill` allows it).
  void fill_before(std::uint32_t s, std::optional<std::size_t> dep, bool fill) {
    const auto has_w = [&] { return pending_head_[s] < pending_[s].size(); };
    while (has_w() && dep && end_[*dep] + md_.comm >= now_[s] + next_w_cost(s)) put_w(s);
    // Without an input the runtime reads the last entry of its end-time table (the last W of
    // lane 1 on the last device), which is unset until the very end; kept as it is.
    const TimeNs arrival = dep ? end_[*dep] + md_.comm : end_.back();
    if (has_w() && arrival - now_[s] > allowed_bubble(s) - bubble_[s] && fill) put_w(s);
  }

  [[nodiscard]] TimeNs next_w_cost(std::uint32_t s) const {
    return md_.cost[s][slot(kW, pending_[s][pending_head_[s]])];
  }

  void put_w(std::uint32_t s) {
    if (pending_head_[s] >= pending_[s].size()) throw Stuck{"no weight gradient to free memory"};
    put(kW, pending_[s][pending_head_[s]++], s);
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
      if (end_[((std::size_t{before} * md_.p + s) * md_.m) + mb] < 0) {
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
    programs_[s].push_back({cat == kF ? TaskKind::F : (cat == kB ? TaskKind::B : TaskKind::W), mb,
                            chunk_of(cat, lane)});
    if (cat == kB) pending_[s].push_back(static_cast<std::uint8_t>(lane));
    ++count_[s][k];
  }

  const Model& md_;
  bool fill_f_;
  bool fill_b_;
  std::vector<TimeNs> approved_;  // extra bubble each device may accept
  std::vector<std::array<std::uint32_t, 6>> count_;
  std::vector<TimeNs> end_;
  std::vector<TimeNs> now_;
  std::vector<double> mem_;
  std::vector<TimeNs> bubble_;
  TimeNs max_bubble_ = 0;
  std::vector<std::vector<std::uint8_t>> pending_;  // lanes of deferred W's, FIFO
  std::vector<std::size_t> pending_head_;
  std::vector<std::vector<Step>> programs_;
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
            model.cost[s][k] = c.forward;
            model.mem[s][k] = 1.0;
            break;
          case kB:
            model.cost[s][k] = c.backward;
            model.mem[s][k] = -frees;
            break;
          case kW:
            model.cost[s][k] = c.weight;
            model.mem[s][k] = -(1.0 - frees);
            break;
        }
      }
    }
  }

  std::optional<PassResult> best;
  const auto consider = [&](PassResult&& r) {
    if (!best || r.makespan < best->makespan ||
        (r.makespan == best->makespan && r.max_bubble < best->max_bubble)) {
      best = std::move(r);
    }
  };
  for (const bool fill_b : {true, false}) {
    for (const bool fill_f : {true, false}) {
      try {
        std::vector<TimeNs> approved;
        TimeNs previous = 0;
        for (int pass = 0; pass < kMaxPasses; ++pass) {
          PassResult r = Pass(model, fill_f, fill_b, pass == 0 ? nullptr : &approved).run();
          const bool improved = pass == 0 || r.max_bubble < previous;
          previous = r.max_bubble;
          approved = r.bubble;
          consider(std::move(r));
          if (!improved) break;
        }
      } catch (const Stuck&) {
        // The runtime would stop here; the other variants may still succeed.
      }
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
  plan.programs = std::move(best->programs);
  return plan;
}

}  // namespace perflow::parallel::detail
