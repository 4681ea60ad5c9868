#pragma once

#include "perflow/core/event_graph.hpp"
#include "perflow/simulator/options.hpp"

namespace perflow::simulator {

/// Lowers communication to work: every data dependence u -> v between two devices a != b
/// becomes u -> SEND -> v, where SEND runs on the lane "send a>b" of device a (one lane per
/// directed link, created in (a, b) order) for the bytes' time ceil(bytes / bandwidth) of
/// that dependence (see CommunicationCost), and the latency stays on the edge SEND -> v.
/// Transfers on one link run one at a time in the order their producers appear in their
/// lanes' programs (the order a runtime issues them), so contention is simulated, while the
/// compute lanes go on working (compute/communication overlap). One SEND carries u's result
/// to all of u's consumers on device b. SEND models a matched send/recv pair (NCCL's send
/// and recv kernels run as one transfer), so there is no separate RECV task.
///
/// Original tasks keep their ids; SEND tasks follow, with the producer's stage, microbatch,
/// chunk and iteration. Only dependences that move data are lowered (moves_data): those of
/// a SYNC barrier and those from a SEND or into a RECV (already lowered) are left alone. Without
/// bytes or bandwidth the SENDs take no time and the simulation equals the unlowered one.
EventGraph lower_communication(const EventGraph& graph, const SimulationOptions& options);
/// The same, taking `graph`'s arrays instead of copying them.
EventGraph lower_communication(EventGraph&& graph, const SimulationOptions& options);

/// Blocking point-to-point transfers, as a runtime that waits on its send and receive ops
/// (Megatron-LM's batched isend/irecv followed by a wait): every data dependence u -> v
/// between two devices a != b becomes a SEND on a's compute lane right after u and a RECV on
/// b's compute lane right before v (before the first of u's consumers on b, which all wait
/// for it), each lasting the whole transfer (latency and bytes, see CommunicationCost). The
/// RECV starts once u is done and b's lane is free; the compute lanes do nothing else
/// meanwhile. One SEND and one RECV per (u, receiving device). Original tasks keep their ids;
/// SEND and RECV tasks follow (SEND with u's stage, microbatch, chunk and iteration; RECV
/// with its first consumer's). Needs program order and no lowered or blocking transfers yet
/// (ScheduleError otherwise).
EventGraph lower_blocking_transfers(const EventGraph& graph, const SimulationOptions& options);

}  // namespace perflow::simulator
