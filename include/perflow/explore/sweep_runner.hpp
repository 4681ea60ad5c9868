#pragma once

#include <cstdint>
#include <functional>

#include "perflow/explore/sweep.hpp"
#include "perflow/explore/sweep_run.hpp"

namespace perflow::explore {

/// How far a sweep has got, for a progress line.
struct SweepProgress {
  std::uint64_t done = 0;   ///< runs finished (in this invocation)
  std::uint64_t total = 0;  ///< runs this invocation does
  double seconds = 0;       ///< since it started
};

/// Evaluates items [first, last) with `evaluate` on `jobs` threads (0: all cores) and hands
/// each outcome (its `run` set to the item) to `emit` on the calling thread in item order, as
/// soon as it and every item before it are done: the output is the same whatever `jobs` is.
/// `evaluate` is called concurrently and must not throw for a bad item (an outcome with its
/// error instead); an exception from it or from `emit` stops the workers and is rethrown.
/// An outcome `refused_for_memory` while other items were evaluated beside it is not
/// emitted: the item is evaluated again alone, once the others are done (no new one starts
/// meanwhile), and that outcome is emitted, as with one thread.
void run_in_order(std::uint64_t first, std::uint64_t last, unsigned jobs,
                  const std::function<RunOutcome(std::uint64_t)>& evaluate,
                  const std::function<void(const RunOutcome&)>& emit,
                  const std::function<void(const SweepProgress&)>& progress = {});

/// Runs runs [first, last) of `sweep` on `jobs` threads (0: all cores) and hands each
/// outcome to `emit` on the calling thread in run order, as soon as it and every run
/// before it are done: the output is the same whatever `jobs` is. `progress` (optional)
/// is called on the calling thread after outcomes are emitted. An exception from `emit`
/// stops the workers and is rethrown.
void run_sweep(const Sweep& sweep, std::uint64_t first, std::uint64_t last, unsigned jobs,
               const std::function<void(const RunOutcome&)>& emit,
               const std::function<void(const SweepProgress&)>& progress = {});

}  // namespace perflow::explore
