// Costs for heterogeneous pipelines. For stage s and chunk c, fields resolve in order:
// the uniform /costs, then the device type placed on s (/device_types + /placement), then
// every /costs/overrides entry covering (s, c), in order. A stage left without a forward,
// backward or weight cost is an error naming it.
#include "detail/cost_config.hpp"

#include <type_traits>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "detail/config_fields.hpp"
#include "detail/model_config.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/units.hpp"
#include "perflow/parallel/collectives.hpp"
#include "perflow/parallel/moe_dispatch.hpp"
#include "perflow/parallel/nccl_collectives.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::study::detail {
namespace {

// /costs/offload (or a device type's, or an override's), field by field.
struct OffloadFields {
  std::optional<double> ratio, budget, optimizer_state;
  std::optional<bool> optimizer;

  void apply(const OffloadFields& over) {
    if (over.ratio) ratio = over.ratio;
    if (over.budget) budget = over.budget;
    if (over.optimizer_state) optimizer_state = over.optimizer_state;
    if (over.optimizer) optimizer = over.optimizer;
  }
};

struct PartialCosts {
  std::optional<TimeNs> forward, backward, weight, optimizer, launch_overhead, step_overhead;
  std::optional<double> activation, backward_frees, static_memory, boundary_bytes;
  std::optional<double> gradient_bytes, tp_allreduce_bytes;
  std::optional<std::uint32_t> tp_allreduces;
  std::optional<model::Recompute> recompute;
  std::optional<TimeNs> recompute_forward;
  std::optional<double> recompute_activation;
  std::optional<OffloadFields> offload;
  std::optional<double> a2a_bytes;
  std::optional<std::uint32_t> a2a_per_pass;
  std::optional<TimeNs> forward_backward;
  // Derived: the host's time to issue F's, B's and W's kernels and NCCL calls (the host
  // floor: a task takes at least that); a duration given by hand replaces its floor.
  std::optional<TimeNs> forward_host, backward_host, weight_host;
  // Derived: what the MoE layers route, priced by the dispatcher (hand-given a2a_bytes or
  // a2a_per_pass replace it).
  std::optional<MoeRouting> moe_routing;
  // Derived: what context parallelism exchanges in the attention layers.
  std::optional<model::ContextExchange> context;
  // Where the user gave them (for errors at the field; unset when derived).
  std::optional<JsonCursor> a2a_bytes_at, a2a_per_pass_at, forward_backward_at;

  void apply(const PartialCosts& over) {
    const auto take = [](auto& field, const auto& other) {
      if (other) field = other;
    };
    // A duration given replaces the derived one and its host floor (a measured time holds
    // its host's share).
    if (over.forward) forward_host = over.forward_host;
    if (over.backward) backward_host = over.backward_host;
    if (over.weight) weight_host = over.weight_host;
    take(forward, over.forward);
    take(backward, over.backward);
    take(weight, over.weight);
    take(activation, over.activation);
    take(backward_frees, over.backward_frees);
    take(static_memory, over.static_memory);
    take(boundary_bytes, over.boundary_bytes);
    take(optimizer, over.optimizer);
    take(gradient_bytes, over.gradient_bytes);
    take(tp_allreduce_bytes, over.tp_allreduce_bytes);
    take(tp_allreduces, over.tp_allreduces);
    take(launch_overhead, over.launch_overhead);
    take(step_overhead, over.step_overhead);
    take(recompute, over.recompute);
    take(recompute_forward, over.recompute_forward);
    take(recompute_activation, over.recompute_activation);
    if (over.a2a_bytes || over.a2a_per_pass || over.moe_routing) moe_routing = over.moe_routing;
    take(a2a_bytes, over.a2a_bytes);
    take(a2a_per_pass, over.a2a_per_pass);
    take(forward_backward, over.forward_backward);
    take(a2a_bytes_at, over.a2a_bytes_at);
    take(a2a_per_pass_at, over.a2a_per_pass_at);
    take(forward_backward_at, over.forward_backward_at);
    if (over.offload) {
      if (!offload) offload.emplace();
      offload->apply(*over.offload);
    }
  }

