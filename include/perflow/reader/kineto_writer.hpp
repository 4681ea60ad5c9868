#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"

namespace perflow::reader {

/// What a runtime adds to the boxes, written so that a run with launch overhead and real
/// transfers reads back (through `perflow costs`) to a config that reproduces it. The
/// default options write the layout of kineto_trace_json.
struct KinetoWriteOptions {
  /// The launch overhead folded into every F / B / W / BW task's duration
  /// (TaskCosts::launch_overhead; one value for the whole run). When positive, a task's
  /// kernels cover its duration less this, with one GPU idle gap of exactly this length
  /// between its first kernel and the others, so cost extraction measures the task's busy
  /// time as its cost and the gap as `launch_overhead`. No compute task may be shorter.
  TimeNs launch_overhead = 0;
  /// The bytes of one point-to-point transfer (the config's uniform boundary_bytes). When
  /// given, the run's own transfers replace the 500 ns NCCL kernel after every task, each an
  /// NCCL SendRecv kernel whose `In msg nelems` and `dtype` (BFloat16 for an even size, else
  /// Byte) give these bytes:
  /// - blocking transfers (the SEND and RECV tasks of lower_blocking_transfers): a kernel
  ///   over the task's [start, finish] on the compute stream, serialized with compute;
  /// - asynchronous transfers (a graph without SEND / RECV tasks): per producer and device
  ///   it sends to, a kernel over [producer's finish, + `transfer_time`] on the NCCL stream
  ///   of the sender and of the receiver, overlapping compute.
  /// ProfilerStep#1 then also covers the transfers.
  std::optional<std::int64_t> transfer_bytes;
  /// The time of one asynchronous transfer (latency + bytes / bandwidth), with transfer_bytes.
  TimeNs transfer_time = 0;
};

/// A simulated device as the PyTorch profiler would have recorded it on that rank: a
/// Kineto Chrome-trace JSON (one ProfilerStep#1) in which every F / B / W / BW task of the
/// device's compute lane is a torch.distributed.pipelining marker `PP:<stage><F|I|W|B><mb>`
/// (B is written I, the input gradient; BW is written B, the full backward) on the main CPU
/// thread, whose GPU work is kernels covering exactly the task's [start, finish] on two
/// compute streams (launched from the main thread for F, from an autograd thread for
/// backward work, as PyTorch does), plus one NCCL send/recv kernel after it. The stage in
/// the marker is chunk * devices + device (torch numbers stages globally).
///
/// Reading it back and extracting costs with the torch-pipelining preset gives each task's
/// duration exactly. Times are relative to `baseTimeNanoseconds`; the trace must end within
/// 10^12 ns (so microseconds with 3 decimals stay exact in a double).
///
/// Optimizer (OPT), all-reduce and barrier (SYNC) tasks and lowered SENDs on link lanes are
/// not written: an optimizer step, costs.step_overhead and data parallelism are not part of
/// the round trip, which covers one iteration.
std::string kineto_trace_json(const EventGraph& graph, const Trace& trace, DeviceId device,
                              const KinetoWriteOptions& options = {});

/// Writes `rank-<d>.json` for every device d into `directory` (which must exist), all or
/// none (atomic). Throws IoError.
void write_kineto_traces(const std::filesystem::path& directory, const EventGraph& graph,
                         const Trace& trace, const KinetoWriteOptions& options = {});

}  // namespace perflow::reader
