#include "perflow/core/task.hpp"

#include <array>
#include <charconv>

namespace perflow {
namespace {
constexpr std::array<std::string_view, kTaskKindCount> kNames = {
    "F",    "B", "W",   "BW",  "SEND", "ALLREDUCE",     "OPT",      "RECV",
    "SYNC", "R", "D2H", "H2D", "A2A",  "REDUCESCATTER", "ALLGATHER"};
}

std::string_view to_string(TaskKind kind) { return kNames[static_cast<std::size_t>(kind)]; }

std::optional<TaskKind> parse_task_kind(std::string_view text) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == text) return static_cast<TaskKind>(i);
  }
  return std::nullopt;
}

std::optional<TaskLabel> parse_task_label(std::string_view label) {
  // A kind before any kind it starts with: "BW" before "B", "RECV" before "R".
  std::optional<TaskKind> kind;
  for (const TaskKind k :
       {TaskKind::AllReduce, TaskKind::AllGather, TaskKind::ReduceScatter, TaskKind::Send,
        TaskKind::Optimizer, TaskKind::Recv, TaskKind::Sync, TaskKind::D2H, TaskKind::H2D,
        TaskKind::A2A, TaskKind::BW, TaskKind::F, TaskKind::B, TaskKind::W, TaskKind::R}) {
    if (label.starts_with(to_string(k))) {
      kind = k;
      label.remove_prefix(to_string(k).size());
      break;
    }
  }
  if (!kind) return std::nullopt;
  const auto number = [&label](std::uint32_t& out) {
    const auto [end, error] = std::from_chars(label.data(), label.data() + label.size(), out);
    if (error != std::errc() || end == label.data()) return false;
    label.remove_prefix(static_cast<std::size_t>(end - label.data()));
    return true;
  };
  TaskLabel parsed{*kind, 0, 0};
  if (!number(parsed.microbatch) || !label.starts_with('.')) return std::nullopt;
  label.remove_prefix(1);
  if (!number(parsed.chunk) || !label.empty()) return std::nullopt;
  return parsed;
}

std::string task_label(TaskKind kind, std::uint32_t microbatch, std::uint32_t chunk) {
  char text[kMaxTaskLabel];
  return {text, put_task_label(text, {kind, microbatch, chunk})};
}

}  // namespace perflow