  /// Chunk `c`'s share of costs given for a whole stage (`costs.per: "stage"`): durations
  /// and all-reduce counts split so the chunks sum exactly to the stage's (the first chunks
  /// take the remainder), activation and gradient bytes divided. What is not a chunk's
  /// (static memory, boundary bytes, one all-reduce's bytes, the B/W split, the launch
  /// overhead of each task and the step overhead of the device, the recomputation mode and
  /// the offload policy) stays; the recomputed forward is split and its activation divided
  /// like the forward's.
  [[nodiscard]] PartialCosts share_of_stage(std::uint32_t c, std::uint32_t chunks) const {
    PartialCosts share = *this;
    const auto split = [&](auto& field) {
      if (!field) return;
      using T = std::remove_cvref_t<decltype(*field)>;
      const T whole = *field / static_cast<T>(chunks);
      const T rest = *field % static_cast<T>(chunks);
      field = whole + (static_cast<T>(c) < rest ? T{1} : T{0});
    };
    split(share.forward);
    split(share.backward);
    split(share.weight);
    split(share.optimizer);
    split(share.tp_allreduces);
    split(share.recompute_forward);
    split(share.a2a_per_pass);
    split(share.forward_backward);
    if (share.activation) *share.activation /= chunks;
    if (share.recompute_activation) *share.recompute_activation /= chunks;
    if (share.gradient_bytes) *share.gradient_bytes /= chunks;
    return share;
  }
};

// What the model derives for one (stage, chunk): every field, as if given per chunk.
// Static memory is the stage's (the sum over its chunks), as /costs gives it.
PartialCosts derived_costs(const model::PositionCosts& p, double stage_static_memory,
                           model::Recompute recompute) {
  PartialCosts out;
  const auto ns = [](double x) { return static_cast<TimeNs>(std::llround(x)); };
  out.forward = ns(p.forward_ns);
  out.backward = ns(p.backward_ns);
  out.weight = ns(p.weight_ns);
  out.forward_host = ns(p.forward_host.ns);
  out.backward_host = ns(p.backward_host.ns);
  out.weight_host = ns(p.weight_host.ns);
  out.optimizer = ns(p.optimizer_ns);
  out.activation = p.activation;
  out.backward_frees = p.backward_frees;
  out.static_memory = stage_static_memory;
  out.boundary_bytes = p.boundary_bytes;
  out.gradient_bytes = p.dp_gradient_bytes;
  out.tp_allreduce_bytes = p.tp_allreduce_bytes;
  out.tp_allreduces = p.tp_allreduces;
  out.a2a_bytes = p.a2a_bytes;
  out.a2a_per_pass = p.a2a_per_pass;
  if (p.moe_routing.layers > 0) out.moe_routing = p.moe_routing;
  if (p.context.layers > 0) out.context = p.context;
  out.recompute = recompute;  // its time and what F keeps: from the mode resolved at the end
  return out;
}

// Per chunk, the costs a source gives it: itself, or its share when it describes a stage.
std::vector<PartialCosts> chunk_shares(const PartialCosts& p, std::uint32_t chunks,
                                       bool per_stage) {
  std::vector<PartialCosts> shares(chunks, p);
  if (per_stage) {
    for (std::uint32_t c = 0; c < chunks; ++c) shares[c] = p.share_of_stage(c, chunks);
  }
  return shares;
}

double read_bytes(const JsonCursor& c) {
  double x = 0;
  if (c.value().is_number()) {
    x = c.as_number_at_least(0.0);
  } else {
    try {
      x = parse_bytes(c.as_string());
    } catch (const std::invalid_argument& e) {
      c.fail_expected(e.what());
    }
  }
  if (!(x <= kMaxBytes)) c.fail_expected("a size of at most 1e18 bytes");
  return x;
}

// The cost fields shared by /costs, a device type and an override.
PartialCosts read_cost_fields(const JsonCursor& c) {
  PartialCosts p;
  if (auto x = c.find("forward")) p.forward = x->as_duration();
  if (auto x = c.find("backward")) p.backward = x->as_duration();
  if (auto x = c.find("weight")) p.weight = x->as_duration();
  if (auto x = c.find("activation")) p.activation = read_bytes(*x);
  if (auto x = c.find("backward_frees")) {
    p.backward_frees = x->as_number_at_least(0.0);
    if (*p.backward_frees > 1.0) x->fail_expected("a fraction in [0, 1]");
  }
  if (auto x = c.find("static_memory")) p.static_memory = read_bytes(*x);
  if (auto x = c.find("boundary_bytes")) p.boundary_bytes = read_bytes(*x);
  if (auto x = c.find("optimizer")) p.optimizer = x->as_duration();
  if (auto x = c.find("launch_overhead")) p.launch_overhead = x->as_duration();
  if (auto x = c.find("step_overhead")) p.step_overhead = x->as_duration();
  if (auto x = c.find("gradient_bytes")) p.gradient_bytes = read_bytes(*x);
  if (auto x = c.find("tp_allreduce_bytes")) p.tp_allreduce_bytes = read_bytes(*x);
  if (auto x = c.find("tp_allreduces")) {
    p.tp_allreduces =
        static_cast<std::uint32_t>(read_integer(*x, kCostsSection.field("tp_allreduces")));
  }
  if (auto x = c.find("recompute")) {
    const std::optional<model::Recompute> mode = model::parse_recompute(x->as_string());
    if (!mode) x->fail_expected("\"none\", \"selective\" or \"full\"");
    p.recompute = mode;
  }
  if (auto x = c.find("recompute_forward")) p.recompute_forward = x->as_duration();
  if (auto x = c.find("recompute_activation")) p.recompute_activation = read_bytes(*x);
  if (auto x = c.find("a2a_bytes")) {
    p.a2a_bytes = read_bytes(*x);
    p.a2a_bytes_at = *x;
  }
  if (auto x = c.find("a2a_per_pass")) {
    p.a2a_per_pass =
        static_cast<std::uint32_t>(read_integer(*x, kCostsSection.field("a2a_per_pass")));
    p.a2a_per_pass_at = *x;
  }
  if (auto x = c.find("forward_backward")) {
    p.forward_backward = x->as_duration();
    if (*p.forward_backward <= 0) x->fail_expected("a duration above 0");
    p.forward_backward_at = *x;
  }
  if (auto x = c.find("offload")) {
    x->expect_object(kOffloadSection.keys());
    OffloadFields offload;
    if (auto r = x->find("ratio")) {
      offload.ratio = r->as_number_at_least(0.0);
      if (*offload.ratio > 1.0) r->fail_expected("a share in [0, 1]");
    }
    if (auto b = x->find("budget")) {
      if (offload.ratio.value_or(0.0) > 0) b->fail("give a ratio or a budget, not both");
      offload.budget = read_bytes(*b);
    }
    if (auto o = x->find("optimizer")) offload.optimizer = o->as_bool();
    if (auto o = x->find("optimizer_state")) offload.optimizer_state = read_bytes(*o);
    p.offload = offload;
  }
  return p;
}

// A stage range: 3, "0-3" or [0, 3] (inclusive), within [0, stages).
std::pair<std::uint32_t, std::uint32_t> read_stage_range(const JsonCursor& c,
                                                         std::uint32_t stages) {
  std::int64_t first = 0;
  std::int64_t last = 0;
  const std::string expectation = fmt::format(
      "a stage or an inclusive range of stages (3, \"0-3\" or [0, 3]) within 0..{}", stages - 1);
  if (c.value().is_number()) {
    first = last = c.as_integer(0, stages - 1);
  } else if (c.value().is_array()) {
    if (c.array_size() != 2) c.fail_expected(expectation);
    first = c.at(std::size_t{0}).as_integer(0, stages - 1);
    last = c.at(std::size_t{1}).as_integer(0, stages - 1);
  } else {
    // "3" or "0-3": each side a whole non-negative integer.
    const std::string text = c.as_string();
    const auto number = [&](std::string_view part, std::int64_t& out) {
      const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), out);
      if (part.empty() || error != std::errc() || end != part.data() + part.size()) {
        c.fail_expected(expectation);
      }
    };
    const auto dash = text.find('-');
    const std::string_view view(text);
    number(view.substr(0, dash), first);
    if (dash == std::string::npos) {
      last = first;
    } else {
      number(view.substr(dash + 1), last);
    }
  }
  if (first < 0 || last < first || last >= static_cast<std::int64_t>(stages)) {
    c.fail_expected(expectation);
  }
  return {static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(last)};
}

// `count` collectives of `one` ns each, as one task's added time. Durations are at most
// 1e18 ns; keeping every sum below 2^62 leaves the simulator room.
TimeNs repeated(TimeNs one, std::uint32_t count, std::string_view what, const JsonCursor& where) {
  if (static_cast<double>(one) * count > 1e18) {
    where.fail(fmt::format("{} {} of {} ns each would exceed 1e18 ns", count, what, one));
  }
  return one * count;
}

// The all-reduce time one F or B adds under tensor parallelism; 0 at degree 1. Priced as
// NCCL does with `nccl`, where sequence parallelism makes each all-reduce a reduce-scatter
// and an all-gather of the same tokens (Megatron-LM's sequence-parallel layers): two calls.
TimeNs tensor_parallel_time(std::uint32_t degree, const simulator::Link& link,
                            const std::optional<parallel::NcclNetwork>& nccl,
                            bool sequence_parallel, const PartialCosts& p,
                            const JsonCursor& where) {
  const std::uint32_t count = p.tp_allreduces.value_or(0);
  if (degree <= 1 || count == 0) return 0;
  const double bytes = p.tp_allreduce_bytes.value_or(0.0);
  const TimeNs one =
      nccl ? tensor_parallel_collective(*nccl, degree, sequence_parallel, bytes).time
           : parallel::ring_all_reduce_time(bytes, degree, link.latency, link.bandwidth);
  return repeated(one, count, "tensor-parallel all-reduces", where);
}

// Of a group whose ranks are tensor_parallel apart (Megatron-LM's rank order: tensor first;
// the expert-parallel ranks, data-parallel replicas, and the context-parallel ones), the
// ranks an NVLink domain holds: nvlink_domain / TP.
std::uint32_t ranks_per_domain(const Config& config) {
  return std::max<std::uint32_t>(
      1, config.nvlink_domain / std::max<std::uint32_t>(config.tensor_parallel, 1));
}

// The scale-up domain the GPUs' presets give: theirs (the smallest) when every stage has a
// GPU whose NVLink spans nodes (an NVL72 rack's 72 over trays of 4), else the node's GPUs.
// NCCL treats the GPUs of one multi-node NVLink domain as one node (its MNNVL support), so a
// group inside the rack runs as one inside an HGX board does.
std::uint32_t preset_nvlink_domain(std::span<const std::optional<model::DeviceSpec>> gpus,
                                   std::uint32_t gpus_per_node) {
  std::uint32_t domain = 0;
  for (const auto& gpu : gpus) {
    if (!gpu || gpu->nvlink_domain <= gpu->gpus_per_node) return gpus_per_node;
    domain = domain == 0 ? gpu->nvlink_domain : std::min(domain, gpu->nvlink_domain);
  }
  return domain == 0 ? gpus_per_node : domain;
}

