#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace perflow {

/// How a MoE layer's tokens travel to their experts and back (Megatron-Core's
/// --moe-token-dispatcher-type).
enum class MoeDispatcher : std::uint8_t {
  /// MoEAlltoAllTokenDispatcher: each (token, expert) pair is permuted into its own row and
  /// sent with NCCL all-to-alls (tokens, then their router probabilities), all-gathered over
  /// the tensor-parallel ranks; the combine mirrors it.
  AllToAll,
  /// The flex dispatcher with DeepEP's normal kernels: one fused dispatch and one combine
  /// that send each token once per destination rank over NVLink and once per destination
  /// node over RDMA (forwarded over NVLink inside the node), on SMs of their own.
  DeepEp,
};

constexpr std::string_view to_string(MoeDispatcher dispatcher) {
  return dispatcher == MoeDispatcher::DeepEp ? "deepep" : "alltoall";
}

/// The dispatcher `to_string` names, or nullopt.
constexpr std::optional<MoeDispatcher> parse_moe_dispatcher(std::string_view name) {
  for (const MoeDispatcher d : {MoeDispatcher::AllToAll, MoeDispatcher::DeepEp}) {
    if (to_string(d) == name) return d;
  }
  return std::nullopt;
}

/// What one rank's MoE layers route in one microbatch, as the dispatcher sees it.
struct MoeRouting {
  double tokens = 0;              ///< tokens the rank routes in each MoE layer (its T r)
  double hidden = 0;              ///< h, the elements of one token
  std::uint32_t top_k = 0;        ///< routed experts per token
  std::uint32_t experts = 0;      ///< routed experts per layer
  double load = 1;                ///< the busiest rank's tokens over a balanced share
  std::uint32_t groups = 0;       ///< group-limited routing's expert groups (0: none)
  std::uint32_t group_top_k = 0;  ///< the groups a token picks
  std::uint32_t layers = 0;       ///< MoE layers the position holds

  friend bool operator==(const MoeRouting&, const MoeRouting&) = default;
};

}  // namespace perflow
