// The config format, one entry per key (docs/config.md says the same in prose).
#include "detail/config_fields.hpp"

#include <stdexcept>
#include <string>

#include "perflow/model/device_spec.hpp"
#include "perflow/model/quantisation.hpp"
#include "perflow/model/training.hpp"

namespace perflow::study::detail {
namespace {

using K = FieldKind;

constexpr std::string_view kShapes[] = {"linear", "interleaved", "v", "dualpipe"};
constexpr std::string_view kModes[] = {"ordered", "greedy"};
constexpr std::string_view kP2pModes[] = {"async", "blocking"};
constexpr std::string_view kCollectivePricings[] = {"nccl", "ring"};
constexpr std::string_view kPer[] = {kCostsPerChunk, kCostsPerStage};
constexpr std::string_view kMlps[] = {"gelu", "swiglu"};
constexpr std::string_view kAttentions[] = {"mha", "gqa", "mla"};
constexpr std::string_view kRecomputes[] = {"none", "selective", "full"};
constexpr std::string_view kReduceDtypes[] = {"fp32", "bf16", "fp16"};
constexpr std::string_view kMoeDispatchers[] = {"alltoall", "deepep"};

constexpr double kMaxSize = 1 << 24;
constexpr double kMaxDegree = 1 << 20;

constexpr Field kPipelineFields[] = {
    {.name = "schedule",
     .kind = K::Schedule,
     .description = "a name from `perflow schedules`",
     .required = true},
    {.name = "stages",
     .kind = K::Integer,
     .description = "pipeline devices (p)",
     .min = 1,
     .max = 1 << 16,
     .required = true},
    {.name = "microbatches",
     .kind = K::Integer,
     .description = "microbatches per step (m); with /training/global_batch_size, derived",
     .default_value = "derived from /training/global_batch_size, else required",
     .min = 1,
     .max = kMaxSize},
    {.name = "chunks",
     .kind = K::Integer,
     .description = "model chunks per device (v), default 1",
     .default_value = "1",
     .min = 1,
     .max = 256},
    {.name = "split_backward",
     .kind = K::Boolean,
     .description = "run the backward as separate B and W tasks where the schedule fuses them",
     .default_value = "false"},
    {.name = "microbatch_group_size",
     .kind = K::Integer,
     .description = "interleaved-1f1b: microbatches per group (default: stages)",
     .default_value = "stages",
     .min = 1,
     .max = kMaxSize},
    {.name = "memory_limit",
     .kind = K::Number,
     .description = "automatic schedulers: peak activation memory per device, in F activations",
     .default_value = "the schedule's (`perflow schedules`)",
     .min = 0,
     .max = 1e9,
     .exclusive_min = true},
    {.name = "order",
     .kind = K::Order,
     .description = "custom only: one program per device, task labels such as F0.0 B0.0 W0.0"},
    {.name = "shape",
     .kind = K::Choice,
     .description = "custom only: where the order's chunks run",
     .default_value = "linear for 1 chunk, else interleaved",
     .choices = kShapes},
    {.name = "layers",
     .kind = K::LayerSplit,
     .description = "with /model: the layers of each pipeline position: \"even\" (default, "
                    "Megatron-LM's), \"balanced\" (the slowest stage as fast as it can be), "
                    "\"fastest\" (the same with each stage on its own GPU), or a count per "
                    "position",
     .default_value = "even"},
};

// The cost fields /costs, a device type and an override share.
constexpr Field kCostFields[] = {
    {.name = "forward",
     .kind = K::Duration,
     .description = "one forward (F) of one chunk of a stage, per microbatch",
     .default_value = "with /model: derived"},
    {.name = "backward",
     .kind = K::Duration,
     .description = "one input-gradient backward (B) of one chunk, per microbatch",
     .default_value = "with /model: derived"},
    {.name = "weight",
     .kind = K::Duration,
     .description = "one weight-gradient backward (W) of one chunk, per microbatch",
     .default_value = "with /model: derived"},
    {.name = "activation",
     .kind = K::Size,
     .description = "activation memory one F allocates (bytes, or 1 for one activation)",
     .default_value = "0; with /model: derived"},
    {.name = "backward_frees",
     .kind = K::Number,
     .description = "fraction of an F's activation that B frees; W frees the rest",
     .default_value = "0; with /model: derived",
     .min = 0,
     .max = 1},
    {.name = "static_memory",
     .kind = K::Size,
     .description = "memory a stage holds throughout (parameters, gradients, optimizer state)",
     .default_value = "0; with /model: derived"},
    {.name = "boundary_bytes",
     .kind = K::Size,
     .description = "bytes one microbatch's activation sends to the next stage",
     .default_value = "0; with /model: derived"},
    {.name = "optimizer",
     .kind = K::Duration,
     .description = "the optimizer step of one chunk of a stage",
     .default_value = "0; with /model: derived"},
    {.name = "launch_overhead",
     .kind = K::Duration,
     .description = "added to every F, B, W and BW task (kernel launches, host work between "
                    "a task's kernels); folded into the task's box",
     .default_value = "0"},
    {.name = "step_overhead",
     .kind = K::Duration,
     .description = "per iteration and device: host work around the optimizer step; folded "
                    "into the device's OPT box",
     .default_value = "0"},
    {.name = "gradient_bytes",
     .kind = K::Size,
     .description = "gradient bytes one chunk all-reduces across data-parallel replicas",
     .default_value = "0; with /model: derived"},
    {.name = "tp_allreduce_bytes",
     .kind = K::Size,
     .description = "bytes of one tensor-parallel all-reduce",
     .default_value = "0; with /model: derived"},
    {.name = "tp_allreduces",
     .kind = K::Integer,
     .description = "tensor-parallel all-reduces in each F and in each B of one chunk",
     .default_value = "0; with /model: derived",
     .min = 0,
     .max = kMaxDegree},
    {.name = "recompute",
     .kind = K::Choice,
     .description = "activation recomputation: \"none\" (default), \"selective\" (the "
                    "attention core) or \"full\" (the whole forward), an R task before each "
                    "backward",
     .default_value = "none; with /model: /training/recompute",
     .choices = kRecomputes},
    {.name = "recompute_forward",
     .kind = K::Duration,
     .description = "with recompute: one R task (default: the forward for full; with /model, "
                    "derived)",
     .default_value = "full: the forward; with /model: derived"},
    {.name = "recompute_activation",
     .kind = K::Size,
     .description = "with recompute: what one F keeps until its backward (with /model, "
                    "derived)",
     .default_value = "with /model: derived"},
    {.name = "offload",
     .kind = K::Object,
     .description = "activations (and optimizer state) kept in host memory, copied over the "
                    "host link",
     .section = &kOffloadSection},
    {.name = "a2a_bytes",
     .kind = K::Size,
     .description = "bytes one rank sends in one expert-parallel all-to-all (a dispatch or a "
                    "combine) of one microbatch (with /model, derived)",
     .default_value = "0; with /model: derived"},
    {.name = "a2a_per_pass",
     .kind = K::Integer,
     .description = "expert-parallel all-to-alls in each F and in each backward of one chunk "
                    "(2 per MoE layer: dispatch and combine; with /model, derived)",
     .default_value = "0; with /model: derived",
     .min = 0,
     .max = kMaxDegree},
    {.name = "forward_backward",
     .kind = K::Duration,
     .description = "an overlapped forward-backward pair (DualPipe's F&B): one F and another "
                    "microbatch's backward of this stage run together; default: derived from "
                    "their compute and all-to-alls",
     .default_value = "derived from the pair's tasks"},
};

constexpr Field kOffloadFields[] = {
    {.name = "ratio",
     .kind = K::Number,
     .description = "the share of microbatches whose activation goes to the host",
     .default_value = "0",
     .min = 0,
     .max = 1},
    {.name = "budget",
     .kind = K::Size,
     .description = "instead of a ratio: the device's activation memory to stay under, "
                    "offloading as few as that takes (a stage's: not per chunk)"},
    {.name = "optimizer",
     .kind = K::Boolean,
     .description = "keep the optimizer state in host memory: copied in before the optimizer "
                    "step and back after it (a stage's: not per chunk)",
     .default_value = "false"},
    {.name = "optimizer_state",
     .kind = K::Size,
     .description = "with optimizer: its bytes (with /model, derived)",
     .default_value = "with /model: derived"},
};

constexpr Field kOverrideFields[] = {
    {.name = "stages",
     .kind = K::StageRange,
     .description = "the stages it covers",
     .required = true},
    {.name = "chunk",
     .kind = K::Integer,
     .description = "only this chunk of those stages (per-chunk fields only)",
     .min = 0,
     .max = 255},
};

}  // namespace

constinit const Section kOffloadSection{
    "offload", "what goes to host memory", {kOffloadFields, {}}};
constinit const Section kOverrideSection{
    "override", "costs for a stage or a range of stages", {kCostFields, kOverrideFields}};

namespace {

constexpr Field kCostsOwnFields[] = {
    {.name = "per",
     .kind = K::Choice,
     .description = "\"chunk\" (default): durations, activation, optimizer and gradient bytes "
                    "are one chunk's; \"stage\": they are a whole stage's, split across its "
                    "chunks",
     .default_value = "chunk",
     .choices = kPer},
    {.name = "overrides",
     .kind = K::ObjectArray,
     .description = "costs for a stage or a range of stages, optionally one chunk; applied "
                    "in order",
     .section = &kOverrideSection},
};

constexpr Field kDeviceTypeFields[] = {
    {.name = "memory",
     .kind = K::Size,
     .description = "the device's memory capacity",
     .default_value = "the preset's, else unlimited"},
    {.name = "host_link",
     .kind = K::Object,
     .description = "its link to host memory (PCIe, NVLink-C2C) for offloading (default: "
                    "/network/host_link, else its preset's)",
     .default_value = "/network/host_link, else the preset's",
     .section = &kLinkSection},
    {.name = "preset",
     .kind = K::DevicePreset,
     .description = "a GPU from `perflow devices`: its specs, each overridable here"},
    {.name = "peak_flops",
     .kind = K::Number,
     .description = "dense FLOP/s in the training precision",
     .default_value = "the preset's",
     .min = 0,
     .max = 1e21,
     .exclusive_min = true},
    {.name = "memory_bandwidth",
     .kind = K::Rate,
     .description = "HBM bandwidth",
     .default_value = "the preset's",
     .min = 1,
     .max = kMaxBytes},
    {.name = "link_bandwidth",
     .kind = K::Rate,
     .description = "scale-up link (NVLink, Infinity Fabric) per direction",
     .default_value = "the preset's",
     .min = 1,
     .max = kMaxBytes},
    {.name = "network_bandwidth",
     .kind = K::Rate,
     .description = "scale-out network (NIC) per GPU",
     .default_value = "the preset's",
     .min = 1,
     .max = kMaxBytes},
    {.name = "sms",
     .kind = K::Integer,
     .description = "streaming multiprocessors (AMD: compute units): a GEMM's tiles run in "
                    "waves of this many",
     .default_value = "the preset's, else 132",
     .min = 1,
     .max = 1 << 16},
    {.name = "gemm_efficiency",
     .kind = K::Number,
     .description = "the fraction of peak the largest GEMM tile reaches (gemm_max)",
     .default_value = "the built-in calibration",
     .min = 0,
     .max = 1,
     .exclusive_min = true},
    {.name = "attention_efficiency",
     .kind = K::Number,
     .description = "the fraction of peak the fused attention forward reaches",
     .default_value = "the built-in calibration",
     .min = 0,
     .max = 1,
     .exclusive_min = true},
    {.name = "memory_efficiency",
     .kind = K::Number,
     .description = "the fraction of memory bandwidth element-wise kernels reach",
     .default_value = "the built-in calibration",
     .min = 0,
     .max = 1,
     .exclusive_min = true},
    {.name = "kernel_launch",
     .kind = K::Duration,
     .description = "with /model: the host's time to issue one kernel or NCCL call (eager "
                    "PyTorch); a task takes at least its kernels' worth",
     .default_value = "24us (measured on Kineto traces; docs/model.md)"},
};

}  // namespace

constinit const Section kCostsSection{
    "costs", "the cost of each piece of work", {kCostFields, kCostsOwnFields}};
constinit const Section kDeviceTypeSection{
    "device type", "a GPU type: any cost field plus its memory", {kCostFields, kDeviceTypeFields}};

namespace {

constexpr Field kPlacementFields[] = {
    {.name = "stages",
     .kind = K::StageRange,
     .description = "the stages this type runs",
     .required = true},
    {.name = "device_type",
     .kind = K::String,
     .description = "a name defined in /device_types",
     .required = true},
};

constexpr Field kPartFields[] = {
    {.name = "stages",
     .kind = K::StageRange,
     .description = "the stages this part keeps",
     .required = true},
    {.name = "device_type",
     .kind = K::String,
     .description = "a name defined in /device_types (default: the uniform costs)",
     .default_value = "the uniform costs"},
    {.name = "schedule",
     .kind = K::Schedule,
     .description = "the schedule this part builds (default: the pipeline's)",
     .default_value = "/pipeline/schedule"},
};

constexpr Field kLinkFields[] = {
    {.name = "latency", .kind = K::Duration, .description = "per transfer", .default_value = "0"},
    {.name = "bandwidth",
     .kind = K::Rate,
     .description = "bytes per second; unset: latency only",
     .default_value = "unset: latency only",
     .min = 1,
     .max = kMaxBytes},
};

}  // namespace

constinit const Section kPlacementSection{
    "placement", "which device type runs which stages", {kPlacementFields, {}}};
constinit const Section kPartSection{
    "part", "a schedule built on one device type, of which stages are kept", {kPartFields, {}}};
constinit const Section kLinkSection{"link", "a link: latency and bandwidth", {kLinkFields, {}}};

namespace {

constexpr Field kNetworkFields[] = {
    {.name = "p2p_latency",
     .kind = K::Duration,
     .description = "added to every dependence that crosses devices",
     .default_value = "0"},
    {.name = "devices_per_node",
     .kind = K::Integer,
     .description = "devices d and e share a node when d / n == e / n; default: one node",
     .default_value = "one node",
     .min = 1,
     .max = kMaxSize},
    {.name = "p2p_mode",
     .kind = K::Choice,
     .description = "\"async\" (default): transfers overlap compute; \"blocking\": a transfer's "
                    "send and receive occupy both devices' compute lanes for its time",
     .default_value = "async",
     .choices = kP2pModes},
    {.name = "intra_node",
     .kind = K::Object,
     .description = "the link between devices of one node",
     .section = &kLinkSection},
    {.name = "inter_node",
     .kind = K::Object,
     .description = "the link between devices of two nodes",
     .section = &kLinkSection},
    {.name = "data_parallel",
     .kind = K::Object,
     .description = "the per-rank link of a data-parallel all-reduce ring (default: intra_node "
                    "when every data-parallel group lies in one node, else inter_node; a field "
                    "left out is that link's)",
     .default_value = "/network/intra_node or /network/inter_node",
     .section = &kLinkSection},
    {.name = "tensor_parallel",
     .kind = K::Object,
     .description = "the per-rank link of a tensor-parallel all-reduce ring (default: "
                    "intra_node when every tensor-parallel group lies in one node, else "
                    "inter_node; a field left out is that link's)",
     .default_value = "/network/intra_node or /network/inter_node",
     .section = &kLinkSection},
    {.name = "host_link",
     .kind = K::Object,
     .description = "every device's link to host memory for offloading, unless its device "
                    "type gives one (default: the GPU preset's, PCIe or NVLink-C2C)",
     .section = &kLinkSection},
    {.name = "collectives",
     .kind = K::Choice,
     .description = "how a tensor- or data-parallel collective is priced: \"nccl\" as NCCL's "
                    "tuner chooses its algorithm (ring, tree, NVLS) and protocol (LL, LL128, "
                    "Simple) over the links its group spans; \"ring\" one ring of latency per "
                    "step plus bytes over the placed link's bandwidth. Default: nccl with "
                    "/model, else ring",
     .default_value = "nccl with /model, else ring",
     .choices = kCollectivePricings},
    {.name = "collective_overhead",
     .kind = K::Duration,
     .description = "with collectives \"nccl\": each call's fixed time (kernel launch and "
                    "the ranks' synchronization) beyond NCCL's latencies",
     .default_value = "20us"},
    {.name = "gpus_per_node",
     .kind = K::Integer,
     .description = "GPUs per node (default 8), ranks placed tensor parallel first, then "
                    "data parallel, then pipeline (Megatron-Core's order): a tensor-parallel, "
                    "data-parallel or all-to-all group that spans nodes crosses inter_node "
                    "(unless nvlink_domain joins the nodes)",
     .default_value = "8",
     .min = 1,
     .max = kMaxSize},
    {.name = "nvlink_domain",
     .kind = K::Integer,
     .description = "GPUs that reach each other over the scale-up link (NVLink, Infinity "
                    "Fabric): a group whose ranks lie in one domain stays on intra_node. "
                    "Default: the GPU preset's when its NVLink spans nodes (72 on GB200 and "
                    "GB300 NVL72 racks), else gpus_per_node",
     .default_value = "the preset's NVL72 rack, else gpus_per_node",
     .min = 1,
     .max = kMaxSize},
};

constexpr Field kParallelismFields[] = {
    {.name = "data_parallel",
     .kind = K::Integer,
     .description = "data-parallel replicas of the pipeline",
     .default_value = "1",
     .min = 1,
     .max = kMaxDegree},
    {.name = "tensor_parallel",
     .kind = K::Integer,
     .description = "tensor-parallel ranks per pipeline device",
     .default_value = "1",
     .min = 1,
     .max = kMaxDegree},
    {.name = "expert_parallel",
     .kind = K::Integer,
     .description = "expert-parallel ranks: the GPUs a MoE layer's all-to-all spans "
                    "(default 1)",
     .default_value = "1",
     .min = 1,
     .max = kMaxDegree},
    {.name = "context_parallel",
     .kind = K::Integer,
     .description = "context-parallel ranks: each sample's sequence split over them (with "
                    "/model; default 1); gradients reduce over data x context parallelism",
     .default_value = "1",
     .min = 1,
     .max = kMaxDegree},
    {.name = "cp_comm",
     .kind = K::Choice,
     .description = "how context-parallel attention reaches the other ranks' keys and values "
                    "(Megatron-Core's --cp-comm-type): p2p (default; K and V blocks passed "
                    "around the ring under the attention), all_gather, or a2a (Ulysses' "
                    "all-to-alls of Q, K, V and the output)",
     .default_value = "p2p",
     .choices = model::kCpCommNames},
    {.name = "fsdp",
     .kind = K::Choice,
     .description = "fully sharded data parallelism (with /model): none (default), zero3 "
                    "(parameters, gradients and optimizer state sharded over the data x "
                    "context ranks; each layer gathered before its F and its backward, its "
                    "gradients reduce-scattered after, as PyTorch FSDP2 and Megatron-FSDP run "
                    "it; with pipeline stages, gathered once a step), or hsdp (sharded within "
                    "fsdp_shard_size ranks, replicated across)",
     .default_value = "none",
     .choices = model::kFsdpNames},
    {.name = "fsdp_shard_size",
     .kind = K::Integer,
     .description = "with fsdp \"hsdp\": the ranks each shard group spans (a divisor of the "
                    "data x context ranks, holding whole context-parallel groups)",
     .min = 2,
     .max = kMaxDegree},
    {.name = "overlap_grad_reduce",
     .kind = K::Boolean,
     .description = "gradients are reduced bucket by bucket as the backward produces them, "
                    "under the rest of the backward (default true); false: after the "
                    "device's last compute task",
     .default_value = "true"},
    {.name = "grad_bucket_size",
     .kind = K::Integer,
     .description = "parameters per gradient bucket on stage 0's first chunk (Megatron-LM "
                    "buckets only there; elsewhere one bucket a chunk); default Megatron-Core's "
                    "max(40M, 1M x data_parallel)",
     .min = 1,
     .max = 1e15},
    {.name = "overlap_param_gather",
     .kind = K::Boolean,
     .description = "with /training/distributed_optimizer: the updated parameters are "
                    "all-gathered under the next forward instead of right after the "
                    "optimizer step (default false, as Megatron-LM)",
     .default_value = "false"},
    {.name = "moe_dispatcher",
     .kind = K::Choice,
     .description = "how MoE layers move tokens to their experts (Megatron-Core's token "
                    "dispatcher): alltoall (NCCL all-to-alls of a row per token and expert) or "
                    "deepep (DeepEP's kernels: a token once per rank over NVLink and once per "
                    "node over RDMA)",
     .default_value = "alltoall",
     .choices = kMoeDispatchers},
    {.name = "moe_a2a_overlap",
     .kind = K::Boolean,
     .description = "Megatron-Core's --overlap-moe-expert-parallel-comm: after one more warm-up "
                    "forward, each steady-state forward runs with the backward after it, one's "
                    "all-to-alls under the other's compute (one stage or interleaved-1f1b)",
     .default_value = "false"},
};

constexpr Field kSimulationFields[] = {
    {.name = "mode",
     .kind = K::Choice,
     .description = "ordered (each device runs its program in order) or greedy",
     .default_value = "ordered",
     .choices = kModes},
    {.name = "lower_communication",
     .kind = K::Boolean,
     .description = "transfers become SEND tasks on per-link lanes",
     .default_value = "false"},
    {.name = "iterations",
     .kind = K::Integer,
     .description = "training iterations simulated one after the other (default 1); the "
                    "report's iteration_time_ns is their steady-state period",
     .default_value = "1",
     .min = 1,
     .max = 1 << 16},
    {.name = "optimizer_sync",
     .kind = K::Boolean,
     .description = "true (default): iteration k+1 starts after every device's step of "
                    "iteration k (a global barrier); false: each device goes on after its own",
     .default_value = "true"},
};

}  // namespace

namespace {

constexpr Field kMlaFields[] = {
    {.name = "q_lora_rank",
     .kind = K::Integer,
     .description = "Q's latent rank (DeepSeek-V3: 1536); 0: Q projected straight from h",
     .default_value = "an MLA preset's, else 0",
     .min = 0,
     .max = 1 << 20},
    {.name = "kv_lora_rank",
     .kind = K::Integer,
     .description = "the keys' and values' latent rank (DeepSeek-V3: 512)",
     .default_value = "an MLA preset's; required without one",
     .min = 1,
     .max = 1 << 20},
    {.name = "qk_nope_head_dim",
     .kind = K::Integer,
     .description = "a head's query/key width without position encoding (DeepSeek-V3: 128)",
     .default_value = "an MLA preset's; required without one",
     .min = 1,
     .max = 1 << 16},
    {.name = "qk_rope_head_dim",
     .kind = K::Integer,
     .description = "a head's query/key width with rotary encoding; the key's is shared by the "
                    "heads (DeepSeek-V3: 64)",
     .default_value = "an MLA preset's; required without one",
     .min = 0,
     .max = 1 << 16},
    {.name = "v_head_dim",
     .kind = K::Integer,
     .description = "a head's value width (DeepSeek-V3: 128)",
     .default_value = "an MLA preset's; required without one",
     .min = 1,
     .max = 1 << 16},
};

constexpr Field kMambaFields[] = {
    {.name = "state_dim",
     .kind = K::Integer,
     .description = "N, the state per head and channel (Megatron-Core's --mamba-state-dim)",
     .default_value = "a hybrid preset's, else 128",
     .min = 1,
     .max = 1 << 16},
    {.name = "head_dim",
     .kind = K::Integer,
     .description = "P, a Mamba head's width (--mamba-head-dim)",
     .default_value = "a hybrid preset's, else 64",
     .min = 1,
     .max = 1 << 16},
    {.name = "heads",
     .kind = K::Integer,
     .description = "H, so the inner width is heads x head_dim (--mamba-num-heads)",
     .default_value = "a hybrid preset's, else 2 hidden / head_dim (expand 2)",
     .min = 1,
     .max = 1 << 20},
    {.name = "groups",
     .kind = K::Integer,
     .description = "G, groups of heads sharing B and C (--mamba-num-groups)",
     .default_value = "a hybrid preset's, else 8",
     .min = 1,
     .max = 1 << 16},
    {.name = "conv_kernel",
     .kind = K::Integer,
     .description = "the causal depthwise convolution's width",
     .default_value = "4",
     .min = 1,
     .max = 1 << 10},
    {.name = "chunk_size",
     .kind = K::Integer,
     .description = "Q, the tokens of a chunk of the chunked scan (SSD)",
     .default_value = "128",
     .min = 1,
     .max = 1 << 16},
};

constexpr Field kModelFields[] = {
    {.name = "preset",
     .kind = K::ModelPreset,
     .description = "a model from `perflow models`; the fields below override it"},
    {.name = "layers",
     .kind = K::Integer,
     .description = "transformer layers",
     .default_value = "the preset's; required without one",
     .min = 1,
     .max = 1 << 16},
    {.name = "hidden",
     .kind = K::Integer,
     .description = "hidden size h",
     .default_value = "the preset's; required without one",
     .min = 1,
     .max = 1 << 24},
    {.name = "ffn_hidden",
     .kind = K::Integer,
     .description = "MLP inner size f",
     .default_value = "the preset's; required without one",
     .min = 1,
     .max = 1 << 26},
    {.name = "heads",
     .kind = K::Integer,
     .description = "attention heads",
     .default_value = "the preset's; required without one",
     .min = 1,
     .max = 1 << 16},
    {.name = "kv_heads",
     .kind = K::Integer,
     .description = "key/value heads (grouped-query attention), default heads",
     .default_value = "heads",
     .min = 1,
     .max = 1 << 16},
    {.name = "attention",
     .kind = K::Choice,
     .description = "\"mha\" or \"gqa\" (multi-head or grouped-query attention, as kv_heads "
                    "says) or \"mla\" (multi-head latent attention, shaped by /model/mla)",
     .default_value = "mla with /model/mla or an MLA preset, else gqa or mha",
     .choices = kAttentions},
    {.name = "mla",
     .kind = K::Object,
     .description = "multi-head latent attention's ranks and head widths (DeepSeek-V3, Kimi "
                    "K2), as Megatron-Core's MLASelfAttention builds it",
     .section = &kMlaSection},
    {.name = "head_dim",
     .kind = K::Integer,
     .description = "a head's width d where it is not hidden / heads (Qwen3: 128; Megatron-LM's "
                    "--kv-channels): Q, K, V and the projection are heads x d, kv_heads x d wide",
     .default_value = "hidden / heads",
     .min = 1,
     .max = 1 << 16},
    {.name = "sliding_window",
     .kind = K::Integer,
     .description = "sliding-window attention (Mistral, gpt-oss): a windowed layer's query "
                    "attends to this many tokens up to and including its own (0: all)",
     .default_value = "the preset's, else 0",
     .min = 0,
     .max = 1 << 24},
    {.name = "window_pattern",
     .kind = K::String,
     .description = "which attention layers are windowed, 'W' or 'F' (full) per layer, "
                    "repeated over the layers (gpt-oss: \"WF\", Megatron-LM's "
                    "--window-attn-skip-freq 2 is \"WF\" too)",
     .default_value = "every attention layer windowed"},
    {.name = "attention_sinks",
     .kind = K::Boolean,
     .description = "learned sink logits, one per head, in each attention's softmax (gpt-oss)",
     .default_value = "the preset's, else false"},
    {.name = "layer_pattern",
     .kind = K::String,
     .description = "a hybrid model's layers, one character each (Megatron-Core's "
                    "--hybrid-layer-pattern): M a Mamba-2 mixer, * attention, - an MLP, E a "
                    "MoE layer; layers is its length. Megatron-Core's unified form with "
                    "multi-token prediction is read too: \"M-M*-/*E/*E\" is the layers "
                    "\"M-M*-\", mtp_pattern \"*E\" and mtp_layers 2",
     .default_value = "the preset's; empty: attention and an MLP (or MoE) in every layer"},
    {.name = "mamba",
     .kind = K::Object,
     .description = "the M layers' Mamba-2 mixer, as Megatron-Core's MambaMixer builds it",
     .default_value = "the preset's, else Megatron-Core's defaults",
     .section = &kMambaSection},
    {.name = "vocab",
     .kind = K::Integer,
     .description = "vocabulary size",
     .default_value = "the preset's; required without one",
     .min = 1,
     .max = 1 << 26},
    {.name = "sequence",
     .kind = K::Integer,
     .description = "tokens per sample",
     .default_value = "the preset's; required without one",
     .min = 1,
     .max = 1 << 24},
    {.name = "mlp",
     .kind = K::Choice,
     .description = "gelu (two matrices, default) or swiglu (three)",
     .default_value = "gelu",
     .choices = kMlps},
    {.name = "tied_embeddings",
     .kind = K::Boolean,
     .description = "the LM head shares the embedding matrix (default false)",
     .default_value = "false"},
    {.name = "hidden_dropout",
     .kind = K::Number,
     .description = "dropout rate after the embedding, the attention and the MLP "
                    "(Megatron-LM's --hidden-dropout); above 0 each keeps a 1-byte mask per "
                    "element for its backward",
     .default_value = "the preset's (0.1 for GPT, 0 for Llama and DeepSeek-V3); 0.1 without one",
     .min = 0,
     .max = 1},
    {.name = "experts",
     .kind = K::Integer,
     .description = "routed experts per MoE layer (default 0: a dense model)",
     .default_value = "0",
     .min = 0,
     .max = 1 << 20},
    {.name = "top_k",
     .kind = K::Integer,
     .description = "routed experts per token (with experts)",
     .min = 1,
     .max = 1 << 10},
    {.name = "expert_ffn_hidden",
     .kind = K::Integer,
     .description = "an expert's MLP inner size (default ffn_hidden)",
     .default_value = "ffn_hidden",
     .min = 1,
     .max = 1 << 26},
    {.name = "shared_experts",
     .kind = K::Integer,
     .description = "experts every token goes through, per MoE layer (default 0)",
     .default_value = "0",
     .min = 0,
     .max = 1 << 10},
    {.name = "first_dense_layers",
     .kind = K::Integer,
     .description = "leading layers with a dense MLP instead of experts (default 0)",
     .default_value = "0",
     .min = 0,
     .max = 1 << 16},
    {.name = "moe_layers",
     .kind = K::Integer,
     .description = "instead of first_dense_layers: the MoE layers, the last ones",
     .min = 0,
     .max = 1 << 16},
    {.name = "expert_groups",
     .kind = K::Integer,
     .description = "group-limited routing (DeepSeek-V3's n_group, Megatron-Core's "
                    "moe_router_num_groups): the routed experts in this many groups, of "
                    "which a token picks group_top_k (default 0: no groups)",
     .default_value = "0",
     .min = 0,
     .max = 1 << 20},
    {.name = "group_top_k",
     .kind = K::Integer,
     .description = "groups a token's experts come from, with expert_groups (DeepSeek-V3: 4 "
                    "of 8, at most 4 nodes a token)",
     .min = 1,
     .max = 1 << 20},
    {.name = "capacity_factor",
     .kind = K::Number,
     .description = "tokens an expert takes, relative to a balanced share (default: no "
                    "capacity, balanced routing)",
     .default_value = "none: balanced routing",
     .min = 1,
     .max = 1e3},
    {.name = "expert_imbalance",
     .kind = K::Number,
     .description = "the busiest expert's tokens over the mean (default 1: balanced); the "
                    "slowest expert sets the layer's time",
     .default_value = "1",
     .min = 1,
     .max = 1e3},
    {.name = "mtp_layers",
     .kind = K::Integer,
     .description = "multi-token prediction modules after the last layer, on the last pipeline "
                    "position (DeepSeek-V3: 1; Megatron-LM's --mtp-num-layers): each a layer of "
                    "the last layer's kind (mtp_pattern's layers in a hybrid model), eh_proj "
                    "and another pass of the LM head",
     .default_value = "the preset's, else 0",
     .min = 0,
     .max = 64},
    {.name = "mtp_pattern",
     .kind = K::String,
     .description = "a hybrid model's multi-token prediction module: its layers, one character "
                    "each as in layer_pattern (Megatron-Core's pattern after each '/'); needs "
                    "layer_pattern and mtp_layers",
     .default_value = "the preset's; required for mtp_layers with a layer_pattern"},
};

constexpr Field kTrainingFields[] = {
    {.name = "micro_batch_size",
     .kind = K::Integer,
     .description = "samples per microbatch (default 1)",
     .default_value = "1",
     .min = 1,
     .max = 1 << 20},
    {.name = "global_batch_size",
     .kind = K::Integer,
     .description = "samples per step: microbatches = global / (micro x data_parallel)",
     .min = 1,
     .max = 1 << 30},
    {.name = "precision",
     .kind = K::Choice,
     .description = "the GEMMs' tensor-core arithmetic (default bf16): fp8, mxfp8 (32-element "
                    "blocks) and nvfp4 (16-element blocks) as Transformer Engine runs them, "
                    "with their casts; attention, router, norms and LM head stay in bf16",
     .default_value = "bf16",
     .choices = model::kPrecisionNames},
    {.name = "fp8_recipe",
     .kind = K::Choice,
     .description = "with precision fp8, its scaling (Megatron-LM's --fp8-recipe): delayed "
                    "(default; the amax history's), current (each tensor's own amax, read "
                    "first; Megatron's tensorwise) or blockwise (a scale per 128 elements, "
                    "Hopper or newer)",
     .default_value = "delayed",
     .choices = model::kFp8RecipeNames},
    {.name = "bf16_layers_at_start",
     .kind = K::Integer,
     .description = "with a quantised precision, the model's first layers that run in bf16 "
                    "(Megatron-LM's --first-last-layers-bf16 with --num-layers-at-start-in-bf16, "
                    "its default 1); not with fp8's delayed recipe, as Megatron-LM refuses it",
     .default_value = "0",
     .min = 0,
     .max = 1 << 20},
    {.name = "bf16_layers_at_end",
     .kind = K::Integer,
     .description = "with a quantised precision, the model's last layers that run in bf16 "
                    "(--num-layers-at-end-in-bf16); the MTP modules stay quantised",
     .default_value = "0",
     .min = 0,
     .max = 1 << 20},
    {.name = "recompute",
     .kind = K::Choice,
     .description = "activation recomputation (default none); its time is part of B",
     .default_value = "none",
     .choices = kRecomputes},
    {.name = "distributed_optimizer",
     .kind = K::Boolean,
     .description = "optimizer state sharded over data parallelism (default false): "
                    "gradients are reduce-scattered and the parameters all-gathered",
     .default_value = "false"},
    {.name = "grad_reduce_dtype",
     .kind = K::Choice,
     .description = "the gradients' type in the data-parallel reduction (and their buffer); "
                    "default as Megatron-LM: fp32 for bf16 and fp8 training, fp16 for fp16",
     .choices = kReduceDtypes},
    {.name = "sequence_parallel",
     .kind = K::Boolean,
     .description = "Megatron sequence parallelism with tensor parallelism (default false)",
     .default_value = "false"},
    {.name = "flash_attention",
     .kind = K::Boolean,
     .description = "fused attention: no s x s scores kept (default true)",
     .default_value = "true"},
    {.name = "recompute_mla_up_proj",
     .kind = K::Boolean,
     .description = "with MLA: its up projections rerun in the backward instead of Q, K and V "
                    "kept (Megatron-Core's --recompute-modules mla_up_proj, as DeepSeek-V3 "
                    "trains; default false)",
     .default_value = "false"},
    {.name = "cuda_graphs",
     .kind = K::Boolean,
     .description = "each layer's passes captured as CUDA graphs (Megatron-Core's "
                    "--enable-cuda-graph): the host launches a graph per layer instead of "
                    "each kernel (default false)",
     .default_value = "false"},
};

}  // namespace

constinit const Section kModelSection{"model", "a decoder-only transformer", {kModelFields, {}}};
constinit const Section kMlaSection{"mla", "multi-head latent attention", {kMlaFields, {}}};
constinit const Section kMambaSection{"mamba", "a Mamba-2 mixer", {kMambaFields, {}}};
constinit const Section kTrainingSection{
    "training", "how the model is trained", {kTrainingFields, {}}};

constinit const Section kPipelineSection{
    "pipeline", "the schedule and its sizes", {kPipelineFields, {}}};
constinit const Section kNetworkSection{
    "network", "latencies, links and nodes", {kNetworkFields, {}}};
constinit const Section kParallelismSection{
    "parallelism", "degrees beyond the pipeline", {kParallelismFields, {}}};
constinit const Section kSimulationSection{
    "simulation", "how the graph is simulated", {kSimulationFields, {}}};

namespace {

constexpr Field kConfigFields[] = {
    {.name = "$schema",
     .kind = K::String,
     .description = "the schema an editor validates this file against (ignored)"},
    {.name = "description", .kind = K::String, .description = "free text; the timeline's title"},
    {.name = "pipeline",
     .kind = K::Object,
     .description = "the schedule and its sizes",
     .required = true,
     .section = &kPipelineSection},
    {.name = "model",
     .kind = K::Object,
     .description = "the transformer: costs, memory and traffic are derived from it",
     .section = &kModelSection},
    {.name = "training",
     .kind = K::Object,
     .description = "with /model: batch sizes, precision, recomputation, optimizer",
     .section = &kTrainingSection},
    {.name = "device",
     .kind = K::DevicePreset,
     .description = "a GPU from `perflow devices` on every stage"},
    {.name = "parallelism",
     .kind = K::Object,
     .description = "data, tensor and expert parallelism",
     .section = &kParallelismSection},
    {.name = "costs",
     .kind = K::Object,
     .description = "the cost of each piece of work",
     .section = &kCostsSection},
    {.name = "device_types",
     .kind = K::ObjectMap,
     .description = "named GPU types: cost fields plus memory capacity",
     .section = &kDeviceTypeSection},
    {.name = "placement",
     .kind = K::ObjectArray,
     .description = "which device type runs which stages",
     .section = &kPlacementSection},
    {.name = "parts",
     .kind = K::ObjectArray,
     .description = "instead of placement: per part, a schedule built on its device type",
     .section = &kPartSection},
    {.name = "network",
     .kind = K::Object,
     .description = "latencies, links and nodes",
     .section = &kNetworkSection},
    {.name = "simulation",
     .kind = K::Object,
     .description = "how the graph is simulated",
     .section = &kSimulationSection},
};

}  // namespace

constinit const Section kConfigSection{
    "config", "a perflow simulate configuration", {kConfigFields, {}}};

std::vector<std::string_view> Section::keys() const {
  std::vector<std::string_view> out;
  for (const auto& part : parts) {
    for (const Field& field : part) out.push_back(field.name);
  }
  return out;
}

const Field& Section::field(std::string_view field_name) const {
  for (const auto& part : parts) {
    for (const Field& f : part) {
      if (f.name == field_name) return f;
    }
  }
  throw std::logic_error("config table: no field '" + std::string(field_name) + "' in " +
                         std::string(name));
}

std::int64_t read_integer(const JsonCursor& cursor, const Field& field) {
  return cursor.as_integer(static_cast<std::int64_t>(field.min),
                           static_cast<std::int64_t>(field.max));
}

}  // namespace perflow::study::detail
