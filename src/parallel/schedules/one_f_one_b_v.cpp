// 1F1B-V: the V-shape 1F1B with fused backward, the baseline of Qi et al., "Pipeline
// Parallelism with Controllable Memory" (NeurIPS 2024, arXiv 2405.15362), following the
// program order of the reference runtime's V-shape 1F1B generator
// (github.com/sail-sg/zero-bubble-pipeline-parallelism, zerobubble/scheduler/v1f1b.py).
//
// Construction, restated:
//  1. A repeating block of six slots per device holds one forward of each chunk (F0 down the
//     V, F1 up it), one backward of each chunk (B1 runs first, from device 0 upwards; B0 then
//     runs from device p-1 downwards) and a placeholder W after each backward. The slots are
//     numbered by walking the V: F0 on devices 0..p-1, F1 on p-1..0, then the (B, W) pairs of
//     chunk 1 on 0..p-1 and of chunk 0 on p-1..0, two slots per pair with a gap of three
//     slots after every third pair (and three more before the first pair when 3 divides p),
//     all taken modulo 6.
//  2. Repeating that block along a slot axis, each (device, kind) keeps exactly m copies:
//     the first one at or after a cursor that walks the same V (a W's first copy is the first
//     one after its backward's), then one per block.
//  3. One sweep over the slots, device by device within a slot, pulls every task as early as
//     its dependences and free slots allow (a backward wants two free slots, one for its W);
//     a forward is pulled back only while the device's activation count stays below the
//     pattern's peak, so the warm-up fills in without raising peak memory.
//  4. The W placeholders are dropped: each backward runs fused (BW).
// The pull-back keeps the block's peak: every device holds at most 2(p - floor((p-1)/3))
// chunk activations, reached once m >= p (simulated; e.g. 6 at p = 4, 10 at p = 6 and 7,
// 18 at p = 12), i.e. p - floor((p-1)/3) full-stage activations against 1F1B's p. Every
// p >= 1 and m >= 1 is accepted (the sweep never needs more than m copies).
#include <array>
#include <cstddef>
#include <vector>

#include "../detail/schedules.hpp"

