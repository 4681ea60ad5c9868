// Sweeps: configurations per second, the figure every what-if study multiplies. Issue 15's
// yardstick is a 10k-config sweep of p=8, m=32 ZBV-sized runs (1,536 tasks each) on two
// cores: 20k configs/s or more (a process per config costs ~5 ms).
#include <benchmark/benchmark.h>

#include <string>

#include "perflow/explore/sweep.hpp"
#include "perflow/explore/sweep_runner.hpp"
#include "perflow/explore/sweep_table.hpp"

namespace {

// 100 x 100 forward and backward costs over ZBV, 8 stages, 32 microbatches.
perflow::explore::Sweep zbv_sweep() {
  const nlohmann::json document = nlohmann::json::parse(R"({
    "base": {"pipeline": {"schedule": "zbv", "stages": 8, "microbatches": 32, "chunks": 2},
             "costs": {"forward": 1000, "backward": 1000, "weight": 1000}},
    "axes": {"/costs/forward": {"from": 1000, "to": 1099, "step": 1},
             "/costs/backward": {"from": 1000, "to": 1099, "step": 1}}
  })");
  return perflow::explore::parse_sweep(document, {"/costs/forward", "/costs/backward"},
                                       "bench.json", ".");
}

// The whole sweep on `jobs` threads, rows formatted as the CSV writer does.
void BM_SweepZbv10k(benchmark::State& state) {
  const perflow::explore::Sweep sweep = zbv_sweep();
  const auto jobs = static_cast<unsigned>(state.range(0));
  std::size_t bytes = 0;
  for (auto _ : state) {
    perflow::explore::run_sweep(
        sweep, 0, sweep.run_count(), jobs, [&](const perflow::explore::RunOutcome& outcome) {
          bytes += perflow::explore::table_row(sweep, outcome, perflow::explore::TableFormat::Csv)
                       .size();
        });
  }
  benchmark::DoNotOptimize(bytes);
  state.counters["configs/s"] = benchmark::Counter(
      static_cast<double>(sweep.run_count()) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SweepZbv10k)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