// Whether a chunk's all-to-alls are its MoE layers' dispatcher's (derived, NCCL pricing), not
// a2a_bytes and a2a_per_pass (given by hand, or priced as rings).
bool by_dispatcher(const Config& config, const PartialCosts& p) {
  return p.moe_routing && config.expert_parallel_nccl;
}

// The all-to-all time one F or backward adds under expert parallelism: a2a_per_pass
// pairwise all-to-alls of a2a_bytes among the expert-parallel ranks; 0 at degree 1.

TimeNs expert_parallel_time(const Config& config, const PartialCosts& p, const JsonCursor& where) {
  const std::uint32_t count = p.a2a_per_pass.value_or(0);
  if (count == 0) return 0;
  if (config.expert_parallel <= 1) {
    p.a2a_per_pass_at.value_or(where).fail(
        fmt::format("a2a_per_pass is {} but there is no expert parallelism to all-to-all over: set "
                    "/parallelism/expert_parallel (the ranks of a MoE layer's all-to-all)",
                    count));
  }
  // Derived MoE layers, with NCCL's view of the links: as their dispatcher moves the tokens.
  if (by_dispatcher(config, p)) {
    const TimeNs layer = moe_dispatch(config, *p.moe_routing).total();
    return repeated(layer, p.moe_routing->layers, "MoE dispatches and combines", where);
  }
  const simulator::Link& intra = config.simulation.intra_node;
  const simulator::Link& inter = config.simulation.inter_node;
  const double bytes = p.a2a_bytes.value_or(0.0);
  const TimeNs one = config.expert_parallel_nccl
                         ? parallel::nccl_all_to_all_time(bytes, config.expert_parallel,
                                                          *config.expert_parallel_nccl)
                         : parallel::pairwise_all_to_all_time(
                               bytes, config.expert_parallel, ranks_per_domain(config),
                               {intra.latency, intra.bandwidth}, {inter.latency, inter.bandwidth});
  return repeated(one, count, "all-to-alls", where);
}

// A link as the config gives it; a field it leaves out is `defaults`'.
simulator::Link read_link(const JsonCursor& c, simulator::Link defaults = {}) {
  c.expect_object(kLinkSection.keys());
  simulator::Link link = defaults;
  if (auto x = c.find("latency")) link.latency = x->as_duration();
  if (auto x = c.find("bandwidth")) link.bandwidth = read_bandwidth(*x);
  return link;
}

// How many of a group's `size` ranks, `stride` apart, share a node (placed as
// group_in_one_node describes; a node here is an NVLink domain): all of them in a job of one
// node, else gpus_per_node / stride of them (at least 1, at most the group).
std::uint32_t group_ranks_per_node(std::uint32_t size, std::uint32_t stride, std::uint64_t world,
                                   std::uint32_t gpus_per_node) {
  if (world <= gpus_per_node) return size;
  return std::clamp<std::uint32_t>(gpus_per_node / std::max<std::uint32_t>(stride, 1), 1, size);
}

// True when every group of `size` ranks `stride` apart, in a job of `world` ranks, lies in
// one node of gpus_per_node GPUs. Ranks are placed as Megatron-Core places them
// (megatron/core/parallel_state.py, RankGenerator with order "tp-cp-ep-dp-pp": tensor-
// parallel ranks adjacent, data-parallel replicas tensor_parallel ranks apart, pipeline
// stages tp x dp apart). A group inside one node runs its collective over intra_node
// (NVLink); one that spans nodes over inter_node, the slowest hop of its ring (NCCL's ring
// crosses a NIC at each node boundary and moves at the pace of its slowest link). Groups tile the
// ranks in blocks of size x stride; a node boundary inside a block splits one of its groups (size
// >= 2), so they all stay in nodes exactly when the block divides the node, or when the whole job
// fits in one node.
bool group_in_one_node(std::uint32_t size, std::uint32_t stride, std::uint64_t world,
                       std::uint32_t gpus_per_node) {
  if (size <= 1 || world <= gpus_per_node) return true;
  const std::uint64_t block = std::uint64_t{size} * stride;
  return gpus_per_node % block == 0;
}

}  // namespace

parallel::NcclNetwork gpus_nccl_network(std::span<const std::optional<model::DeviceSpec>> gpus) {
  parallel::NcclNetwork net;
  bool any = false;
  for (const auto& gpu : gpus) {
    if (!gpu) continue;
    net.intra.bandwidth =
        any ? std::min(net.intra.bandwidth, gpu->link_bandwidth) : gpu->link_bandwidth;
    net.generation = any ? std::min(net.generation, gpu->generation) : gpu->generation;
    if (gpu->scale_up == ScaleUp::Pcie) net.scale_up = ScaleUp::Pcie;
    net.nvls = (any ? net.nvls : true) && gpu->nvls;
    any = true;
  }
  return net;
}

// What context parallelism adds to one F (or, `backward`, one B) of a chunk: its attention
// layers' exchanges with the other ranks of their sequence, priced over the link the
// context-parallel group spans (with NCCL pricing, at what NCCL reaches of it).
//  - p2p (Transformer Engine's ring attention): cp steps of the attention core, each on the
//    K and V block received in the step before while that block goes on to the next rank;
//    a step waits for its block where the transfer is the longer, (cp - 1) x max(0, transfer
//    - attention / cp) a layer. B passes K and V with their gradients: twice the bytes.
//  - all_gather: F gathers every rank's K and V before the attention; B gathers them again
//    and reduce-scatters their gradients.
//  - a2a (Ulysses): an all-to-all of Q, K and V before the attention (sequence split to head
//    split) and of its output after; B the same in reverse.
TimeNs context_parallel_time(const Config& config, const model::ContextExchange& x, bool backward) {
  const std::uint32_t cp = config.context_parallel;
  if (cp <= 1 || x.layers <= 0) return 0;
  const model::CpComm comm = config.model->training.cp_comm;
  const bool in_node = config.context_parallel_link == "intra_node";
  const simulator::Link& link =
      in_node ? config.simulation.intra_node : config.simulation.inter_node;
  const std::optional<parallel::NcclNetwork>& nccl = config.context_parallel_nccl;
  TimeNs layer = 0;
  if (comm == model::CpComm::P2p) {
    double bandwidth = link.bandwidth;
    if (nccl) {
      bandwidth *= in_node ? parallel::nccl_link_fraction(nccl->scale_up, nccl->generation)
                           : parallel::kNcclNetFraction;
    }
    const double bytes = (backward ? 2 : 1) * x.kv_bytes;
    const double transfer = double(link.latency) + (bandwidth > 0 ? bytes / bandwidth * 1e9 : 0.0);
    const double step = (backward ? x.attention_backward_ns : x.attention_forward_ns) / cp;
    layer = static_cast<TimeNs>(std::llround((cp - 1) * std::max(0.0, transfer - step)));
  } else {
    using parallel::Collective;
    const auto collective = [&](Collective kind, double bytes) {
      return parallel::collective_time(kind, bytes, cp, {link.latency, link.bandwidth}, nccl);
    };
    const auto all_to_all = [&](double bytes) {
      if (nccl) return parallel::nccl_all_to_all_time(bytes, cp, *nccl);
      const simulator::Link& intra = config.simulation.intra_node;
      const simulator::Link& inter = config.simulation.inter_node;
      return parallel::pairwise_all_to_all_time(bytes, cp, ranks_per_domain(config),
                                                {intra.latency, intra.bandwidth},
                                                {inter.latency, inter.bandwidth});
    };
    if (comm == model::CpComm::AllGather) {
      const double gathered = x.kv_bytes * cp;
      layer = collective(Collective::AllGather, gathered) +
              (backward ? collective(Collective::ReduceScatter, gathered) : 0);
    } else {
      layer = all_to_all(x.qkv_bytes) + all_to_all(x.output_bytes);
    }
  }
  return static_cast<TimeNs>(std::llround(double(layer) * x.layers));
}

