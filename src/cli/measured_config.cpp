#include "detail/measured_config.hpp"

#include <array>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "detail/profile_input.hpp"

namespace perflow::cli::detail {
namespace {

using reader::MarkerKind;

// forward, backward, weight of one measured (stage, chunk), as the config runs them.
std::array<TimeNs, 3> config_costs(const reader::StageCost& cost) {
  const bool split = cost.of(MarkerKind::Backward) || cost.of(MarkerKind::Weight);
  const TimeNs backward = split ? cost.of(MarkerKind::Backward).value_or(0)
                                : cost.of(MarkerKind::FullBackward).value_or(0);
  return {cost.of(MarkerKind::Forward).value_or(0), backward,
          split ? cost.of(MarkerKind::Weight).value_or(0) : 0};
}

void put_costs(nlohmann::ordered_json& object, const std::array<TimeNs, 3>& costs) {
  object["forward"] = exact_duration(costs[0]);
  object["backward"] = exact_duration(costs[1]);
  object["weight"] = exact_duration(costs[2]);
}

}  // namespace

MeasuredConfig measured_config(const reader::ExtractedCosts& costs, const std::string& schedule,
                               const std::string& description) {
  MeasuredConfig out;
  nlohmann::ordered_json& doc = out.document;
  doc["description"] = description;
  nlohmann::ordered_json pipeline;
  pipeline["schedule"] =
      schedule.empty() ? (costs.chunk_count > 1 ? "interleaved-1f1b" : "1f1b") : schedule;
  pipeline["stages"] = costs.stage_count;
  pipeline["microbatches"] = std::max<std::uint32_t>(costs.microbatches, 1);
  if (costs.chunk_count > 1) pipeline["chunks"] = costs.chunk_count;
  if (costs.split_backward) pipeline["split_backward"] = true;
  doc["pipeline"] = std::move(pipeline);

  const reader::StageCost& base = costs.stages.front();
  const std::array<TimeNs, 3> uniform = config_costs(base);
  nlohmann::ordered_json section;
  put_costs(section, uniform);
  nlohmann::ordered_json overrides = nlohmann::ordered_json::array();
  std::set<std::pair<std::uint32_t, std::uint32_t>> measured;
  bool any_full_only = false;
  for (const reader::StageCost& cost : costs.stages) {
    measured.emplace(cost.stage, cost.chunk);
    const bool split = cost.of(MarkerKind::Backward) || cost.of(MarkerKind::Weight);
    any_full_only = any_full_only || (!split && cost.of(MarkerKind::FullBackward));
    const std::array<TimeNs, 3> values = config_costs(cost);
    if (values == uniform) continue;
    nlohmann::ordered_json entry;
    entry["stages"] = cost.stage;
    if (costs.chunk_count > 1) entry["chunk"] = cost.chunk;
    put_costs(entry, values);
    overrides.push_back(std::move(entry));
  }
  if (!overrides.empty()) section["overrides"] = std::move(overrides);
  doc["costs"] = std::move(section);

  if (any_full_only) {
    out.notes.push_back(
        "where only a full backward was measured, the config's backward is that full backward "
        "(B + W) and its weight is 0: a fused BW costs what was measured, but schedules that "
        "split B from W would treat W as free");
  }
  std::vector<std::string> missing;
  for (std::uint32_t s = 0; s < costs.stage_count; ++s) {
    for (std::uint32_t c = 0; c < costs.chunk_count; ++c) {
      if (!measured.contains({s, c})) {
        missing.push_back(costs.chunk_count > 1 ? fmt::format("{}.{}", s, c)
                                                : fmt::format("{}", s));
      }
    }
  }
  if (!missing.empty()) {
    out.notes.push_back(
        fmt::format("{} {} not measured: {} the uniform costs (those of stage {}{})",
                    costs.chunk_count > 1 ? "stage.chunk" : "stage", fmt::join(missing, ", "),
                    missing.size() == 1 ? "it gets" : "they get", base.stage,
                    costs.chunk_count > 1 ? fmt::format(" chunk {}", base.chunk) : std::string()));
  }
  return out;
}

}  // namespace perflow::cli::detail