namespace perflow::parallel::detail {
namespace {

// The six kinds of the block, in the order the construction numbers them.
enum Kind : std::uint8_t { kF0, kF1, kB1, kB0, kW1, kW0, kKinds, kEmpty = 0xff };

// Slot offset (0..5) of each kind in device d's block.
std::vector<std::array<std::uint32_t, kKinds>> block_offsets(std::uint32_t p) {
  std::vector<std::array<std::uint32_t, kKinds>> off(p);
  std::uint32_t now = 0;
  for (std::uint32_t d = 0; d < p; ++d) off[d][kF0] = ++now;
  for (std::uint32_t i = 0; i < p; ++i) off[p - 1 - i][kF1] = ++now;
  ++now;
  if (p % 3 == 0) now += 3;
  std::uint32_t cycle = (3 - (p + 2) % 3) % 3;
  const auto place_pair = [&](std::uint32_t d, Kind b, Kind w) {
    off[d][b] = now;
    off[d][w] = now + 1;
    now += 2;
    if (++cycle == 3) {
      cycle = 0;
      now += 3;
    }
  };
  for (std::uint32_t d = 0; d < p; ++d) place_pair(d, kB1, kW1);
  for (std::uint32_t i = 0; i < p; ++i) place_pair(p - 1 - i, kB0, kW0);
  for (auto& o : off) {
    for (auto& x : o) x %= 6;
  }
  return off;
}

}  // namespace

PipelinePlan plan_1f1b_v(const PipelineSpec& spec, const CostTable& /*costs*/) {
  require_sizes(spec, 2);
  PipelinePlan plan = empty_plan(spec, PipelineShape::VShape);
  const std::uint32_t p = spec.stages;
  const std::uint32_t m = spec.microbatches;
  const auto off = block_offsets(p);

  // Step 2: the first copy of each (device, kind) on the slot axis.
  std::vector<std::array<std::size_t, kKinds>> first(p);
  std::size_t cursor = 6;
  const auto first_at_or_after = [&](std::uint32_t d, Kind k, std::size_t from) {
    return from + (off[d][k] + 6 - from % 6) % 6;
  };
  const std::array<Kind, 4> walk = {kF0, kF1, kB1, kB0};
  for (const Kind k : walk) {
    const bool down = k == kF0 || k == kB1;
    for (std::uint32_t i = 0; i < p; ++i) {
      const std::uint32_t d = down ? i : p - 1 - i;
      first[d][k] = first_at_or_after(d, k, cursor);
      cursor = first[d][k] + 1;
      if (k == kB1) first[d][kW1] = first_at_or_after(d, kW1, cursor);
      if (k == kB0) first[d][kW0] = first_at_or_after(d, kW0, cursor);
    }
  }

  // The slot grid (device-major) and each device's running activation count.
  const std::size_t slots = cursor + 6 * (std::size_t{m} + 2);
  std::vector<std::uint8_t> grid(std::size_t{p} * slots, kEmpty);
  std::vector<std::int32_t> mem(std::size_t{p} * slots, 0);
  std::int32_t peak = 0;
  for (std::uint32_t d = 0; d < p; ++d) {
    std::uint8_t* row = &grid[std::size_t{d} * slots];
    for (std::uint8_t k = 0; k < kKinds; ++k) {
      for (std::uint32_t i = 0; i < m; ++i) row[first[d][k] + 6 * std::size_t{i}] = k;
    }
    std::int32_t* level = &mem[std::size_t{d} * slots];
    std::int32_t cur = 0;
    for (std::size_t s = 0; s < slots; ++s) {
      if (row[s] == kF0 || row[s] == kF1) ++cur;
      if (row[s] == kW0 || row[s] == kW1) --cur;
      level[s] = cur;
      peak = std::max(peak, cur);
    }
  }

  // Step 3: where each (device, kind, microbatch) finally sits; -1 until placed.
  std::vector<std::int64_t> at(std::size_t{p} * m * kKinds, -1);
  const auto loc = [&](std::uint32_t d, std::uint32_t mb, Kind k) -> std::int64_t& {
    return at[(std::size_t{d} * m + mb) * kKinds + k];
  };
  std::vector<std::array<std::uint32_t, kKinds>> seen(p, std::array<std::uint32_t, kKinds>{});
  for (std::size_t s = 0; s < slots; ++s) {
    for (std::uint32_t d = 0; d < p; ++d) {
      std::uint8_t* row = &grid[std::size_t{d} * slots];
      std::int32_t* level = &mem[std::size_t{d} * slots];
      if (row[s] == kEmpty) continue;
      const auto k = static_cast<Kind>(row[s]);
      const std::uint32_t mb = seen[d][k]++;
      // The earliest slot after the previous copy and the task's dependence in this sweep.
      std::int64_t after = mb > 0 ? loc(d, mb - 1, k) : -1;
      switch (k) {
        case kF0:
          if (d > 0) after = std::max(after, loc(d - 1, mb, kF0));
          break;
        case kF1:
          after = std::max(after, d + 1 < p ? loc(d + 1, mb, kF1) : loc(d, mb, kF0));
          break;
        case kB1:  // the previous device's backward ends with its W
          after = std::max(after, d > 0 ? loc(d - 1, mb, kW1) : loc(d, mb, kF1));
          break;
        case kB0:
          after = std::max(after, d + 1 < p ? loc(d + 1, mb, kW0) : loc(d, mb, kW1));
          break;
        case kW1:
          after = std::max(after, loc(d, mb, kB1));
          break;
        case kW0:
          after = std::max(after, loc(d, mb, kB0));
          break;
        default:
          break;
      }
      auto to = static_cast<std::size_t>(after + 1);
      while (to < s && row[to] != kEmpty) ++to;
      if (k == kB0 || k == kB1) {
        while (to < s && (row[to] != kEmpty || row[to + 1] != kEmpty)) ++to;
      }
      if (to >= s) {
        loc(d, mb, k) = static_cast<std::int64_t>(s);
        continue;
      }
      if (k == kF0 || k == kF1) {
        // Pull back only over slots where one more activation stays within the peak.
        std::size_t place = s;
        while (place > to && level[place - 1] < peak) --place;
        while (place < s && row[place] != kEmpty) ++place;
        if (place == s) {
          loc(d, mb, k) = static_cast<std::int64_t>(s);
          continue;
        }
        to = place;
        for (std::size_t j = to; j < s; ++j) ++level[j];
      } else if (k == kW0 || k == kW1) {
        for (std::size_t j = to; j < s; ++j) --level[j];
      }
      row[to] = row[s];
      row[s] = kEmpty;
      loc(d, mb, k) = static_cast<std::int64_t>(to);
    }
  }

  // Step 4: read each device's row in slot order, dropping the W placeholders.
  for (std::uint32_t d = 0; d < p; ++d) {
    auto& program = plan.programs[d];
    program.reserve(std::size_t{m} * 4);
    std::array<std::uint32_t, kKinds> next{};
    const std::uint8_t* row = &grid[std::size_t{d} * slots];
    for (std::size_t s = 0; s < slots; ++s) {
      switch (row[s]) {
        case kF0:
          program.push_back({TaskKind::F, next[kF0]++, 0});
          break;
        case kF1:
          program.push_back({TaskKind::F, next[kF1]++, 1});
          break;
        case kB0:
          program.push_back({TaskKind::BW, next[kB0]++, 0});
          break;
        case kB1:
          program.push_back({TaskKind::BW, next[kB1]++, 1});
          break;
        default:
          break;
      }
    }
  }
  return plan;
}

}  // namespace perflow::parallel::detail