parallel::MoeDispatchCost moe_dispatch(const Config& config, const MoeRouting& routing) {
  parallel::MoeGroups groups{
      .expert_parallel = config.expert_parallel,
      .expert_network = config.expert_parallel_nccl.value_or(parallel::NcclNetwork{}),
      .tensor_parallel = config.tensor_parallel,
      .tensor_network = config.tensor_parallel_nccl.value_or(parallel::NcclNetwork{})};
  const MoeDispatcher dispatcher =
      config.model ? config.model->training.moe_dispatcher : MoeDispatcher::AllToAll;
  return parallel::moe_dispatch_cost(dispatcher, routing, groups);
}

parallel::CollectiveChoice tensor_parallel_collective(const parallel::NcclNetwork& nccl,
                                                      std::uint32_t degree, bool sequence_parallel,
                                                      double bytes) {
  using parallel::Collective;
  if (!sequence_parallel) {
    return parallel::nccl_collective_time(Collective::AllReduce, bytes, degree, nccl);
  }
  parallel::CollectiveChoice c =
      parallel::nccl_collective_time(Collective::ReduceScatter, bytes, degree, nccl);
  c.time += parallel::nccl_collective_time(Collective::AllGather, bytes, degree, nccl).time;
  return c;
}

// Bytes per second, at least 1 B/s (0 would silently mean "free").
double read_bandwidth(const JsonCursor& c) {
  double x = 0;
  if (c.value().is_number()) {
    x = c.as_number();
  } else {
    try {
      x = parse_bandwidth(c.as_string());
    } catch (const std::invalid_argument& e) {
      c.fail_expected(e.what());
    }
  }
  if (!(x >= 1.0 && x <= kMaxBytes)) {
    c.fail_expected("a bandwidth between 1 B/s and 1e18 B/s");
  }
  return x;
}

std::string read_schedule_name(const JsonCursor& cursor) {
  std::string name = cursor.as_string();
  try {
    (void)parallel::builtin_schedules().get(name);
  } catch (const UnknownNameError& e) {
    cursor.fail(e.what());
  }
  return name;
}

namespace {

// Recomputation of (s, c): its mode, the R task's time (the recomputed forward's, with its
// tensor-parallel all-reduces for full) and what F keeps: given, or derived by /model, or
// (time, full) the forward.
void resolve_recompute(const PartialCosts& p, std::uint32_t s, std::uint32_t c,
                       const Config& config, TimeNs tp, const JsonCursor& where,
                       parallel::TaskCosts& resolved) {
  const model::Recompute mode = p.recompute.value_or(model::Recompute::None);
  if (mode == model::Recompute::None) return;
  const std::size_t m = static_cast<std::size_t>(mode);
  const model::PositionCosts* derived = nullptr;
  if (config.model && !config.model->positions.empty()) {
    derived = &config.model->positions[std::size_t{s} * config.pipeline.chunks + c];
  }
  const bool timed = derived && config.model->timed[s];
  const TimeNs full_tp = mode == model::Recompute::Full ? tp : 0;
  resolved.recompute = true;
  if (p.recompute_forward) {
    resolved.recompute_forward = *p.recompute_forward;
  } else if (timed) {
    resolved.recompute_forward =
        std::max(static_cast<TimeNs>(std::llround(derived->recompute_forward_ns[m])) + full_tp,
                 static_cast<TimeNs>(std::llround(derived->recompute_host[m].ns)));
  } else if (mode == model::Recompute::Full) {
    resolved.recompute_forward = resolved.forward;  // the forward again, all-reduces included
  } else {
    where.fail(
        fmt::format("stage {} chunk {} recomputes selectively but has no recompute_forward: give "
                    "/costs/recompute_forward (the R task's time), or /model with a GPU",
                    s, c));
  }
  if (p.recompute_activation) {
    resolved.recompute_activation = *p.recompute_activation;
  } else if (derived) {
    resolved.recompute_activation = derived->kept_activation[m];
  } else {
    where.fail(
        fmt::format("stage {} chunk {} recomputes ({}) but has no recompute_activation: give "
                    "/costs/recompute_activation (what an F keeps until its backward), or /model",
                    s, c, model::to_string(mode)));
  }
  if (derived) resolved.recompute_rebuilt = derived->recompute_rebuilt[m];
  if (resolved.recompute_activation > resolved.activation) {
    where.fail(fmt::format(
        "stage {} chunk {}: recompute_activation ({} bytes) is more than the activation it "
        "recomputes ({} bytes)",
        s, c, resolved.recompute_activation, resolved.activation));
  }
}

// Offloading of (s, c) into config.offload (sized by empty_offload): its ratio; a stage's
// budget and optimizer state from chunk 0.
void resolve_offload(const PartialCosts& p, std::uint32_t s, std::uint32_t c, Config& config,
                     const JsonCursor& where) {
  parallel::OffloadSpec& spec = config.offload;
  const std::uint32_t chunks = config.pipeline.chunks;
  if (!p.offload) return;
  spec.ratio[std::size_t{s} * chunks + c] = p.offload->ratio.value_or(0.0);
  if (p.offload->budget && spec.ratio[std::size_t{s} * chunks + c] > 0) {
    where.fail(fmt::format(
        "stage {} chunk {} has both an offload budget and a ratio ({}): give one of them", s, c,
        spec.ratio[std::size_t{s} * chunks + c]));
  }
  if (c != 0) return;
  spec.budget[s] = p.offload->budget;
  if (!p.offload->optimizer.value_or(false)) return;
  double bytes = 0;
  if (p.offload->optimizer_state) {
    bytes = *p.offload->optimizer_state;
  } else if (config.model && !config.model->positions.empty()) {
    for (std::uint32_t k = 0; k < chunks; ++k) {
      bytes += config.model->positions[std::size_t{s} * chunks + k].optimizer_bytes;
    }
  } else {
    where.fail(
        fmt::format("stage {} offloads its optimizer state but its size is unknown: give "
                    "/costs/offload/optimizer_state, or /model",
                    s));
  }
  spec.optimizer_bytes[s] = bytes;
}

// No offloading on any stage, ready for resolve_offload.
parallel::OffloadSpec empty_offload(std::uint32_t stages, std::uint32_t chunks) {
  parallel::OffloadSpec spec;
  spec.chunks = chunks;
  spec.ratio.assign(std::size_t{stages} * chunks, 0.0);
  spec.budget.assign(stages, std::nullopt);
  spec.optimizer_bytes.assign(stages, 0.0);
  return spec;
}

// The host links of the stages that offload (each needs one), and the optimizer state that
// leaves the device's static memory.
void finish_offload(Config& config, const std::vector<std::optional<simulator::Link>>& host_link,
                    const JsonCursor& where) {
  parallel::OffloadSpec& spec = config.offload;
  const std::uint32_t stages = config.pipeline.stages;
  const std::uint32_t chunks = config.pipeline.chunks;
  config.offloads = false;
  spec.host_link.assign(stages, parallel::HostLink{});
  for (std::uint32_t s = 0; s < stages; ++s) {
    bool offloads = spec.budget[s].has_value() || spec.optimizer_bytes[s] > 0;
    for (std::uint32_t c = 0; c < chunks; ++c) {
      offloads = offloads || spec.ratio[std::size_t{s} * chunks + c] > 0;
    }
    if (!offloads) continue;
    config.offloads = true;
    if (!host_link[s]) {
      where.fail(fmt::format(
          "stage {} offloads to host memory but has no host link: give /network/host_link "
          "or host_link in its device type ({{\"bandwidth\": \"64GB/s\", \"latency\": 2}} "
          "for PCIe Gen5 x16)",
          s));
    }
    spec.host_link[s] = {host_link[s]->latency, host_link[s]->bandwidth};
    if (spec.optimizer_bytes[s] > 0) {
      TimeNs optimizer = config.data_parallel.step_overhead[s];
      for (std::uint32_t c = 0; c < chunks; ++c) {
        optimizer += config.data_parallel.optimizer[std::size_t{s} * chunks + c];
      }
      if (optimizer == 0) {
        where.fail(fmt::format(
            "stage {} offloads its optimizer state but has no optimizer step to copy it for: "
            "give /costs/optimizer, or /model with a GPU",
            s));
      }
      DeviceInfo& device = config.devices[s];
      if (spec.optimizer_bytes[s] > device.static_memory) {
        where.fail(fmt::format(
            "stage {} offloads {} bytes of optimizer state, more than its static memory ({} "
            "bytes), which holds it: give /costs/static_memory",
            s, spec.optimizer_bytes[s], device.static_memory));
      }
      device.host_optimizer_state = spec.optimizer_bytes[s];
      device.static_memory -= device.host_optimizer_state;
    }
  }
}

}  // namespace

