#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace perflow {

/// What a task does. F/B/W are forward, input-gradient and weight-gradient work;
/// BW is a fused backward (B then W in one task, as Megatron's 1F1B runs it).
/// The others exist when communication is modelled as work: SEND moves one microbatch's
/// activation or gradient over a link (a matched send/recv pair; with blocking transfers,
/// the sender's side on its compute lane), ALLREDUCE reduces a chunk's gradients across
/// data-parallel replicas, OPT is the optimizer step, RECV is the receiver's side of a
/// blocking transfer (on its compute lane), SYNC a zero-length global barrier between
/// iterations (the synchronous optimizer step's). R recomputes a forward's activations right
/// before the backward that needs them (activation recomputation); D2H copies an activation
/// (or optimizer state) to host memory and H2D copies it back, on the device's host link.
/// A2A is the expert-parallel all-to-all (dispatch and combine) of one F's or backward's MoE
/// layers, on the device's `ep a2a` lane. With the distributed optimizer, REDUCESCATTER
/// reduces a gradient bucket's bytes leaving each replica its shard, and ALLGATHER gathers a
/// bucket's updated parameters back from the shards.
enum class TaskKind : std::uint8_t {
  F,
  B,
  W,
  BW,
  Send,
  AllReduce,
  Optimizer,
  Recv,
  Sync,
  R,
  D2H,
  H2D,
  A2A,
  ReduceScatter,
  AllGather
};

inline constexpr int kTaskKindCount = 15;

/// D2H and H2D: copies over the host link.
constexpr bool is_host_copy(TaskKind kind) {
  return kind == TaskKind::D2H || kind == TaskKind::H2D;
}

/// F, B, W and BW: the model's compute, which schedules order and costs configure.
constexpr bool is_compute(TaskKind kind) { return kind <= TaskKind::BW; }

std::string_view to_string(TaskKind kind);
std::optional<TaskKind> parse_task_kind(std::string_view text);

/// The label used everywhere (orders, SVG, reports): `<kind><microbatch>.<chunk>`, e.g. F3.0.
std::string task_label(TaskKind kind, std::uint32_t microbatch, std::uint32_t chunk);

struct TaskLabel {
  TaskKind kind;
  std::uint32_t microbatch;
  std::uint32_t chunk;
};

/// The most bytes put_task_label writes: a kind name (13 at most, "REDUCESCATTER"; 16 allowed)
/// and three 32-bit numbers with their separators.
inline constexpr std::size_t kMaxTaskLabel = 16 + 3 * 10 + 2;

/// Writes task_label's text at `out` without an allocation, then "@<iteration>" when
/// `with_iteration` (EventGraph::label of a graph holding several iterations); returns the
/// end. What writers of a label per task (reports, traces) call.
inline char* put_task_label(char* out, const TaskLabel& task, bool with_iteration = false,
                            std::uint32_t iteration = 0) {
  static_assert(sizeof(task.microbatch) == 4 && sizeof(task.chunk) == 4,
                "kMaxTaskLabel counts 10 digits a number");
  const std::string_view kind = to_string(task.kind);
  std::memcpy(out, kind.data(), kind.size());
  out = std::to_chars(out + kind.size(), out + kind.size() + 10, task.microbatch).ptr;
  *out++ = '.';
  out = std::to_chars(out, out + 10, task.chunk).ptr;
  if (with_iteration) {
    *out++ = '@';
    out = std::to_chars(out, out + 10, iteration).ptr;
  }
  return out;
}

/// Parses a label written by task_label ("BW12.1"); nullopt if it is not one.
std::optional<TaskLabel> parse_task_label(std::string_view label);

}  // namespace perflow
