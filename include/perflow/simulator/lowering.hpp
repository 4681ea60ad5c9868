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
/// Original tasks keep their ids; SEND tasks follow, with the producer's stage, microbatch
/// and chunk. Dependences from SEND tasks (an already lowered graph) are left alone. Without
/// bytes or bandwidth the SENDs take no time and the simulation equals the unlowered one.
EventGraph lower_communication(const EventGraph& graph, const SimulationOptions& options);

}  // namespace perflow::simulator