// Megatron-LM's gradient buckets and the distributed optimizer's collectives
// (megatron/core/distributed/distributed_data_parallel.py; megatron/training/training.py):
// bucket_size defaults to max(40M, 1M x the data-parallel group) parameters, and only pipeline
// rank 0's first model chunk is bucketed ("data-parallel communication on these stages is not on
// the critical path"); every other chunk reduces in one bucket. The bytes of a bucket are its
// parameters in the gradients' type (fp32 for configs without /model).
void resolve_gradient_buckets(const JsonCursor& root, Config& config) {
  parallel::DataParallelSpec& dp = config.data_parallel;
  const model::Training* training = config.model ? &config.model->training : nullptr;
  dp.sharded = training != nullptr && training->distributed_optimizer;
  if (dp.overlap_param_gather && !dp.sharded) {
    root.at("parallelism")
        .at("overlap_param_gather")
        .fail(
            "the parameters are gathered back from the distributed optimizer's shards: set "
            "/training/distributed_optimizer (with /model)");
  }
  const double parameters = config.grad_bucket_size.value_or(std::max(40e6, 1e6 * dp.degree));
  dp.bucket_bytes.assign(1, parameters * (training != nullptr ? training->gradient_width() : 4.0));
  if (config.grad_bucket_size && dp.ranks() > 1 && !dp.gradient_bytes.empty() &&
      parallel::gradient_bucket_count(dp, 0, dp.gradient_bytes[0]) >
          parallel::kMaxGradientBuckets) {
    root.at("parallelism")
        .at("grad_bucket_size")
        .fail(fmt::format("buckets of {} parameters split stage 0's {} gradient bytes into more "
                          "than {} buckets: give a larger size",
                          parameters, dp.gradient_bytes[0], parallel::kMaxGradientBuckets));
  }
}

