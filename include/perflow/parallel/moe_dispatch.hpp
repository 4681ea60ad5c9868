#pragma once

#include <cstdint>

#include "perflow/core/moe_routing.hpp"
#include "perflow/core/time.hpp"
#include "perflow/parallel/nccl_collectives.hpp"

namespace perflow::parallel {

/// DeepEP's normal kernels move this share of what NCCL reaches of NVLink, counting the
/// bytes that cross it (a token's copy for its own rank does not): DeepEP's README gives
/// 153 GB/s (dispatch) and 158 GB/s (combine) for EP 8 on H800s, logical bandwidth that
/// counts the 1/8 that stays local; 7/8 of their mean is 136 GB/s of the 165 GB/s NCCL
/// reaches of H800's eight 25 GB/s links (deepseek-ai/DeepEP at 567632d). DeepEP V2's 643 GB/s
/// on B200 with 24 SMs gives 0.78, within 5%.
inline constexpr double kDeepEpNvLinkEfficiency = 0.82;
/// ... and of each GPU's NIC over RDMA, counting the bytes that leave the node: the README's
/// EP 32 (58 GB/s) and EP 64 (51 GB/s) logical RDMA bandwidths on 50 GB/s CX7 NICs count
/// the tokens for the sender's own node, 1/4 and 1/8 of them (DeepSeek-V3's routing to at
/// most 4 nodes at EP 64): 43.5 and 44.6 GB/s leave the node, 0.88 of the line rate. (Its
/// EP 16 figure, 43 GB/s, is bound by NVLink forwarding, which the model also prices.)
inline constexpr double kDeepEpRdmaEfficiency = 0.88;

/// The expected number of `units` (ranks or nodes, each holding experts / units of the
/// routed experts, in order) that a token's top_k distinct experts fall in, the experts
/// chosen uniformly: units x (1 - C(E - E / units, k) / C(E, k)).
///
/// With group-limited routing (`groups` equal groups of experts in order, the token's
/// experts chosen uniformly among the E' = E x group_top_k / groups experts of the
/// `group_top_k` groups it picks uniformly): a unit inside one group is hit with
/// probability group_top_k / groups x (1 - C(E' - E / units, k) / C(E', k)); a unit of s
/// whole groups misses when the j of them picked (hypergeometric) all miss,
/// C(E' - j E / groups, k) / C(E', k). Units that neither nest in groups nor hold whole ones
/// are taken as without groups.
double expected_units_hit(std::uint32_t experts, std::uint32_t units, std::uint32_t top_k,
                          std::uint32_t groups = 0, std::uint32_t group_top_k = 0);

/// The groups a MoE layer's dispatcher uses: the expert-parallel ranks (`network`, whose
/// ranks_per_node is the EP ranks a node holds) and the tensor-parallel ranks of each.
struct MoeGroups {
  std::uint32_t expert_parallel = 1;
  NcclNetwork expert_network;
  std::uint32_t tensor_parallel = 1;
  NcclNetwork tensor_network;
};

/// One MoE layer's dispatch and combine in one pass (an F or a backward, which mirrors
/// them), on the busiest rank.
struct MoeDispatchCost {
  TimeNs dispatch = 0;
  TimeNs combine = 0;
  /// Bytes the busiest rank moves in one dispatch: what it sends in the NCCL all-to-all, or
  /// what crosses its NVLink and its NIC with DeepEP.
  double nvlink_bytes = 0;
  double network_bytes = 0;

  [[nodiscard]] TimeNs total() const { return dispatch + combine; }
};

/// What one MoE layer's token movement costs a rank in one pass, `routing.load` times a
/// balanced share, in 2-byte activations:
///
///  - alltoall (Megatron-Core's MoEAlltoAllTokenDispatcher): an NCCL all-to-all of the
///    T r k (token, expert) rows (h x 2 bytes each; a token going to three experts of one
///    rank is sent three times) and one of their fp32 router probabilities; with tensor
///    parallelism an all-gather of the received rows over the TP ranks. The combine: a
///    reduce-scatter over TP, then the all-to-all of the rows back. Each call pays the
///    network's call overhead.
///  - deepep (DeepEP's normal kernels under Megatron-Core's flex dispatcher, over the TP x EP
///    ranks): each token goes once to each rank that holds one of its experts (over NVLink
///    inside the node) and once to each other node that does (over RDMA, then forwarded over
///    NVLink): the busiest rank's NVLink bytes are T r x D_ranks x (g - 1) / g x 2h, its RDMA
///    bytes T r x D_nodes x (N - 1) / N x 2h (D from expected_units_hit, g ranks a node, N
///    nodes). A dispatch takes the longer of the two at kDeepEpNvLinkEfficiency of NCCL's
///    NVLink and kDeepEpRdmaEfficiency of the NIC, plus one call overhead (its layout and
///    notify kernels and the host's wait for the received count); the combine moves the same
///    bytes back.
///
/// Nothing when the routing has no tokens or there is one expert-parallel rank. Throws
/// ScheduleError beyond 1e18 ns.
MoeDispatchCost moe_dispatch_cost(MoeDispatcher dispatcher, const MoeRouting& routing,
                                  const MoeGroups& groups);

}  // namespace perflow::parallel
