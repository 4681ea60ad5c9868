#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perflow/study/config_overrides.hpp"

#include "perflow/explore/sweep_run.hpp"
#include "perflow/explore/sweep_runner.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::explore {

/// One GPU type of the cluster: its /device_types entry and how many there are.
struct GpuType {
  std::string name;
  nlohmann::json entry;  ///< the device type (preset, memory, ...) without `count`
  std::uint32_t count = 0;
  double capacity = 0;  ///< bytes of memory a plan may use on it (the cap applied)
};

/// The values a search tries (docs/search-and-sweeps.md "Search"); defaults are filled by
/// parse_search.
struct SearchSpace {
  std::vector<std::string> schedules;
  std::vector<std::uint32_t> pipeline;         ///< pipeline depths (stages)
  std::vector<std::uint32_t> tensor_parallel;  ///< tensor-parallel degrees
  std::vector<std::uint32_t> micro_batch_size;
  std::vector<std::uint32_t> chunks;  ///< for schedules whose chunk count is free
  std::vector<std::string> recompute;
  /// Shares of microbatches whose activations go to host memory (/costs/offload/ratio);
  /// empty: no axis, every plan offloads as the base says.
  std::vector<double> offload;
  std::vector<std::string> layers;  ///< "even", "balanced", "fastest" (mixed clusters)
  /// Expert-parallel degrees (/parallelism/expert_parallel), each dividing the plan's data
  /// parallelism; default: 1, and for a MoE model every power of two dividing its experts.
  std::vector<std::uint32_t> expert_parallel;
  /// Context-parallel degrees (/parallelism/context_parallel), each splitting the sequence
  /// into 2 x cp chunks; default 1.
  std::vector<std::uint32_t> context_parallel;
  /// Training precisions (/training/precision), each on GPUs that have it; default: the
  /// base's (bf16 unless it says).
  std::vector<std::string> precision;
  /// FSDP modes (/parallelism/fsdp), "hsdp" once per shard size of fsdp_shard_size; a mode
  /// the plan's data x context ranks cannot shard over is pruned. Default: none.
  std::vector<std::string> fsdp;
  std::vector<std::uint32_t> fsdp_shard_size;
};

/// A search file: a base config shared by every plan, a cluster, a space and constraints.
struct Search {
  std::string file;     ///< for messages
  nlohmann::json base;  ///< model, training (with global_batch_size), network, simulation...
  std::vector<GpuType> gpus;
  std::uint32_t devices_per_node = 8;
  SearchSpace space;
  bool use_all_gpus = true;  ///< else at most the cluster
  std::uint32_t top = 10;
  std::uint32_t global_batch_size = 0;
  /// The model has MoE layers: plans with tensor parallelism run sequence parallelism, as
  /// Megatron-Core's MoE layers need.
  bool moe = false;
  std::uint32_t sequence = 0;  ///< the model's, which context parallelism must split
};

/// Reads and checks a search document; `gpu_order` lists /cluster/gpus' keys as written
/// (JSON objects forget it). Throws ConfigError naming the file and JSON pointer.
Search parse_search(const nlohmann::json& document, const std::vector<std::string>& gpu_order,
                    const std::string& file);
/// `base_overrides` (`--set POINTER=VALUE`) set fields of the base config (/base POINTER
/// of the search file) before it is read; errors at their fields name them.
Search load_search(const std::filesystem::path& path,
                   std::span<const study::ConfigOverride> base_overrides = {});

