#include "perflow/explore/sweep_run.hpp"

#include <algorithm>
#include <cmath>
#include <new>
#include <vector>

#include "perflow/core/error.hpp"
#include "perflow/core/memory_budget.hpp"
#include "perflow/study/config.hpp"

namespace perflow::explore {

void evaluate_config(const study::Config& config, RunOutcome& outcome) {
  const EventGraph graph = study::build_graph(config);
  const simulator::SimulationResult result = study::simulate(config, graph);
  const simulator::Metrics& m = result.metrics;
  outcome.makespan = m.makespan;
  outcome.iteration_time = m.iteration_time;
  outcome.bubble_ratio = m.bubble_ratio;
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    const simulator::DeviceMetrics& dm = m.devices[d];
    const study::DeviceMemory memory = study::device_memory(config, dm);
    outcome.peak_memory = std::max(outcome.peak_memory, dm.peak_memory);
    outcome.peak_total_memory = std::max(outcome.peak_total_memory, memory.total);
    if (!memory.out_of_memory) continue;
    outcome.out_of_memory = true;
    const RunOutcome::Overshoot over{static_cast<std::uint32_t>(d), memory.total,
                                     memory.info.memory_capacity};
    if (!outcome.overshoot ||
        over.needed * outcome.overshoot->capacity > outcome.overshoot->needed * over.capacity) {
      outcome.overshoot = over;
    }
  }
  if (const std::optional<study::Throughput> t = study::throughput(config, m.iteration_time)) {
    if (std::isfinite(t->tokens_per_s)) outcome.tokens_per_s = t->tokens_per_s;
    if (std::isfinite(t->mfu)) outcome.mfu = t->mfu;
  }
}

RunOutcome run_point(const Sweep& sweep, std::uint64_t run) {
  RunOutcome outcome;
  outcome.run = run;
  const std::vector<study::ConfigOverride> overrides = sweep.run_overrides(run);
  const SharedMemoryScope memory;  // released when the run ends
  try {
    const study::Config config = study::parse_config(sweep.base, sweep.base_file, overrides);
    evaluate_config(config, outcome);
  } catch (const ConfigError& e) {
    // An inline base's fields are at /base/... of the sweep file.
    outcome.error =
        sweep.base_pointer.empty() || e.file() != sweep.base_file
            ? std::string(e.what())
            : ConfigError(e.file(), sweep.base_pointer + e.pointer(), e.message()).what();
  } catch (const ResourceError& e) {
    outcome.error = e.what();
    outcome.refused_for_memory = true;
  } catch (const Error& e) {
    outcome.error = e.what();
  } catch (const std::bad_alloc&) {
    outcome.error = kAllocationFailedMessage;
    outcome.refused_for_memory = true;
  }
  return outcome;
}

}  // namespace perflow::explore
