#include "perflow/core/task.hpp"

#include <array>

#include <fmt/format.h>

namespace perflow {
namespace {
constexpr std::array<std::string_view, kTaskKindCount> kNames = {"F", "B", "W", "BW"};
}

std::string_view to_string(TaskKind kind) { return kNames[static_cast<std::size_t>(kind)]; }

std::optional<TaskKind> parse_task_kind(std::string_view text) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == text) return static_cast<TaskKind>(i);
  }
  return std::nullopt;
}

std::string task_label(TaskKind kind, std::uint32_t microbatch, std::uint32_t chunk) {
  return fmt::format("{}{}.{}", to_string(kind), microbatch, chunk);
}

}  // namespace perflow