/// One candidate plan: what it chose and the complete config `perflow simulate` runs.
struct Plan {
  std::string schedule;
  std::uint32_t pipeline = 1;
  std::uint32_t tensor_parallel = 1;
  std::uint32_t data_parallel = 1;
  std::uint32_t micro_batch_size = 1;
  std::uint32_t microbatches = 1;
  std::uint32_t chunks = 1;
  std::string recompute;
  double offload = 0;  ///< its /costs/offload/ratio
  std::uint32_t expert_parallel = 1;
  std::uint32_t context_parallel = 1;
  std::string precision;              ///< /training/precision
  std::string fsdp = "none";          ///< /parallelism/fsdp
  std::uint32_t fsdp_shard_size = 0;  ///< with "hsdp", /parallelism/fsdp_shard_size
  std::string layers;                 ///< the layer split
  std::string placement;  ///< e.g. "H100 x4, A100 x4" (stages per GPU type, first stage first)
  /// The same as indices into Search::gpus and stage counts, first stage first.
  std::vector<std::pair<std::size_t, std::uint32_t>> stage_shares;
  /// The complete config. run_search fills it only in the plans it returns (a search may
  /// weigh millions of plans; each config is a few kilobytes).
  nlohmann::json config;
};

/// A simulated plan.
struct PlanResult {
  Plan plan;
  RunOutcome outcome;
  [[nodiscard]] bool fits() const { return outcome.error.empty() && !outcome.out_of_memory; }
};

/// How the search went.
struct SearchCounts {
  std::uint64_t considered = 0;
  std::uint64_t pruned_divisibility = 0;  ///< by divisibility and schedule constraints
  std::uint64_t pruned_memory = 0;        ///< a lower bound of the peak exceeds the memory
  std::uint64_t simulated = 0;
  std::uint64_t invalid = 0;  ///< simulated plans a schedule or the simulator refused
  std::uint64_t fit = 0;      ///< simulated without error and within memory
};

/// The plan that came closest to fitting when none fits: the smallest ratio of needed memory
/// to capacity on its fullest device, among the plans pruned by memory (a lower bound) and
/// the simulated plans out of memory (the simulated peak); ties keep the enumeration order.
struct NearestMiss {
  Plan plan;
  RunOutcome::Overshoot overshoot;
  bool lower_bound = false;  ///< needed is the pruning bound, not a simulated peak
};

struct SearchResult {
  SearchCounts counts;
  std::optional<NearestMiss> nearest_miss;  ///< only when no plan fits
  std::vector<PlanResult> best;             ///< the `top` fitting plans by step time
  std::vector<PlanResult> pareto;           ///< step time vs peak total memory, fastest first
  std::vector<PlanResult> simulated;        ///< every simulated plan, in enumeration order
};

struct SearchOptions {
  unsigned jobs = 0;               ///< threads (0: every core)
  bool prune_divisibility = true;  ///< off: plans that fail the checks are simulated too
  bool prune_memory = true;        ///< off: every plan is simulated (brute force)
  bool keep_simulated = false;     ///< fill SearchResult::simulated
  /// Called on the calling thread as plans are weighed (done of total), for a progress line.
  std::function<void(const SweepProgress&)> progress;
};

/// Every candidate plan of the search, in a fixed order; those failing divisibility or
/// schedule constraints are counted in `counts` and left out unless
/// `keep_invalid`. `schedules` holds the schedules the space names: each one's chunk rule
/// gives the chunk counts tried (its fixed count, else space.chunks) and its check prunes
/// the sizes it refuses. run_search enumerates with the built-in schedules (it simulates
/// through study, which plans with them). Throws ResourceError, naming the search file, when
/// the plans would need more memory than this process may take (see memory_budget.hpp).
std::vector<Plan> enumerate_plans(
    const Search& search, SearchCounts& counts, bool keep_invalid = false,
    const parallel::ScheduleRegistry& schedules = parallel::builtin_schedules());

/// A lower bound of the plan's peak memory exceeds a GPU's capacity: static memory of a
/// stage plus one microbatch's activation of its largest chunk (with recomputation, what F keeps
/// plus what R rebuilds). Never true for a plan that
/// fits. Throws ConfigError if the config is invalid.
bool cannot_fit(const study::Config& config);

/// The device whose lower bound (as cannot_fit) exceeds its capacity by the largest ratio,
/// or nothing when every device's bound fits.
std::optional<RunOutcome::Overshoot> memory_shortfall(const study::Config& config);

/// Enumerates, prunes, simulates the survivors in parallel and ranks them.
SearchResult run_search(const Search& search, const SearchOptions& options = {});

}  // namespace perflow::explore