void parse_cost_sections(const JsonCursor& root, Config& config) {
  const std::uint32_t stages = config.pipeline.stages;
  const std::uint32_t chunks = config.pipeline.chunks;
  std::vector<PartialCosts> per_stage_chunk(std::size_t{stages} * chunks);
  config.costs.reserve(stages, chunks);
  config.devices.assign(stages, DeviceInfo{});

  PartialCosts uniform;
  std::optional<JsonCursor> costs = root.find("costs");
  bool per_stage = false;
  if (costs) {
    costs->expect_object(kCostsSection.keys());
    uniform = read_cost_fields(*costs);
    if (auto per = costs->find("per")) {
      const std::string value = per->as_string();
      if (value != kCostsPerChunk && value != kCostsPerStage) {
        per->fail_expected(fmt::format("\"{}\" or \"{}\"", kCostsPerChunk, kCostsPerStage));
      }
      per_stage = value == kCostsPerStage;
    }
  }
  config.costs_per = per_stage ? kCostsPerStage : kCostsPerChunk;

  // GPUs: /device on every stage, or a device type's preset or specs where it is placed.
  std::vector<std::optional<model::DeviceSpec>> specs(stages);
  if (auto device = root.find("device")) {
    if (root.has("device_types")) {
      device->fail("give /device (one GPU on every stage) or /device_types, not both");
    }
    const model::DevicePreset& preset = read_device_preset(*device);
    for (std::uint32_t s = 0; s < stages; ++s) {
      specs[s] = preset.spec;
      config.devices[s].type = config.devices[s].preset = std::string(preset.name);
      config.devices[s].memory_capacity = preset.spec.memory_capacity;
    }
  }

  // Device types, placed on stage ranges (by /placement, or by /parts). Their costs are
  // applied below, once the model's derived costs (which need their GPUs) are known.
  std::vector<std::vector<PartialCosts>> type_costs;              // per placement entry, per chunk
  std::vector<std::size_t> type_of_stage(stages, SIZE_MAX);       // index into type_costs
  std::vector<std::optional<simulator::Link>> host_link(stages);  // a device type's
  std::optional<JsonCursor> placement = root.find("placement");
  if (auto parts = root.find("parts")) {
    if (placement) parts->fail("give either /placement or /parts, not both");
    placement = parts;
    for (std::size_t i = 0; i < parts->array_size(); ++i) {
      const JsonCursor entry = parts->at(i);
      entry.expect_object(kPartSection.keys());
      const auto [first, last] = read_stage_range(entry.at("stages"), stages);
      PartSpec part{first, last, config.pipeline.schedule};
      if (auto schedule = entry.find("schedule")) part.schedule = read_schedule_name(*schedule);
      config.parts.push_back(part);
    }
  }
  if (placement) {
    // Without /device_types every placed name is unknown: said at the first name, below.
    static const nlohmann::json kNoTypes = nlohmann::json::object();
    const JsonCursor types =
        root.has("device_types") ? root.at("device_types") : JsonCursor(kNoTypes, "", "");
    if (!types.value().is_object()) types.fail_expected("an object of device types");
    std::vector<bool> placed(stages, false);
    for (std::size_t i = 0; i < placement->array_size(); ++i) {
      const JsonCursor entry = placement->at(i);
      if (!config.parts.empty()) {
        if (!entry.has("device_type")) continue;  // a part may use the uniform costs
      } else {
        entry.expect_object(kPlacementSection.keys());
      }
      const auto [first, last] = read_stage_range(entry.at("stages"), stages);
      const JsonCursor type_name = entry.at("device_type");
      const std::string name = type_name.as_string();
      if (!types.has(name) || name == "comment") {
        std::string valid;
        for (const auto& [key, value] : types.value().items()) {
          if (key != "comment") valid += (valid.empty() ? "" : ", ") + key;
        }
        type_name.fail(fmt::format("unknown device type '{}' (defined in /device_types: {})", name,
                                   valid.empty() ? "none" : valid));
      }
      const JsonCursor type = types.at(name);
      type.expect_object(kDeviceTypeSection.keys());
      const std::optional<model::DeviceSpec> spec = read_device_type_spec(type);
      type_costs.push_back(chunk_shares(read_cost_fields(type), chunks, per_stage));
      const double capacity = type.has("memory") ? read_bytes(type.at("memory"))
                              : spec             ? spec->memory_capacity
                                                 : 0.0;
      std::optional<simulator::Link> type_host_link;
      if (auto x = type.find("host_link")) type_host_link = read_link(*x);
      for (std::uint32_t s = first; s <= last; ++s) {
        if (placed[s]) {
          entry.at("stages").fail(fmt::format("stage {} is already placed by an earlier entry", s));
        }
        placed[s] = true;
        config.devices[s].type = name;
        if (auto preset = type.find("preset")) config.devices[s].preset = preset->as_string();
        config.devices[s].memory_capacity = capacity;
        host_link[s] = type_host_link;
        specs[s] = spec;
        type_of_stage[s] = type_costs.size() - 1;
      }
    }
  } else if (auto types = root.find("device_types")) {
    types->fail("device types are defined but never placed: add /placement or /parts");
  }

  // The model's derived costs are the base every given cost overrides: the uniform costs,
  // then the device types, then the overrides.
  if (config.model) {
    derive_model_costs(root, config, specs);
    const auto& positions = config.model->positions;
    for (std::uint32_t s = 0; s < stages && !positions.empty(); ++s) {
      // FSDP's gathered units are one buffer per device, as large as its largest chunk's.
      double stage_static = 0;
      double gathered = 0;
      for (std::uint32_t c = 0; c < chunks; ++c) {
        const model::PositionCosts& p = positions[s * chunks + c];
        stage_static += p.static_memory() - p.fsdp_buffer_bytes;
        gathered = std::max(gathered, p.fsdp_buffer_bytes);
      }
      stage_static += gathered;
      for (std::uint32_t c = 0; c < chunks; ++c) {
        PartialCosts& p = per_stage_chunk[s * chunks + c];
        p = derived_costs(positions[s * chunks + c], stage_static,
                          config.model->training.recompute);
        if (!config.model->timed[s]) {
          p.forward = p.backward = p.weight = p.optimizer = {};
          p.forward_host = p.backward_host = p.weight_host = {};
        }
      }
    }
  }
  {
    const std::vector<PartialCosts> shares = chunk_shares(uniform, chunks, per_stage);
    for (std::size_t i = 0; i < per_stage_chunk.size(); ++i) {
      per_stage_chunk[i].apply(shares[i % chunks]);
    }
  }
  for (std::uint32_t s = 0; s < stages; ++s) {
    if (type_of_stage[s] == SIZE_MAX) continue;
    for (std::uint32_t c = 0; c < chunks; ++c) {
      per_stage_chunk[s * chunks + c].apply(type_costs[type_of_stage[s]][c]);
    }
  }

  // Overrides for a stage or a range of stages, optionally one chunk.
  if (costs) {
    if (auto overrides = costs->find("overrides")) {
      for (std::size_t i = 0; i < overrides->array_size(); ++i) {
        const JsonCursor entry = overrides->at(i);
        entry.expect_object(kOverrideSection.keys());
        const auto [first, last] = read_stage_range(entry.at("stages"), stages);
        std::optional<std::uint32_t> chunk;
        if (auto c = entry.find("chunk")) {
          chunk = static_cast<std::uint32_t>(c->as_integer(0, chunks - 1));
          // These hold for a whole stage; one chunk cannot have its own.
          for (const char* field : {"static_memory", "boundary_bytes"}) {
            if (auto x = entry.find(field)) {
              x->fail(fmt::format(
                  "{} is a whole stage's, so an override with \"chunk\" cannot set it (give it "
                  "in an override without \"chunk\")",
                  field));
            }
          }
          if (auto offload = entry.find("offload")) {
            for (const char* field : {"budget", "optimizer", "optimizer_state"}) {
              if (auto x = offload->find(field)) {
                x->fail(fmt::format(
                    "an offload {} is a whole stage's, so an override with \"chunk\" cannot set "
                    "it (give it in an override without \"chunk\")",
                    field));
              }
            }
          }
        }
        const PartialCosts over = read_cost_fields(entry);
        // A chunk's own override is that chunk's cost; a stage-wide one follows costs.per.
        const std::vector<PartialCosts> shares = chunk_shares(over, chunks, per_stage && !chunk);
        for (std::uint32_t s = first; s <= last; ++s) {
          for (std::uint32_t c = 0; c < chunks; ++c) {
            if (!chunk || *chunk == c) per_stage_chunk[s * chunks + c].apply(shares[c]);
          }
        }
      }
    }
  }

  const std::optional<JsonCursor> network = root.find("network");
  std::optional<std::uint32_t> nvlink_domain;  // /network/nvlink_domain
  if (network) {
    network->expect_object(kNetworkSection.keys());
    if (auto x = network->find("p2p_latency")) config.simulation.p2p_latency = x->as_duration();
    if (auto x = network->find("p2p_mode")) {
      const std::string mode = x->as_string();
      if (mode != "async" && mode != "blocking") x->fail_expected("\"async\" or \"blocking\"");
      config.blocking_p2p = mode == "blocking";
    }
    if (auto x = network->find("devices_per_node")) {
      config.simulation.devices_per_node =
          static_cast<std::uint32_t>(read_integer(*x, kNetworkSection.field("devices_per_node")));
    }
    if (auto x = network->find("gpus_per_node")) {
      config.gpus_per_node =
          static_cast<std::uint32_t>(read_integer(*x, kNetworkSection.field("gpus_per_node")));
    }
    if (auto x = network->find("nvlink_domain")) {
      nvlink_domain =
          static_cast<std::uint32_t>(read_integer(*x, kNetworkSection.field("nvlink_domain")));
    }
    if (auto x = network->find("intra_node")) config.simulation.intra_node = read_link(*x);
    if (auto x = network->find("inter_node")) config.simulation.inter_node = read_link(*x);
    if (auto x = network->find("host_link")) {
      const simulator::Link link = read_link(*x);
      for (auto& stage_link : host_link) {
        if (!stage_link) stage_link = link;
      }
    }
  }
  config.nvlink_domain = nvlink_domain.value_or(preset_nvlink_domain(specs, config.gpus_per_node));
  // Stages without a host link take their GPU's (PCIe, or NVLink-C2C on Grace parts).
  for (std::uint32_t s = 0; s < stages; ++s) {
    if (!host_link[s] && specs[s] && specs[s]->host_link_bandwidth > 0) {
      host_link[s] = simulator::Link{.bandwidth = specs[s]->host_link_bandwidth};
    }
  }
  // A model on GPUs: links the network leaves unset take the GPUs' (the slowest stage's):
  // NVLink / Infinity Fabric within a node, the NIC between nodes.
  const bool all_timed =
      config.model &&
      std::all_of(config.model->timed.begin(), config.model->timed.end(), [](bool t) { return t; });
  if (all_timed) {
    const auto slowest = [&](double model::DeviceSpec::*field) {
      double x = 0;
      for (const auto& spec : specs) x = x == 0 ? (*spec).*field : std::min(x, (*spec).*field);
      return x;
    };
    const auto unset = [&](std::string_view link) {
      return !network || !network->has(link) || !network->at(link).has("bandwidth");
    };
    if (unset("intra_node")) {
      config.simulation.intra_node.bandwidth = slowest(&model::DeviceSpec::link_bandwidth);
    }
    if (unset("inter_node")) {
      config.simulation.inter_node.bandwidth = slowest(&model::DeviceSpec::network_bandwidth);
    }
  }
  // Each collective runs over the link its group's ranks span (group_link), unless the
  // network names its own; a field that one leaves out is the placed link's.
  // Megatron-Core's order tp-cp-ep-dp-pp: context-parallel ranks tensor_parallel apart, the
  // gradients' group (data x context ranks) as well.
  const std::uint64_t world =
      std::uint64_t{config.tensor_parallel} * config.data_parallel.ranks() * config.pipeline.stages;
  const bool dp_in_node = group_in_one_node(config.data_parallel.ranks(), config.tensor_parallel,
                                            world, config.nvlink_domain);
  const bool cp_in_node = group_in_one_node(config.context_parallel, config.tensor_parallel, world,
                                            config.nvlink_domain);
  config.context_parallel_link = cp_in_node ? "intra_node" : "inter_node";
  const bool tp_in_node = group_in_one_node(config.tensor_parallel, 1, world, config.nvlink_domain);
  // FSDP's shard groups (fsdp_shard_size ranks, tensor_parallel apart) and, with HSDP, the
  // groups of their replicas (a shard group apart).
  const std::uint32_t fsdp_shard = std::max(config.fsdp_shard_size, 1u);
  const std::uint32_t fsdp_replicas = std::max(config.data_parallel.ranks() / fsdp_shard, 1u);
  const bool fsdp_in_node =
      group_in_one_node(fsdp_shard, config.tensor_parallel, world, config.nvlink_domain);
  const bool replicas_in_node = group_in_one_node(
      fsdp_replicas, config.tensor_parallel * fsdp_shard, world, config.nvlink_domain);
  config.fsdp_link = fsdp_in_node ? "intra_node" : "inter_node";
  std::optional<parallel::NcclNetwork> fsdp_nccl;
  std::optional<parallel::NcclNetwork> replica_nccl;
  simulator::Link dp_link =
      dp_in_node ? config.simulation.intra_node : config.simulation.inter_node;
  simulator::Link tp_link =
      tp_in_node ? config.simulation.intra_node : config.simulation.inter_node;
  config.data_parallel_link = dp_in_node ? "intra_node" : "inter_node";
  config.tensor_parallel_link = tp_in_node ? "intra_node" : "inter_node";
  const auto link_of = [&](bool in_node) {
    return in_node ? config.simulation.intra_node : config.simulation.inter_node;
  };
  // FSDP's shard group runs over /network/data_parallel when it is given.
  simulator::Link shard_link = link_of(fsdp_in_node);
  const simulator::Link replica_link = link_of(replicas_in_node);
  if (network) {
    if (auto x = network->find("data_parallel")) {
      dp_link = read_link(*x, dp_link);
      config.data_parallel_link = "/network/data_parallel";
      config.fsdp_link = "/network/data_parallel";
      shard_link = dp_link;
    }
    if (auto x = network->find("tensor_parallel")) {
      tp_link = read_link(*x, tp_link);
      config.tensor_parallel_link = "/network/tensor_parallel";
    }
  }
  config.data_parallel.latency = dp_link.latency;
  config.data_parallel.bandwidth = dp_link.bandwidth;
  // /network/collectives: "nccl" prices each collective as NCCL chooses its algorithm and
  // protocol, over the links the group spans; the default with /model (links from GPU
  // presets), "ring" (one ring over the placed link) otherwise.
  {
    std::string pricing = config.model ? "nccl" : "ring";
    if (network) {
      if (auto x = network->find("collectives")) {
        pricing = x->as_string();
        if (pricing != "nccl" && pricing != "ring") x->fail_expected("\"nccl\" or \"ring\"");
      }
    }
    TimeNs overhead = parallel::kNcclCallOverhead;
    if (network) {
      if (auto x = network->find("collective_overhead")) {
        if (pricing != "nccl") {
          x->fail(
              "collective_overhead is the fixed time of an NCCL call: it needs "
              "/network/collectives \"nccl\" (the ring has a latency per step only)");
        }
        overhead = x->as_duration();
      }
    }
    config.collectives = pricing;
    if (pricing == "nccl") {
      // The GPUs' generation (the oldest), their scale-up (PCIe if any) and NVLS (if all),
      // over the placed links.
      parallel::NcclNetwork base = gpus_nccl_network(specs);
      base.intra = {config.simulation.intra_node.latency, config.simulation.intra_node.bandwidth};
      base.inter = {config.simulation.inter_node.latency, config.simulation.inter_node.bandwidth};
      base.overhead = overhead;
      // A link /network gives for the group replaces the one it is placed on.
      const auto placed = [&](bool in_node, const simulator::Link& link, std::uint32_t size,
                              std::uint32_t stride) {
        parallel::NcclNetwork net = base;
        (in_node ? net.intra : net.inter) = {link.latency, link.bandwidth};
        net.ranks_per_node = group_ranks_per_node(size, stride, world, config.nvlink_domain);
        return net;
      };
      config.data_parallel.nccl =
          placed(dp_in_node, dp_link, config.data_parallel.ranks(), config.tensor_parallel);
      config.context_parallel_nccl = placed(
          cp_in_node, cp_in_node ? config.simulation.intra_node : config.simulation.inter_node,
          config.context_parallel, config.tensor_parallel);
      config.tensor_parallel_nccl = placed(tp_in_node, tp_link, config.tensor_parallel, 1);
      fsdp_nccl = placed(fsdp_in_node, shard_link, fsdp_shard, config.tensor_parallel);
      replica_nccl = placed(replicas_in_node, replica_link, fsdp_replicas,
                            config.tensor_parallel * fsdp_shard);
      config.expert_parallel_nccl = base;
      config.expert_parallel_nccl->ranks_per_node = ranks_per_domain(config);
    }
    // DeepEP's costs are NCCL's view of the links, and its intra-node kernels need NVLink.
    if (config.moe_dispatcher == MoeDispatcher::DeepEp) {
      const JsonCursor dispatcher = root.at("parallelism").at("moe_dispatcher");
      if (pricing != "nccl") {
        dispatcher.fail(
            "deepep is priced over the links as NCCL reaches them: it needs "
            "/network/collectives \"nccl\"");
      }
      if (config.expert_parallel_nccl->scale_up == ScaleUp::Pcie) {
        dispatcher.fail(
            "deepep moves tokens inside a node over NVLink, but the GPUs join over PCIe: use "
            "\"alltoall\"");
      }
    }
  }
  config.data_parallel.chunks = chunks;
  config.data_parallel.gradient_bytes.assign(std::size_t{stages} * chunks, 0.0);
  config.data_parallel.parameter_bytes.assign(std::size_t{stages} * chunks, 0.0);
  config.data_parallel.optimizer.assign(std::size_t{stages} * chunks, 0);
  config.data_parallel.step_overhead.assign(stages, 0);
  config.expert_traffic.assign(std::size_t{stages} * chunks, ExpertTraffic{});

  // Every stage needs its three durations; build the table and the per-stage extras.
  const JsonCursor where = costs ? *costs : root;
  // Recomputation and offloading errors point at /costs' field when it gives one.
  const auto field_or_costs = [&](std::string_view name) {
    return costs && costs->has(name) ? costs->at(name) : where;
  };
  // With /model and no /costs/recompute, the mode is /training/recompute's.
  const bool from_training = config.model && !(costs && costs->has("recompute")) &&
                             root.has("training") && root.at("training").has("recompute");
  const JsonCursor recompute_where =
      from_training ? root.at("training").at("recompute") : field_or_costs("recompute");
  const JsonCursor offload_where = field_or_costs("offload");
  config.offload = empty_offload(stages, chunks);
  std::vector<double> boundary_bytes(stages, 0.0);
  bool any_bytes = false;
  bool any_a2a_count = false;              // some chunk runs all-to-alls
  std::optional<JsonCursor> a2a_bytes_at;  // where a2a_bytes was given by hand, if anywhere
  for (std::uint32_t s = 0; s < stages; ++s) {
    for (std::uint32_t c = 0; c < chunks; ++c) {
      const PartialCosts& p = per_stage_chunk[s * chunks + c];
      const auto require = [&](const std::optional<TimeNs>& field, const char* name) {
        if (!field) {
          where.fail(
              fmt::format("stage {} chunk {} has no {} cost: give /costs/{}, a device "
                          "type placed on it, an override, or /model with a GPU (/device or "
                          "a device type's preset)",
                          s, c, name, name));
        }
        return *field;
      };
      // Tensor parallelism: each F and each B runs tp_allreduces all-reduces of
      // tp_allreduce_bytes among the tensor-parallel ranks (Megatron-LM: two per layer in
      // each direction, Shoeybi et al. 2019, section 3); W needs none.
      const TimeNs tp =
          tensor_parallel_time(config.tensor_parallel, tp_link, config.tensor_parallel_nccl,
                               config.model && config.model->training.sequence_parallel, p, where);
      // The host floor: a task takes the longer of its GPU time (compute and collectives)
      // and its host's time to issue them; a fused BW, the longer of the two together.
      // Context parallelism: the attention layers' exchanges, in F and in B.
      const TimeNs cp_forward = p.context ? context_parallel_time(config, *p.context, false) : 0;
      const TimeNs cp_backward = p.context ? context_parallel_time(config, *p.context, true) : 0;
      const TimeNs gpu_backward = require(p.backward, "backward") + tp + cp_backward;
      const TimeNs gpu_weight = require(p.weight, "weight");
      parallel::TaskCosts resolved{
          std::max(require(p.forward, "forward") + tp + cp_forward, p.forward_host.value_or(0)),
          std::max(gpu_backward, p.backward_host.value_or(0)),
          std::max(gpu_weight, p.weight_host.value_or(0)),
          p.activation.value_or(0.0),
          p.backward_frees.value_or(0.0),
          p.launch_overhead.value_or(0)};
      if (p.backward_host || p.weight_host) {
        const TimeNs fused = std::max(gpu_backward + gpu_weight,
                                      p.backward_host.value_or(0) + p.weight_host.value_or(0));
        if (fused != resolved.backward + resolved.weight) resolved.backward_weight = fused;
      }
      resolve_recompute(p, s, c, config, tp, recompute_where, resolved);
      // Expert parallelism (DeepSeek-V3 report section 3.2.2; Megatron-LM's MoE
      // all-to-all dispatcher): each MoE layer dispatches its tokens to the experts and
      // combines them back, in F and, mirrored, in each backward; W has none.
      resolved.all_to_all = expert_parallel_time(config, p, where);
      config.expert_traffic[std::size_t{s} * chunks + c] = {
          .bytes = p.a2a_bytes.value_or(0.0),
          .count = p.a2a_per_pass.value_or(0),
          .by_dispatcher = resolved.all_to_all > 0 && by_dispatcher(config, p)};
      resolved.forward_backward = p.forward_backward;
      any_a2a_count = any_a2a_count || p.a2a_per_pass.value_or(0) > 0;
      if (p.a2a_bytes_at && !a2a_bytes_at) a2a_bytes_at = p.a2a_bytes_at;
      // A measured pair runs both tasks: it cannot be shorter than either alone.
      if (p.forward_backward && *p.forward_backward < std::max(resolved.duration(TaskKind::F),
                                                               resolved.duration(TaskKind::B))) {
        p.forward_backward_at.value_or(where).fail(fmt::format(
            "stage {} chunk {}: forward_backward {} ns is shorter than its F ({} ns) or B ({} "
            "ns) alone; a pair runs both",
            s, c, *p.forward_backward, resolved.duration(TaskKind::F),
            resolved.duration(TaskKind::B)));
      }
      resolve_offload(p, s, c, config, offload_where);
      config.data_parallel.gradient_bytes[std::size_t{s} * chunks + c] =
          p.gradient_bytes.value_or(0.0);
      if (config.model && config.model->training.distributed_optimizer) {
        config.data_parallel.parameter_bytes[std::size_t{s} * chunks + c] =
            config.model->positions[std::size_t{s} * chunks + c].dp_parameter_bytes;
      }
      config.data_parallel.optimizer[std::size_t{s} * chunks + c] = p.optimizer.value_or(0);
      if (s == 0 && c == 0) {
        config.costs = parallel::CostTable(resolved);
        config.costs.reserve(stages, chunks);
      }
      config.costs.set(StageId{s}, c, resolved);
      if (c == 0) {
        config.devices[s].static_memory = p.static_memory.value_or(0.0);
        config.data_parallel.step_overhead[s] = p.step_overhead.value_or(0);
        boundary_bytes[s] = p.boundary_bytes.value_or(0.0);
        any_bytes = any_bytes || boundary_bytes[s] > 0;
      }
    }
  }
  if (any_bytes) config.simulation.boundary_bytes = std::move(boundary_bytes);
  if (config.model && config.fsdp_mode != model::Fsdp::None) {
    const auto shard_time = [&](parallel::Collective collective, double bytes) {
      return parallel::collective_time(collective, bytes, fsdp_shard,
                                       {shard_link.latency, shard_link.bandwidth}, fsdp_nccl);
    };
    parallel::FsdpSpec& spec = config.fsdp;
    spec.reshard_after_forward = stages == 1;
    spec.chunks = chunks;
    spec.units.assign(std::size_t{stages} * chunks, 0);
    spec.gather.assign(spec.units.size(), 0);
    spec.reduce.assign(spec.units.size(), 0);
    spec.replica_reduce.assign(spec.units.size(), 0);
    for (std::size_t i = 0; i < spec.units.size(); ++i) {
      const model::PositionCosts& p = config.model->positions[i];
      if (p.fsdp_units == 0) continue;
      const double units = p.fsdp_units;
      spec.units[i] = p.fsdp_units;
      spec.gather[i] = shard_time(parallel::Collective::AllGather, p.fsdp_parameter_bytes / units);
      spec.reduce[i] =
          shard_time(parallel::Collective::ReduceScatter, p.fsdp_gradient_bytes / units);
      spec.replica_reduce[i] = parallel::collective_time(
          parallel::Collective::AllReduce, p.fsdp_gradient_bytes / units / fsdp_shard,
          fsdp_replicas, {replica_link.latency, replica_link.bandwidth}, replica_nccl);
    }
  }
  resolve_gradient_buckets(root, config);
  if (a2a_bytes_at && !any_a2a_count) {
    a2a_bytes_at->fail(
        "a2a_bytes is given but no stage runs an all-to-all: give /costs/a2a_per_pass (2 per "
        "MoE layer), or /model with experts");
  }
  finish_offload(config, host_link, offload_where);

  config.costs.set_p2p_latency(config.simulation.p2p_latency);  // schedulers plan with it
}

}  // namespace perflow::study::detail
