#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "perflow/model/transformer.hpp"
#include "perflow/study/launch_import.hpp"

namespace perflow::study::detail {

/// What an importer (Megatron-LM flags, a torchtitan job) read, in PerFlow's terms, before it
/// is written as a config. Degrees are GPUs; `data_parallel` is what is left of the world.
struct ImportedRun {
  std::string tool;          ///< "Megatron-LM flags", "torchtitan job llama3_8b.toml"
  model::Transformer shape;  ///< the model; written as a preset when it is one's
  std::string preset;        ///< a preset the tool named (torchtitan's flavor); else empty
  std::uint32_t tensor_parallel = 1;
  std::uint32_t pipeline_parallel = 1;
  std::uint32_t context_parallel = 1;
  std::uint32_t expert_parallel = 1;
  std::uint32_t data_parallel = 1;
  std::uint32_t chunks = 1;  ///< model chunks per pipeline rank
  std::string schedule;      ///< empty: 1f1b, or interleaved-1f1b with chunks > 1
  std::optional<std::uint32_t> microbatch_group_size;
  std::vector<std::uint32_t> layers;  ///< per pipeline position; empty: "even"
  std::uint32_t micro_batch = 1;
  std::uint32_t global_batch = 1;
  std::string precision = "bf16";
  std::string fp8_recipe;                  ///< empty: the default (delayed) or not fp8
  std::uint32_t bf16_layers_at_start = 0;  ///< --first-last-layers-bf16's first layers
  std::uint32_t bf16_layers_at_end = 0;    ///< and its last ones
  std::string recompute = "none";
  bool sequence_parallel = false;
  bool distributed_optimizer = false;
  std::string fsdp;                   ///< empty: none; "zero3" or "hsdp"
  std::uint32_t fsdp_shard_size = 0;  ///< with "hsdp": ranks per shard group (dp x cp)
  bool flash_attention = true;
  bool recompute_mla_up_proj = false;  ///< --recompute-modules names mla_up_proj
  bool cuda_graphs = false;            ///< each layer's passes captured as CUDA graphs
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = false;
  std::optional<std::uint32_t> grad_bucket_size;  ///< parameters; unset: Megatron-Core's rule
  std::string grad_reduce_dtype;                  ///< empty: the precision's default
  std::string moe_dispatcher;                     ///< empty: the default (alltoall)
  std::string cp_comm;                            ///< empty: the default (p2p)
  bool moe_a2a_overlap = false;
  std::uint32_t gpus_per_node = 8;
  std::uint32_t nodes = 1;
};

/// The GPU preset and the world size the options give (gpus_per_node and nodes fall back to
/// `gpus_per_node` and `nodes`, what the tool's own settings said); throws OptionError naming
/// the option that is missing or unknown.
void require_gpus(const ImportOptions& options, std::optional<std::uint32_t> gpus_per_node,
                  std::optional<std::uint32_t> nodes, ImportedRun& run);

/// The layers per position a tool places, or empty when PerFlow's default ("even") split
/// places the same (the config then says nothing).
std::vector<std::uint32_t> unless_even(std::vector<std::uint32_t> counts);

/// data_parallel = world / (tp x pp x cp), checked; `what` names the settings in messages.
void derive_data_parallel(ImportedRun& run, std::string_view what);

/// The global batch is whole microbatches on every data-parallel replica.
void check_global_batch(const ImportedRun& run, std::string_view what);

/// The config `perflow simulate` reads: description, model (a preset when the shape is
/// one's), training (batch, precision and recomputation always, switches when they differ
/// from PerFlow's defaults), device, pipeline, parallelism and network, in that order.
nlohmann::ordered_json write_config(const ImportedRun& run, const std::string& gpu);

}  // namespace perflow::study::detail
