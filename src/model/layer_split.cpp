#include "perflow/model/layer_split.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace perflow::model {
namespace {

// Lays `units` per position out in order: the first unit is the embedding, the last the LM
// head, the rest are layers.
std::vector<LayerRange> ranges_from_units(std::span<const std::uint32_t> units) {
  const std::uint32_t total = std::accumulate(units.begin(), units.end(), 0u);
  std::vector<LayerRange> out(units.size());
  std::uint32_t unit = 0;
  std::uint32_t layer = 0;
  for (std::size_t k = 0; k < units.size(); ++k) {
    if (units[k] == 0) {
      throw std::invalid_argument("pipeline position " + std::to_string(k) +
                                  " would hold no layer");
    }
    LayerRange& range = out[k];
    range.first = layer;
    range.embedding = unit == 0;
    range.head = unit + units[k] == total;
    range.count = units[k] - (range.embedding ? 1 : 0) - (range.head ? 1 : 0);
    layer += range.count;
    unit += units[k];
  }
  return out;
}

// The running sums of one stage's unit seconds: sums[j] is units [0, j).
std::vector<double> prefix_sums(const UnitSeconds& stage) {
  std::vector<double> sums;
  sums.reserve(stage.layers.size() + 3);
  double total = 0;
  sums.push_back(total);
  total += stage.embedding;
  sums.push_back(total);
  for (const double layer : stage.layers) {
    total += layer;
    sums.push_back(total);
  }
  total += stage.head;
  sums.push_back(total);
  return sums;
}

void check_stages(std::span<const UnitSeconds> stages, std::span<const std::uint32_t> stage_of) {
  if (stages.empty() || stage_of.empty()) {
    throw std::invalid_argument("a split needs a position and a stage");
  }
  for (const UnitSeconds& stage : stages) {
    if (stage.layers.size() != stages.front().layers.size()) {
      throw std::invalid_argument("the stages' unit seconds cover different numbers of layers");
    }
  }
  for (const std::uint32_t d : stage_of) {
    if (d >= stages.size()) throw std::invalid_argument("a position's stage is out of range");
  }
}

// Each stage holds one position: the exact min-max partition of the units into contiguous
// runs (dynamic programming); of the partitions as fast, the one that shares the slack evenly
// (each position, from the last back, starting nearest its share of the units left).
std::vector<LayerRange> one_position_each(std::span<const UnitSeconds> stages,
                                          std::span<const std::uint32_t> stage_of) {
  const std::size_t positions = stage_of.size();
  const std::size_t units = stages.front().layers.size() + 2;
  if (double(positions) * double(units + 1) > 5e7) {
    throw std::invalid_argument("too many layers and positions to balance; give the counts");
  }
  std::vector<std::vector<double>> sums(stages.size());
  for (const std::uint32_t d : stage_of) {
    if (sums[d].empty()) sums[d] = prefix_sums(stages[d]);
  }
  const auto cost = [&](std::size_t k, std::size_t i, std::size_t j) {
    const std::vector<double>& s = sums[stage_of[k]];
    return s[j] - s[i];
  };

  // best[k][j]: the slowest of positions 0..k holding units [0, j) at their fastest; each
  // position holds at least one unit, so j runs from k + 1 to units - (positions - 1 - k).
  constexpr double kNone = std::numeric_limits<double>::infinity();
  std::vector<double> best(positions * (units + 1), kNone);
  const auto at = [&](std::size_t k, std::size_t j) -> double& {
    return best[k * (units + 1) + j];
  };
  for (std::size_t j = 1; j + positions - 1 <= units; ++j) at(0, j) = cost(0, 0, j);
  for (std::size_t k = 1; k < positions; ++k) {
    for (std::size_t j = k + 1; j + positions - 1 - k <= units; ++j) {
      double fastest = kNone;
      // Position k holds [i, j): its own time only grows as i falls, so stop once it alone
      // is no better.
      for (std::size_t i = j - 1; i >= k; --i) {
        const double own = cost(k, i, j);
        if (own >= fastest) break;
        fastest = std::min(fastest, std::max(at(k - 1, i), own));
      }
      at(k, j) = fastest;
    }
  }
  const double bound = at(positions - 1, units);
  const double slack = bound * 1e-9;  // rounding: equal splits summed in other orders

  // Back from the last position: of the starts that keep every position within the bound,
  // the nearest its share of the units left (the earlier on a tie).
  std::vector<std::uint32_t> held(positions);
  std::size_t end = units;
  for (std::size_t k = positions - 1; k > 0; --k) {
    const std::size_t target = (end * k + (k + 1) / 2) / (k + 1);
    const auto distance = [&](std::size_t x) { return x > target ? x - target : target - x; };
    std::size_t chosen = units;
    for (std::size_t i = k; i < end; ++i) {
      if (at(k - 1, i) > bound + slack || cost(k, i, end) > bound + slack) continue;
      if (chosen == units || distance(i) < distance(chosen)) chosen = i;
    }
    held[k] = static_cast<std::uint32_t>(end - chosen);
    end = chosen;
  }
  held[0] = static_cast<std::uint32_t>(end);
  return ranges_from_units(held);
}

// Stages holding several positions (interleaved, V-shape): a stage runs all of them, so its
// load is what counts. Each layer goes to the stage whose load after taking it is lowest (a
// layer costing a stage's mean layer; optimal for equal layers), the embedding and the head
// staying where they are; then a stage's layers are shared over its positions evenly, the
// spare ones to its later chunks without the embedding or the head first, then its first
// chunk (the warm-up runs every stage's first chunk back to back before any other), then
// the chunks with the embedding or the head.
std::vector<LayerRange> several_positions_each(std::span<const UnitSeconds> stages,
                                               std::span<const std::uint32_t> stage_of) {
  const std::size_t positions = stage_of.size();
  const std::uint32_t layers = static_cast<std::uint32_t>(stages.front().layers.size());
  const auto carries = [&](std::size_t k) { return k == 0 || k + 1 == positions; };
  std::vector<double> load(stages.size(), 0.0);
  std::vector<double> per_layer(stages.size(), 0.0);
  std::vector<std::uint32_t> count(stages.size(), 0);
  for (std::size_t d = 0; d < stages.size(); ++d) {
    const std::vector<double>& l = stages[d].layers;
    per_layer[d] = l.empty() ? 0.0 : std::accumulate(l.begin(), l.end(), 0.0) / double(l.size());
  }
  load[stage_of.front()] += stages[stage_of.front()].embedding;
  load[stage_of.back()] += stages[stage_of.back()].head;
  std::uint32_t placed = 0;
  for (std::size_t k = 0; k < positions; ++k) {
    if (carries(k)) continue;
    ++count[stage_of[k]];  // a position without the embedding or head needs a layer
    load[stage_of[k]] += per_layer[stage_of[k]];
    ++placed;
  }
  if (placed > layers) {
    throw std::invalid_argument("pipeline position " + std::to_string(layers + 1) +
                                " would hold no layer");
  }
  std::vector<bool> used(stages.size(), false);
  for (const std::uint32_t d : stage_of) used[d] = true;
  for (; placed < layers; ++placed) {
    std::size_t best = stages.size();
    for (std::size_t d = 0; d < stages.size(); ++d) {
      if (!used[d]) continue;
      if (best == stages.size() || load[d] + per_layer[d] < load[best] + per_layer[best]) best = d;
    }
    ++count[best];
    load[best] += per_layer[best];
  }
  // Share each stage's layers over its positions.
  std::vector<std::uint32_t> counts(positions, 0);
  for (std::size_t d = 0; d < stages.size(); ++d) {
    std::vector<std::size_t> mine;  // the order the spare layers go in
    for (const bool carrying : {false, true}) {
      for (std::size_t k = 0; k < positions; ++k) {
        if (stage_of[k] == d && carries(k) == carrying) mine.push_back(k);
      }
    }
    if (mine.empty()) continue;
    const std::size_t plain = static_cast<std::size_t>(
        std::count_if(mine.begin(), mine.end(), [&](std::size_t k) { return !carries(k); }));
    if (plain > 1)
      std::rotate(mine.begin(), mine.begin() + 1,
                  mine.begin() + static_cast<std::ptrdiff_t>(plain));
    for (std::size_t i = 0; i < mine.size(); ++i) {
      counts[mine[i]] = count[d] / static_cast<std::uint32_t>(mine.size()) +
                        (i < count[d] % mine.size() ? 1u : 0u);
    }
  }
  return explicit_split(counts);
}

}  // namespace

