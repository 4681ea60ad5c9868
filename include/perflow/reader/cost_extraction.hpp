#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "perflow/core/time.hpp"
#include "perflow/reader/attribution.hpp"
#include "perflow/reader/kernel_trace.hpp"
#include "perflow/reader/markers.hpp"

namespace perflow::reader {

struct ExtractionOptions {
  /// --rank-stage R=S: rank R ran pipeline stage S. When given, every profile's rank must be
  /// listed.
  std::map<std::int64_t, std::uint32_t> rank_stage;
};

/// One measured F / B / W / full backward: the marked ranges of one task and the GPU work
/// they own. When the marker names the microbatch, the ranges of one (iteration, stage,
/// chunk, kind, microbatch, part) are one task (e.g. the sequence splits of a ZB node);
/// otherwise each range is a task, numbered in start order.
struct MeasuredTask {
  std::uint32_t profile = 0;  ///< index into the profiles given
  std::uint32_t stage = 0;    ///< pipeline stage = device
  std::uint32_t chunk = 0;
  MarkerKind kind = MarkerKind::Forward;
  std::uint32_t microbatch = 0;
  std::string part;             ///< MarkerMatch::part
  std::int64_t iteration = -1;  ///< N of the enclosing ProfilerStep#N; -1: none
  bool warmup = false;          ///< in the first iteration, which is not used for costs
  std::uint32_t ranges = 0;     ///< marked ranges merged into it
  std::size_t ops = 0;          ///< compute ops it owns
  TimeNs busy = 0;              ///< union of its compute ops' intervals
  TimeNs first_start = 0;       ///< its first compute op's start (trace clock)
  TimeNs last_end = 0;          ///< its last compute op's end
  /// Net device memory allocated (allocations minus frees, bytes) by the profile's memory
  /// events while its ranges were open (host time); 0 without memory events.
  std::int64_t allocated = 0;

  /// GPU time inside its span when none of its compute ops ran: the gaps between its
  /// kernels (launch overhead, host-bound work between launches).
  [[nodiscard]] TimeNs gaps() const { return last_end - first_start - busy; }
};

/// The costs of one (stage, chunk): per kind, the median over its steady-state tasks of
/// their busy time (summed over parts when the marker names parts).
struct StageCost {
  std::uint32_t stage = 0;
  std::uint32_t chunk = 0;
  std::array<std::optional<TimeNs>, kMarkerKindCount> cost;  ///< by MarkerKind
  std::array<std::size_t, kMarkerKindCount> samples{};       ///< tasks behind each median
  /// Activation memory of one F: the lower median of its steady F tasks' net allocations
  /// (summed over parts), when the profiles have memory events; never negative.
  std::optional<std::int64_t> activation;

