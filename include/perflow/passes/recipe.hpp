#pragma once

#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/data_parallel.hpp"
#include "perflow/parallel/fsdp.hpp"
#include "perflow/parallel/iterations.hpp"
#include "perflow/parallel/offload.hpp"
#include "perflow/parallel/pipeline.hpp"
#include "perflow/simulator/options.hpp"

namespace perflow::passes {

/// The passes that extend a built pipeline graph, one descriptor each, declared in their
/// canonical order (the order a Recipe applies them in). Each is one linear pass that
/// extends the graph (detail::GraphExtension) where the table below says so.

/// DualPipe's overlapped forward-backward pairs run as units (parallel::overlap_pairs). The
/// graph must be build_pipeline_graph(*plan, costs); `plan` must outlive apply().
struct OverlapPairs {
  const parallel::PipelinePlan* plan = nullptr;
  parallel::CostTable costs;
};
/// An A2A task before each F / B / BW with an all-to-all (parallel::add_all_to_all).
struct AllToAll {
  parallel::CostTable costs;
};
/// An R task before each recomputing backward (parallel::add_recompute).
struct Recompute {
  parallel::CostTable costs;
};
/// Gradient all-reduces and the optimizer step (parallel::add_data_parallel).
struct DataParallel {
  parallel::DataParallelSpec spec;
};
/// FSDP's parameter gathers and gradient reduce-scatters (parallel::add_fsdp).
struct Fsdp {
  parallel::FsdpSpec spec;
};
/// Activation and optimizer-state copies to and from the host (parallel::add_offload).
struct Offload {
  parallel::OffloadSpec spec;
};
/// Several training iterations in a row (parallel::repeat_iterations); copies the step.
struct Iterations {
  parallel::IterationSpec spec;
};
/// Transfers as SEND tasks on link lanes (simulator::lower_communication).
struct LowerCommunication {
  simulator::SimulationOptions options;
};
/// Transfers as blocking SEND / RECV on the compute lanes
/// (simulator::lower_blocking_transfers); rebuilds the graph.
struct BlockingTransfers {
  simulator::SimulationOptions options;
};

using Pass = std::variant<OverlapPairs, AllToAll, Recompute, DataParallel, Fsdp, Offload,
                          Iterations, LowerCommunication, BlockingTransfers>;

/// The pass's name in errors and docs: "overlap-pairs", "all-to-all", "recompute",
/// "data-parallel", "fsdp", "offload", "iterations", "lower-communication",
/// "blocking-transfers".
std::string_view pass_name(const Pass& pass);

/// The passes a run asks for, at most one of each, in the canonical order:
///   overlap-pairs       rewrites the plan's compute tasks; needs the plan's programs as built
///   all-to-all          before each F / B not in a pair (pairs hide theirs)
///   recompute           R before each backward, taking over its dependences (an A2A's too)
///   data-parallel       all-reduces after each chunk's last gradient (an R's backward too),
///                       the optimizer step last
///   fsdp                gathers before each F / backward (an R's too), reduce-scatters
///                       after each gradient task; the optimizer step waits for them
///   offload             activations around their F and consumer (R first), optimizer state
///                       around the step
///   iterations          copies the whole step; needs no transfer lanes yet
///   lower-communication every dependence between devices, those of the passes above too
///   blocking-transfers  the same, blocking; not with lower-communication
/// A pass out of this order, twice, or both lowerings: ScheduleError naming them.
class Recipe {
 public:
  Recipe() = default;
  /// Throws ScheduleError as then() does.
  explicit Recipe(std::vector<Pass> passes);

  /// Appends `pass`; throws ScheduleError if it may not follow the passes already there.
  Recipe& then(Pass pass);

  [[nodiscard]] std::span<const Pass> passes() const { return passes_; }
  [[nodiscard]] bool empty() const { return passes_.empty(); }

 private:
  std::vector<Pass> passes_;
};

/// `graph` with the recipe's passes applied, in order, each extending the previous result
/// (no copy of it is kept). The passes' errors (ScheduleError) pass through.
EventGraph apply(EventGraph graph, const Recipe& recipe);

}  // namespace perflow::passes
