#pragma once

#include <optional>
#include <span>
#include <string>

#include "perflow/core/json_cursor.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/parallel/moe_dispatch.hpp"
#include "perflow/parallel/nccl_collectives.hpp"
#include "perflow/study/config.hpp"

namespace perflow::study::detail {

/// A registered schedule's name; an unknown one fails at its pointer with the valid names.
std::string read_schedule_name(const JsonCursor& cursor);

/// Bytes per second (a number, or "400GB/s"), between 1 B/s and 1e18 B/s.
double read_bandwidth(const JsonCursor& cursor);

/// One tensor-parallel all-reduce of `bytes` over `degree` ranks as `nccl` prices it: with
/// sequence parallelism a reduce-scatter and an all-gather of the same tokens (Megatron-LM's
/// sequence-parallel layers), two calls. The time of both; the algorithm and protocol of the
/// first.
parallel::CollectiveChoice tensor_parallel_collective(const parallel::NcclNetwork& nccl,
                                                      std::uint32_t degree, bool sequence_parallel,
                                                      double bytes);

/// NCCL's view of the GPUs that run (stages without one skipped): the slowest scale-up link,
/// the oldest generation, PCIe if any joins over it, NVLS only if every one has it. The
/// link's latency, the NIC, the ranks per node and the call overhead are left unset.
parallel::NcclNetwork gpus_nccl_network(std::span<const std::optional<model::DeviceSpec>> gpus);

/// One MoE layer's dispatch and combine on its busiest rank, by the model's dispatcher over
/// the expert- and tensor-parallel groups' NCCL networks (config.expert_parallel_nccl,
/// tensor_parallel_nccl).
parallel::MoeDispatchCost moe_dispatch(const Config& config, const MoeRouting& routing);

/// What context parallelism's exchanges add to one F (`backward` false) or B of a position
/// whose attention layers exchange `x` (cost_config.cpp says how per cp_comm).
TimeNs context_parallel_time(const Config& config, const model::ContextExchange& x, bool backward);

/// Reads /costs, /device_types, /placement and the link part of /network into `config`
/// (costs per stage and chunk, device memory, boundary bytes, links). Needs
/// config.pipeline's sizes.
void parse_cost_sections(const JsonCursor& root, Config& config);

}  // namespace perflow::study::detail
