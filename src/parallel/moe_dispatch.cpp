#include "perflow/parallel/moe_dispatch.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::parallel {
namespace {

// Seconds to nanoseconds, refusing what TimeNs cannot hold.
TimeNs to_ns(double seconds, const char* what) {
  const double ns = std::ceil(seconds * 1e9);
  if (!(ns <= 1e18)) {
    throw ScheduleError(fmt::format("a MoE {} would take longer than 1e18 ns", what));
  }
  return static_cast<TimeNs>(ns);
}

// bytes over bandwidth (bytes/s; 0 is unlimited) in seconds.
double over(double bytes, double bandwidth) { return bandwidth > 0 ? bytes / bandwidth : 0.0; }

MoeDispatchCost all_to_all_dispatch(const MoeRouting& r, const MoeGroups& g) {
  MoeDispatchCost cost;
  const double rows = r.tokens * r.top_k * r.load;
  const double bytes = rows * r.hidden * 2;
  const TimeNs tokens = nccl_all_to_all_time(bytes, g.expert_parallel, g.expert_network);
  const TimeNs probs = nccl_all_to_all_time(rows * 4, g.expert_parallel, g.expert_network);
  TimeNs gather = 0;
  TimeNs scatter = 0;
  if (g.tensor_parallel > 1) {
    const double gathered = bytes * g.tensor_parallel;
    gather =
        nccl_collective_time(Collective::AllGather, gathered, g.tensor_parallel, g.tensor_network)
            .time;
    scatter = nccl_collective_time(Collective::ReduceScatter, gathered, g.tensor_parallel,
                                   g.tensor_network)
                  .time;
  }
  cost.dispatch = tokens + probs + gather;
  cost.combine = scatter + tokens;
  cost.network_bytes = bytes;
  return cost;
}

MoeDispatchCost deepep_dispatch(const MoeRouting& r, const MoeGroups& g) {
  const NcclNetwork& net = g.expert_network;
  const std::uint32_t ep = g.expert_parallel;
  const std::uint32_t ep_per_node = ranks_in_a_node(net, ep);
  const std::uint32_t nodes = (ep + ep_per_node - 1) / ep_per_node;
  const double tp = g.tensor_parallel;
  const double per_node = tp * ep_per_node;  // the TP x EP group's ranks in a node
  const double token_bytes = r.hidden * 2 * r.load;
  // Each token reaches every tensor-parallel rank of each expert rank it selects.
  const double ranks = tp * expected_units_hit(r.experts, ep, r.top_k, r.groups, r.group_top_k);
  const double nodes_hit = expected_units_hit(r.experts, nodes, r.top_k, r.groups, r.group_top_k);

  MoeDispatchCost cost;
  cost.nvlink_bytes = r.tokens * ranks * (per_node - 1) / per_node * token_bytes;
  cost.network_bytes = nodes > 1 ? r.tokens * nodes_hit * (nodes - 1.0) / nodes * token_bytes : 0.0;
  const double nvlink = net.intra.bandwidth * nccl_link_fraction(net.scale_up, net.generation) *
                        kDeepEpNvLinkEfficiency;
  const double rdma = net.inter.bandwidth * kDeepEpRdmaEfficiency;
  const double seconds = std::max(over(cost.nvlink_bytes, nvlink), over(cost.network_bytes, rdma));
  const TimeNs latency = net.intra.latency + (nodes > 1 ? net.inter.latency : 0);
  cost.dispatch = to_ns(seconds, "dispatch") + latency + net.overhead;
  cost.combine = cost.dispatch;  // the same bytes back, in bf16
  return cost;
}

// C(n - m, k) / C(n, k): none of k draws without replacement from n lands in m of them.
double miss(double n, double m, std::uint32_t k) {
  double none = 1.0;
  for (std::uint32_t i = 0; i < k; ++i) none *= std::max(0.0, (n - m - i) / (n - i));
  return none;
}

// log C(n, k), so that thousands of groups do not overflow a double.
double log_choose(std::uint32_t n, std::uint32_t k) {
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
}

}  // namespace

double expected_units_hit(std::uint32_t experts, std::uint32_t units, std::uint32_t top_k,
                          std::uint32_t groups, std::uint32_t group_top_k) {
  if (units <= 1 || experts == 0 || top_k == 0) return 1.0;
  const double e = experts;
  const bool grouped = groups > 1 && group_top_k > 0 && group_top_k < groups &&
                       (units % groups == 0 || groups % units == 0);
  if (!grouped) return units * (1.0 - miss(e, e / units, top_k));
  const double picked = e * group_top_k / groups;  // E'
  if (units % groups == 0) {
    return units * double(group_top_k) / groups * (1.0 - miss(picked, e / units, top_k));
  }
  // Each unit holds s whole groups; j of them picked with C(s, j) C(G - s, g - j) / C(G, g).
  const std::uint32_t s = groups / units;
  double none = 0;
  for (std::uint32_t j = 0; j <= std::min(s, group_top_k); ++j) {
    if (group_top_k - j > groups - s) continue;
    none += std::exp(log_choose(s, j) + log_choose(groups - s, group_top_k - j) -
                     log_choose(groups, group_top_k)) *
            miss(picked, j * e / groups, top_k);
  }
  return units * (1.0 - none);
}

MoeDispatchCost moe_dispatch_cost(MoeDispatcher dispatcher, const MoeRouting& routing,
                                  const MoeGroups& groups) {
  if (routing.tokens <= 0 || routing.layers == 0 || groups.expert_parallel <= 1) return {};
  return dispatcher == MoeDispatcher::DeepEp ? deepep_dispatch(routing, groups)
                                             : all_to_all_dispatch(routing, groups);
}

}  // namespace perflow::parallel
