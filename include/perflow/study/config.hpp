#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perflow/core/event_graph.hpp"
#include "perflow/model/derive.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/training.hpp"
#include "perflow/model/transformer.hpp"
#include "perflow/parallel/costs.hpp"
#include "perflow/parallel/data_parallel.hpp"
#include "perflow/parallel/fsdp.hpp"
#include "perflow/parallel/iterations.hpp"
#include "perflow/parallel/offload.hpp"
#include "perflow/parallel/pipeline.hpp"
#include "perflow/simulator/metrics.hpp"
#include "perflow/simulator/options.hpp"
#include "perflow/simulator/simulate.hpp"
#include "perflow/study/config_overrides.hpp"

namespace perflow::study {

/// What the config says about one device (pipeline stage d runs on device d).
struct DeviceInfo {
  std::string type;            ///< device type name (or /device's preset), empty if none
  std::string preset;          ///< the device preset it is, empty if none
  double memory_capacity = 0;  ///< bytes (or activation units); 0 when unknown
  double static_memory = 0;    ///< parameters, gradients, optimizer state of its stage
  /// Optimizer state kept in host memory (/costs/offload/optimizer), no longer in
  /// static_memory: the device holds it only around its optimizer step.
  double host_optimizer_state = 0;
};

/// One entry of /parts: a schedule built on one device type, of which `stages` are kept.
/// What one (stage, chunk)'s all-to-all time stands for: its MoE layers' dispatcher's
/// dispatches and combines, or `count` all-to-alls of `bytes` (/costs or derived).
struct ExpertTraffic {
  double bytes = 0;
  std::uint32_t count = 0;
  bool by_dispatcher = false;
};

struct PartSpec {
  std::uint32_t first_stage = 0;
  std::uint32_t last_stage = 0;  ///< inclusive
  std::string schedule;          ///< the pipeline's schedule unless the part names one
};

/// /model and /training: the costs, memory and traffic derived from a transformer.
struct ModelPlan {
  model::Transformer transformer;
  std::string preset;  ///< /model/preset, empty if none
  model::Training training;
  std::string split = "even";  ///< /pipeline/layers: even, balanced, fastest or explicit
  /// Per (stage, chunk), stage-major: what the model derives there.
  std::vector<model::PositionCosts> positions;
  /// Per stage: whether it has a GPU to time the model on (else its durations come from
  /// /costs; its memory and traffic are still derived).
  std::vector<bool> timed;
  /// Per stage: the device's peak dense FLOP/s in the training precision (0: unknown).
  std::vector<double> peak_flops;
  /// Per stage: the GEMM efficiency (gemm_max) its device was priced with.
  std::vector<double> gemm_max;
  /// Per stage: the host's seconds to issue one kernel on its device (0: no GPU).
  std::vector<double> kernel_launch;
};

/// A `perflow simulate` configuration (see docs/config.md).
/// An output a caller renders in memory before writing it (the CLI's --chrome-trace, --trace
/// and timeline texts): counted in the run's up-front memory estimate, named in a refusal.
struct OutputEstimate {
  std::string name;  ///< e.g. "--chrome-trace"
  double bytes_per_task = 0;
};

struct Config {
  std::string file;         ///< where it came from, for messages
  std::string description;  ///< optional free text, used as the timeline title
  parallel::PipelineSpec pipeline;
  parallel::CostTable costs;  ///< per stage and chunk, resolved (always one chunk's)
  /// /costs/per: "chunk" (the config gave one chunk's costs) or "stage" (a whole stage's,
  /// split across its chunks).
  std::string costs_per = "chunk";
  simulator::SimulationOptions simulation;
  std::vector<DeviceInfo> devices;  ///< one per stage
  std::vector<PartSpec> parts;      ///< empty: one graph of the whole pipeline
  /// /parallelism/data_parallel and the gradient and optimizer costs (degree 1: none).
  parallel::DataParallelSpec data_parallel;
  std::uint32_t tensor_parallel = 1;  ///< /parallelism/tensor_parallel (already in the costs)
  /// /parallelism/context_parallel: ranks that split each sample's sequence (1: none); with
  /// /model (the model's Training carries it and /parallelism/cp_comm).
  std::uint32_t context_parallel = 1;
  /// /parallelism/fsdp and fsdp_shard_size (with /model, whose Training carries them).
  model::Fsdp fsdp_mode = model::Fsdp::None;
  std::uint32_t fsdp_shard_size = 0;
  /// With FSDP: each (stage, chunk)'s units and their collectives' times, priced over the
  /// shard group's placed link (`fsdp_link`: "intra_node" or "inter_node").
  parallel::FsdpSpec fsdp;
  std::string fsdp_link = "intra_node";
  /// /parallelism/expert_parallel: the ranks a MoE layer's all-to-all spans (1: none).
  std::uint32_t expert_parallel = 1;
  /// /parallelism/moe_dispatcher: how MoE layers move their tokens (/model's MoE layers).
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
  /// /parallelism/moe_a2a_overlap: Megatron-Core's EP communication overlap, each
  /// steady-state F run with the backward after it as one overlapped pair.
  bool moe_a2a_overlap = false;
  /// Per (stage, chunk), stage-major: what its all-to-all time stands for.
  std::vector<ExpertTraffic> expert_traffic;
  /// /network/gpus_per_node: ranks are placed tensor parallel first, then data parallel,
  /// then pipeline (Megatron-Core's order); a group that spans nodes crosses inter_node.
  std::uint32_t gpus_per_node = 8;
  /// /network/nvlink_domain: GPUs that reach each other over the scale-up link. A group
  /// whose ranks lie in one domain runs over intra_node, else it crosses inter_node. Default:
  /// the GPUs' preset's when their NVLink spans nodes (72 on an NVL72 rack), else
  /// gpus_per_node.
  std::uint32_t nvlink_domain = 8;
  /// The link each all-reduce runs over: "intra_node" or "inter_node" (placed: the group's
  /// ranks in one node or not), or "/network/data_parallel" / "/network/tensor_parallel" (given).
  std::string data_parallel_link = "inter_node";
  /// /parallelism/grad_bucket_size (parameters), when given; else Megatron-Core's default.
  std::optional<double> grad_bucket_size;
  std::string tensor_parallel_link = "intra_node";
  /// /network/collectives: "nccl" (collectives priced as NCCL chooses their algorithm and
  /// protocol; data_parallel.nccl holds the data-parallel group's network) or "ring".
  std::string collectives = "ring";
  /// With "nccl": the network a tensor-parallel group's collectives run over.
  std::optional<parallel::NcclNetwork> tensor_parallel_nccl;
  /// With "nccl": the network an expert-parallel all-to-all runs over. Each network carries
  /// /network/collective_overhead.
  std::optional<parallel::NcclNetwork> expert_parallel_nccl;
  /// With "nccl": the network a context-parallel group's exchanges run over.
  std::optional<parallel::NcclNetwork> context_parallel_nccl;
  /// The link a context-parallel group runs over: "intra_node" or "inter_node" (placed).
  std::string context_parallel_link = "intra_node";
  /// /simulation/lower_communication: transfers become SEND tasks on per-link lanes.
  bool lower_communication = false;
  /// /network/p2p_mode "blocking": transfers occupy both devices' compute lanes.
  bool blocking_p2p = false;
  /// /simulation/iterations and /simulation/optimizer_sync.
  parallel::IterationSpec iterations;
  /// /costs/offload per stage and the host links; `offloads` when any stage offloads.
  parallel::OffloadSpec offload;
  bool offloads = false;
  std::optional<ModelPlan> model;  ///< /model, when given
  /// What `--set` (or a sweep axis) changed: errors at those fields name them.
  std::vector<ConfigOverride> overrides;
  /// Not read from the file: the outputs the caller will render (see OutputEstimate).
  std::vector<OutputEstimate> outputs;
};

/// A device's memory as the config and a simulation see it.
struct DeviceMemory {
  DeviceInfo info;             ///< type, capacity and static memory (defaults if none given)
  double total = 0;            ///< static memory + peak activations
  bool out_of_memory = false;  ///< capacity known and exceeded
  /// Without recomputation and offloading: static memory (optimizer state included) + the
  /// peak activations of the same order.
  double peak_without_saving = 0;
  double total_without_saving = 0;
};
/// `peaks_without_saving`: what peaks_without_saving returned (empty: the devices' peaks).
DeviceMemory device_memory(const Config& config, const simulator::DeviceMetrics& device,
                           std::span<const double> peaks_without_saving = {});

/// Per device, the peak activation memory its compute program, in the order it ran, would
/// reach without recomputation and offloading: each F, B, W and BW changing memory as the
/// costs say without them (F keeping its whole activation until its backward), no R tasks,
/// no copies. Empty when the config recomputes and offloads nothing (the peaks are then the
/// simulated ones).
std::vector<double> peaks_without_saving(const Config& config, const EventGraph& graph,
                                         const Trace& trace);

/// What a step achieves with /model: tokens per second, model FLOP/s per GPU (Megatron-LM's
/// count, model::Transformer::forward_flops_per_sample x 3, recomputation not counted) and
/// MFU against the GPUs' mean dense peak in the training precision (NaN when a stage has no
/// GPU).
struct Throughput {
  double tokens_per_s = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0;
  std::uint64_t gpus = 0;
  double flops_per_token = 0;  ///< model FLOPs of one token's forward and backward
  double peak_tflops = 0;      ///< what MFU divides by (NaN when a stage has no GPU)
};
std::optional<Throughput> throughput(const Config& config, TimeNs makespan);

/// Reads and checks a config file, with `overrides` (`--set`) applied to it first. Throws
/// ConfigError naming the file and JSON pointer (and the override, when it set the field).
Config load_config(const std::filesystem::path& path,
                   std::span<const ConfigOverride> overrides = {});
/// parse_config of a document with `overrides` applied.
Config parse_config(nlohmann::json document, const std::string& file,
                    std::span<const ConfigOverride> overrides);
/// Checks an already parsed document; `file` is used in messages.
Config parse_config(const nlohmann::json& document, const std::string& file);

/// Builds the config's task graph. A schedule's refusal of the sizes becomes a ConfigError
/// at the offending field (e.g. `cfg.json:/pipeline/chunks: ...`), naming the override that
/// set the field, if one did. With /parts, each part's
/// schedule is built with its device type's costs on every stage (the part's own stages
/// keep their resolved costs), filtered to its stages, and the parts are merged. Then data
/// parallelism (all-reduces, optimizer steps) is added, the iterations repeated and, if
/// asked, communication lowered or made blocking. Recomputation (R tasks) is added right
/// after the pipeline, offloading (copies) after data parallelism.
EventGraph build_graph(const Config& config);

/// Simulates the config's graph with its simulation options; an error that comes from the
/// config's numbers as a whole (a step beyond the simulator's range) names the file.
simulator::SimulationResult simulate(const Config& config, const EventGraph& graph);

}  // namespace perflow::study
