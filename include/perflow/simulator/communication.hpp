#pragma once

#include <algorithm>
#include <vector>

#include "perflow/core/event_graph.hpp"
#include "perflow/simulator/options.hpp"

namespace perflow::simulator {

/// What a data dependence between two devices costs:
///   p2p_latency + link.latency + ceil(bytes / link.bandwidth)
/// with the intra- or inter-node link by the two devices' nodes, and bytes the activation at
/// the boundary: for a forward dependence the sending task's stage's boundary_bytes, for a
/// backward one (the gradient of that activation) the receiving task's. Same device: 0.
/// From a SEND task (lowered communication, which spends the bytes' time on its link lane)
/// only the latency is left. Free: a dependence into a RECV (a blocking transfer spends its
/// whole time in its SEND and RECV tasks) and one from or to a SYNC (a barrier, not data).
/// Built once per simulation: per stage and link class it is a table lookup.
class CommunicationCost {
 public:
  CommunicationCost(const EventGraph& graph, const SimulationOptions& options);

  [[nodiscard]] TimeNs operator()(TaskId from, TaskId to) const {
    const DeviceId a = graph_->device(from);
    const DeviceId b = graph_->device(to);
    if (a == b) return 0;
    if (free_edges_) {  // only graphs with RECV or SYNC tasks pay for looking at kinds
      const TaskKind to_kind = graph_->kind(to);
      if (to_kind == TaskKind::Recv || to_kind == TaskKind::Sync ||
          graph_->kind(from) == TaskKind::Sync) {
        return 0;
      }
    }
    if (constant_) return base_[0];  // no bytes, one node: every transfer costs the same
    const bool same_node = this->same_node(a, b);
    const TaskKind from_kind = graph_->kind(from);
    if (from_kind == TaskKind::Send) return base_[same_node ? 0 : 1];
    const bool forward = from_kind == TaskKind::F;
    const std::uint32_t stage = graph_->stage(forward ? from : to).value;
    const auto& table = same_node ? intra_ : inter_;
    return stage < table.size() ? table[stage] : base_[same_node ? 0 : 1];
  }

  /// The bytes' part alone, ceil(bytes / bandwidth), of the dependence from -> to: what a
  /// lowered SEND task spends on its link.
  [[nodiscard]] TimeNs bytes_time(TaskId from, TaskId to) const {
    const DeviceId a = graph_->device(from);
    const DeviceId b = graph_->device(to);
    if (a == b) return 0;
    return std::max<TimeNs>((*this)(from, to) - base_[same_node(a, b) ? 0 : 1], 0);
  }

  [[nodiscard]] bool same_node(DeviceId a, DeviceId b) const {
    return devices_per_node_ == 0 || a.value / devices_per_node_ == b.value / devices_per_node_;
  }

  /// The transfer time of `bytes` over one link class (exposed for tests and reports).
  /// Throws ScheduleError if it would exceed 1e18 ns.
  static TimeNs transfer(const Link& link, TimeNs p2p_latency, double bytes);

  /// The longest single transfer this model can charge.
  [[nodiscard]] TimeNs max_transfer() const;

 private:
  const EventGraph* graph_;
  std::uint32_t devices_per_node_;
  std::vector<TimeNs> intra_;  // per stage
  std::vector<TimeNs> inter_;
  TimeNs base_[2];  // stages without boundary bytes: intra, inter
  bool constant_;
  bool free_edges_;  // the graph has RECV or SYNC tasks, whose dependences are free
};

/// Whether the dependence from -> to moves a result between devices: a data dependence
/// across devices that is not a SYNC barrier's (which moves nothing) nor a transfer's own
/// (from a SEND, into a RECV: already lowered). What lowering turns into transfer tasks.
bool moves_data(const EventGraph& graph, TaskId from, const Adjacent& to);

/// Throws ScheduleError if the graph's work plus a transfer on every edge could overflow the
/// simulator's integer nanoseconds (about 146 years): a guard against unit mistakes.
void check_time_range(const EventGraph& graph, const CommunicationCost& comm);

}  // namespace perflow::simulator
