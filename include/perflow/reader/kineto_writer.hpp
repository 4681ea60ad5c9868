#pragma once

#include <filesystem>
#include <string>

#include "perflow/core/event_graph.hpp"
#include "perflow/core/trace.hpp"

namespace perflow::reader {

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
std::string kineto_trace_json(const EventGraph& graph, const Trace& trace, DeviceId device);

/// Writes `rank-<d>.json` for every device d into `directory` (which must exist), all or
/// none (atomic). Throws IoError.
void write_kineto_traces(const std::filesystem::path& directory, const EventGraph& graph,
                         const Trace& trace);

}  // namespace perflow::reader