  [[nodiscard]] std::optional<TimeNs> of(MarkerKind kind) const {
    return cost[static_cast<std::size_t>(kind)];
  }
};

/// One communication kernel (by function name, e.g. ncclKernel_AllReduce_RING_LL_Sum_float).
struct CommunicationCost {
  std::string name;
  GpuOpKind kind = GpuOpKind::Collective;
  std::uint32_t ranks = 0;  ///< profiles in which it ran
  std::size_t count = 0;    ///< calls per rank (the largest count when ranks differ)
  std::int64_t bytes = -1;  ///< median bytes per call where known; -1: unknown
  /// Median duration. NCCL kernels also wait for the slowest peer, so across several ranks
  /// the i-th calls are matched and the minimum taken before the median ("matched"), or,
  /// when the ranks ran different numbers of calls, the minimum of the ranks' medians.
  TimeNs median = 0;
  std::string method;  ///< "one rank", "min over ranks per call", "min of rank medians"
};

/// What one profile gave.
struct ProfileSummary {
  std::string path;
  std::string format;
  std::int64_t rank = -1;  ///< from the profile, or its position when the profile has none
  bool rank_from_position = false;
  std::uint32_t stage = 0;  ///< the pipeline stage its tasks were put on (the first if several)
  std::vector<std::uint32_t> marker_stages;  ///< distinct stage ids its markers named
  AttributionMethod method = AttributionMethod::Launch;
  std::size_t ops = 0;
  std::size_t communication_ops = 0;
  std::size_t ranges = 0;
  std::array<std::size_t, kMarkerKindCount> matched{};  ///< marked ranges per kind
  std::size_t empty_ranges = 0;                         ///< marked ranges that own no compute op
  std::size_t ops_without_launch = 0;                   ///< ops with no launch to attribute them by
  std::size_t compute_ops_outside = 0;                  ///< compute ops in no marked range
  std::vector<std::int64_t> iterations;                 ///< ProfilerStep numbers, in time order
  bool warmup_dropped = false;          ///< the first of >= 3 iterations was not used
  std::size_t tasks_outside_steps = 0;  ///< tasks in no ProfilerStep (there are steps)
  std::size_t memory_events = 0;        ///< device memory events (profile_memory=True)
};

/// A closed-open interval [start, end) of trace time.
struct TimeInterval {
  TimeNs start = 0;
  TimeNs end = 0;
  friend bool operator==(const TimeInterval&, const TimeInterval&) = default;
};

/// What one profile's GPU did, as disjoint intervals in time order (each list is the union
/// of its ops' intervals over every device and stream of the profile).
struct ProfileActivity {
  std::vector<TimeInterval> task_compute;   ///< compute ops some measured task owns
  std::vector<TimeInterval> other_compute;  ///< compute ops no measured task owns
  std::vector<TimeInterval> communication;  ///< collective and point-to-point kernels
};

/// One communication kernel call, for turning calls into the config's links and bytes.
struct CommunicationCall {
  std::uint32_t profile = 0;
  GpuOpKind kind = GpuOpKind::Collective;
  TimeNs duration = 0;
  std::int64_t bytes = -1;          ///< -1: the profile does not say
  std::uint32_t group_size = 0;     ///< 0: the profile does not say
  std::int64_t iteration = -1;      ///< the ProfilerStep it was launched in; -1: none
  bool warmup = false;              ///< launched in the warm-up iteration
  bool outside_steps = false;       ///< launched in no ProfilerStep (the profile has some)
  bool all_reduce = false;          ///< an all-reduce kernel (by its name)
  bool in_forward = false;          ///< launched inside a forward (F) task's range
  std::uint32_t forward_tasks = 0;  ///< F tasks of its (profile, iteration), for per-F counts
  /// A compute op of its profile ran while it did (for a positive time).
  bool overlaps_compute = false;
};

/// A link fitted to communication calls: duration = steps x latency + bytes / bandwidth.
struct FittedLink {
  TimeNs latency = 0;
  std::int64_t bandwidth = 0;  ///< bytes per second; 0: latency only
  std::size_t samples = 0;
  std::string method;  ///< how it was fitted, for notes
};

/// The communication of the measured run, in the config's terms.
struct MeasuredCommunication {
  /// Data-parallel gradient all-reduce: collectives launched outside F tasks, whose bytes
  /// the profile gives. gradient_bytes is their sum per iteration (lower median over steady
  /// iterations and profiles); data_parallel is their group size.
  std::optional<std::int64_t> gradient_bytes;
  std::uint32_t data_parallel = 0;
  std::optional<FittedLink> data_parallel_link;
  /// Tensor-parallel all-reduces: collectives launched inside F tasks.
  std::optional<std::int64_t> tp_allreduce_bytes;  ///< lower median bytes per call
  std::uint32_t tp_allreduces = 0;                 ///< calls per F task (lower median)
  std::uint32_t tensor_parallel = 0;               ///< their group size
  std::optional<FittedLink> tensor_parallel_link;
  /// Point-to-point transfers (pipeline sends and receives) whose bytes the profile gives.
  std::optional<std::int64_t> boundary_bytes;  ///< lower median bytes per call
  /// Fitted to the calls with bytes; with one message size (which cannot separate latency
  /// from bandwidth) the bandwidth is the lowest whole bytes/s whose simulated transfer,
  /// ceil(bytes / bandwidth), is at most the calls' mean time, and the latency is the rest,
  /// so the simulator reproduces that time exactly.
  std::optional<FittedLink> p2p_link;
  /// Whether the steady point-to-point kernels (with bytes or not) block compute: true when
  /// no compute op of their profile ran while any of them did (a runtime that waits on its
  /// sends and receives, `network.p2p_mode: "blocking"`), false when some overlapped;
  /// nullopt without point-to-point kernels.
  std::optional<bool> p2p_blocking;
};

struct ExtractedCosts {
  std::string marker;  ///< the classifier's name
  std::vector<ProfileSummary> profiles;
  std::vector<MeasuredTask> tasks;  ///< by (profile, first_start, stage, chunk, kind, mb)
  std::vector<StageCost> stages;    ///< (stage, chunk) measured, in order
  std::vector<CommunicationCost> communication;  ///< by name
  std::uint32_t stage_count = 0;                 ///< highest stage seen + 1
  std::uint32_t chunk_count = 0;                 ///< highest chunk seen + 1
  std::uint32_t microbatches = 0;  ///< most F tasks (distinct microbatches) in one iteration
  bool split_backward = false;     ///< separate B or W tasks were measured
  /// Per compute task, the lower median over steady tasks of gaps() (GPU idle between a
  /// task's kernels); nullopt when no task has two ops.
  std::optional<TimeNs> launch_overhead;
  std::vector<ProfileActivity> activity;  ///< per profile
  std::vector<CommunicationCall> calls;   ///< every communication kernel
  MeasuredCommunication network;          ///< links and bytes from `calls`
  std::vector<std::string> notes;         ///< what could not be measured and what was assumed
};

/// From profiles (one per rank) to per-stage F / B / W costs and communication costs.
///
/// - Ranges are classified once per distinct name; GPU ops are attributed to the marked
///   ranges by attribute_ops (launch time, any thread).
/// - A task's cost is the union of the intervals of its compute ops: kernels, memcpys and
///   memsets that are not collectives or point-to-point (those are communication).
/// - Stage: --rank-stage when given; else the marker's stage when every profile's markers
///   name exactly one stage; else the profile's rank (or its position in `traces` when the
///   profile has no rank). Chunk: the marker's chunk; else, when a profile's markers name
///   several stages (interleaved, V), the rank of the stage among them (its lowest is chunk
///   0); else 0. Profiles of one stage (data-parallel replicas) are pooled.
/// - Iterations: ProfilerStep#N ranges; with three or more in a profile, the first is
///   warm-up (allocator, cuDNN autotuning) and its tasks are left out of the costs.
/// - Costs: per (stage, chunk, kind), the lower median of the steady-state tasks (a measured
///   value, so integer costs survive exactly); with parts, the sum of the parts' medians.
/// - Where a stage has only full-backward ranges, its B and W cannot be told apart: the
///   full backward is reported as such (MarkerKind::FullBackward) and a note says so.
///
/// Throws Error naming the files when no range matches the marker.
ExtractedCosts extract_costs(std::span<const KernelTrace> traces,
                             const MarkerClassifier& classifier,
                             const ExtractionOptions& options = {});

/// The `count` most frequent range names over the traces, as `'name' (n), ...` (ties in name
/// order), or "the profiles have no ranges at all": what an error shows when no marker
/// matched, so the user can write a --pattern.
std::string most_frequent_range_names(std::span<const KernelTrace> traces, std::size_t count = 5);

}  // namespace perflow::reader