std::vector<LayerRange> even_split(std::uint32_t layers, std::uint32_t positions) {
  if (positions == 0) throw std::invalid_argument("no pipeline position to split over");
  if (layers % positions == 0) {
    if (layers == 0 && positions > 2) {
      throw std::invalid_argument("pipeline position 1 would hold no layer");
    }
    return explicit_split(std::vector<std::uint32_t>(positions, layers / positions));
  }
  // layers + 2 units (the embedding and the head one each) as even as possible, the earlier
  // positions taking the spare ones.
  const std::uint32_t units = layers + 2;
  std::vector<std::uint32_t> counts(positions, units / positions);
  for (std::uint32_t k = 0; k < units % positions; ++k) ++counts[k];
  return ranges_from_units(counts);
}

std::vector<LayerRange> explicit_split(std::span<const std::uint32_t> counts) {
  std::vector<LayerRange> out(counts.size());
  std::uint32_t layer = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    out[k] = {
        .first = layer, .count = counts[k], .embedding = k == 0, .head = k + 1 == counts.size()};
    layer += counts[k];
  }
  return out;
}

std::vector<LayerRange> balanced_split(std::span<const UnitSeconds> stages,
                                       std::span<const std::uint32_t> stage_of) {
  check_stages(stages, stage_of);
  const std::size_t units = stages.front().layers.size() + 2;
  if (units < stage_of.size()) {
    throw std::invalid_argument("pipeline position " + std::to_string(units) +
                                " would hold no layer");
  }
  std::vector<std::uint32_t> held(stages.size(), 0);
  bool several = false;
  for (const std::uint32_t d : stage_of) several = several || ++held[d] > 1;
  std::vector<LayerRange> split =
      several ? several_positions_each(stages, stage_of) : one_position_each(stages, stage_of);
  // The even split when it is as fast (rounding aside; with several positions a stage, a
  // layer's mean cost can misjudge a MoE model's).
  try {
    std::vector<LayerRange> even = even_split(static_cast<std::uint32_t>(units - 2),
                                              static_cast<std::uint32_t>(stage_of.size()));
    const double mine = slowest_stage(split, stages, stage_of);
    if (slowest_stage(even, stages, stage_of) <= mine + mine * 1e-9) return even;
  } catch (const std::invalid_argument&) {
    // No even split of this shape.
  }
  return split;
}

double slowest_stage(std::span<const LayerRange> split, std::span<const UnitSeconds> stages,
                     std::span<const std::uint32_t> stage_of) {
  check_stages(stages, stage_of);
  if (split.size() != stage_of.size()) {
    throw std::invalid_argument("the split and the positions' stages differ in length");
  }
  std::vector<double> load(stages.size(), 0.0);
  for (std::size_t k = 0; k < split.size(); ++k) {
    const UnitSeconds& stage = stages[stage_of[k]];
    double total =
        (split[k].embedding ? stage.embedding : 0.0) + (split[k].head ? stage.head : 0.0);
    for (std::uint32_t l = split[k].first; l < split[k].first + split[k].count; ++l) {
      total += stage.layers.at(l);
    }
    load[stage_of[k]] += total;
  }
  return *std::max_element(load.begin(), load.end());
}

}  // namespace perflow::model
