#include "perflow/explore/sweep_runner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace perflow::explore {
namespace {

// Every run frees what it allocated; glibc then gives the top of the heap back to the
// kernel and the next run faults it in again (brk, TLB shootdowns: half the time of small
// runs). Keeping up to 256 MiB mapped lets runs reuse the memory of the ones before.
void keep_freed_memory() {
#ifdef __GLIBC__
  static const bool once = [] {
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
    return true;
  }();
  (void)once;
#endif
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Outcomes of runs [emitted, emitted + window) wait here until every earlier run is done,
// so workers run at most `window` runs ahead of the writer and memory stays bounded.
class ReorderWindow {
 public:
  ReorderWindow(std::uint64_t first, std::size_t window)
      : slots_(window), next_emit_(first), next_run_(first) {}

  // The next run to start, once it fits in the window; nullopt when there is none left.
  std::optional<std::uint64_t> take(std::uint64_t last) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return stopped_ || next_run_ < next_emit_ + slots_.size(); });
    if (stopped_ || next_run_ >= last) return std::nullopt;
    return next_run_++;
  }

  void put(RunOutcome outcome) {
    {
      const std::lock_guard lock(mutex_);
      slots_[outcome.run % slots_.size()] = std::move(outcome);
    }
    ready_.notify_one();
  }

  // Every outcome that is next in order; waits for at least one.
  std::vector<RunOutcome> drain() {
    std::vector<RunOutcome> batch;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stopped_ || slot(next_emit_).has_value(); });
      while (slot(next_emit_).has_value()) {
        batch.push_back(std::move(*slot(next_emit_)));
        slot(next_emit_).reset();
        ++next_emit_;
      }
    }
    room_.notify_all();
    return batch;
  }

  void stop() {
    {
      const std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    room_.notify_all();
    ready_.notify_all();
  }

 private:
  std::optional<RunOutcome>& slot(std::uint64_t run) { return slots_[run % slots_.size()]; }

  std::mutex mutex_;
  std::condition_variable room_;
  std::condition_variable ready_;
  std::vector<std::optional<RunOutcome>> slots_;
  std::uint64_t next_emit_;
  std::uint64_t next_run_;
  bool stopped_ = false;
};

// Runs take turns here: any number at once (shared), or one alone (exclusive), which waits
// for those running to finish and holds new ones back until it is done.
class RunGate {
 public:
  void enter_shared() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !exclusive_ && exclusive_waiting_ == 0; });
    ++running_;
  }
  void leave_shared() {
    {
      const std::lock_guard lock(mutex_);
      --running_;
    }
    changed_.notify_all();
  }
  void enter_exclusive() {
    std::unique_lock lock(mutex_);
    ++exclusive_waiting_;
    changed_.wait(lock, [&] { return !exclusive_ && running_ == 0; });
    --exclusive_waiting_;
    exclusive_ = true;
  }
  void leave_exclusive() {
    {
      const std::lock_guard lock(mutex_);
      exclusive_ = false;
    }
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  unsigned running_ = 0;
  unsigned exclusive_waiting_ = 0;
  bool exclusive_ = false;
};

// Gives what the runs before freed back to the system, so a run retried alone sees the
// memory the process would have running it alone.
void release_freed_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace

void run_sweep(const Sweep& sweep, std::uint64_t first, std::uint64_t last, unsigned jobs,
               const std::function<void(const RunOutcome&)>& emit,
               const std::function<void(const SweepProgress&)>& progress) {
  run_in_order(
      first, last, jobs, [&](std::uint64_t run) { return run_point(sweep, run); }, emit, progress);
}

void run_in_order(std::uint64_t first, std::uint64_t last, unsigned jobs,
                  const std::function<RunOutcome(std::uint64_t)>& evaluate,
                  const std::function<void(const RunOutcome&)>& emit,
                  const std::function<void(const SweepProgress&)>& progress) {
  const auto run_one = [&](std::uint64_t run) {
    RunOutcome outcome = evaluate(run);
    outcome.run = run;
    return outcome;
  };
  keep_freed_memory();
  const Clock::time_point start = Clock::now();
  const std::uint64_t total = last > first ? last - first : 0;
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<std::uint64_t>(jobs, std::max<std::uint64_t>(total, 1)));
  if (jobs == 1) {  // no threads: the simplest path, and the reference the others equal
    for (std::uint64_t run = first; run < last; ++run) {
      emit(run_one(run));
      if (progress) progress({run - first + 1, total, seconds_since(start)});
    }
    return;
  }

  ReorderWindow window(first, std::size_t{256} * jobs);
  // A run refused for memory while others ran beside it may fit alone: it is run again
  // once they are done, with none beside it, as --jobs 1 would run it. So a refusal that
  // came from the other runs is never an outcome, and the outcomes do not depend on `jobs`.
  RunGate gate;
  const auto run_gated = [&](std::uint64_t run) {
    gate.enter_shared();
    std::optional<RunOutcome> outcome;
    try {
      outcome = run_one(run);
    } catch (...) {
      gate.leave_shared();
      throw;
    }
    gate.leave_shared();
    if (!outcome->refused_for_memory) return std::move(*outcome);
    gate.enter_exclusive();
    try {
      release_freed_memory();
      outcome = run_one(run);
    } catch (...) {
      gate.leave_exclusive();
      throw;
    }
    gate.leave_exclusive();
    return std::move(*outcome);
  };
  std::mutex failure_mutex;
  std::exception_ptr failure;
  std::vector<std::jthread> workers;
  workers.reserve(jobs);
  for (unsigned j = 0; j < jobs; ++j) {
    workers.emplace_back([&] {
      try {
        while (const std::optional<std::uint64_t> run = window.take(last)) {
          window.put(run_gated(*run));
        }
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        window.stop();
      }
    });
  }
  std::uint64_t done = 0;
  try {
    while (done < total) {
      const std::vector<RunOutcome> batch = window.drain();
      {
        const std::lock_guard lock(failure_mutex);
        if (failure) break;
      }
      for (const RunOutcome& outcome : batch) emit(outcome);
      done += batch.size();
      if (progress && !batch.empty()) progress({done, total, seconds_since(start)});
    }
  } catch (...) {
    window.stop();
    workers.clear();  // joins
    throw;
  }
  window.stop();
  workers.clear();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace perflow::explore
