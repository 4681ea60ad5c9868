// A config from measured costs: what `perflow costs` writes (measured_config.hpp).
#include "perflow/reader/measured_config.hpp"

#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "perflow/reader/measurement.hpp"

namespace perflow::reader {
namespace {

// A measured quantity times the scale, to the nearest unit.
std::int64_t scaled(std::int64_t value, double scale) {
  return scale == 1.0 ? value : std::llround(static_cast<double>(value) * scale);
}

// What one measured (stage, chunk) puts in the config.
struct ChunkCosts {
  std::array<TimeNs, 3> durations{};  // forward, backward, weight
  std::optional<std::int64_t> activation;
  friend bool operator==(const ChunkCosts&, const ChunkCosts&) = default;
};

// forward, backward, weight of one measured (stage, chunk), as the config runs them.
ChunkCosts config_costs(const StageCost& cost, double scale) {
  const bool split = cost.of(MarkerKind::Backward) || cost.of(MarkerKind::Weight);
  const TimeNs backward = split ? cost.of(MarkerKind::Backward).value_or(0)
                                : cost.of(MarkerKind::FullBackward).value_or(0);
  ChunkCosts out;
  out.durations = {scaled(cost.of(MarkerKind::Forward).value_or(0), scale), scaled(backward, scale),
                   scaled(split ? cost.of(MarkerKind::Weight).value_or(0) : 0, scale)};
  if (cost.activation) out.activation = scaled(*cost.activation, scale);
  return out;
}

void put_costs(nlohmann::ordered_json& object, const ChunkCosts& costs) {
  object["forward"] = exact_duration(costs.durations[0]);
  object["backward"] = exact_duration(costs.durations[1]);
  object["weight"] = exact_duration(costs.durations[2]);
  if (costs.activation) object["activation"] = *costs.activation;
}

nlohmann::ordered_json link_json(const FittedLink& link) {
  nlohmann::ordered_json out;
  out["latency"] = exact_duration(link.latency);
  if (link.bandwidth > 0) out["bandwidth"] = link.bandwidth;
  return out;
}

}  // namespace

MeasuredConfig measured_config(const ExtractedCosts& costs, const MeasuredConfigOptions& options,
                               const std::string& description) {
  MeasuredConfig out;
  const double scale = options.scale;
  const std::uint32_t stage_count = options.stages > 0 ? options.stages : costs.stage_count;
  nlohmann::ordered_json& doc = out.document;
  doc["description"] = description;
  nlohmann::ordered_json pipeline;
  pipeline["schedule"] = options.schedule.empty()
                             ? (costs.chunk_count > 1 ? "interleaved-1f1b" : "1f1b")
                             : options.schedule;
  pipeline["stages"] = stage_count;
  pipeline["microbatches"] = options.microbatches > 0
                                 ? options.microbatches
                                 : std::max<std::uint32_t>(costs.microbatches, 1);
  if (costs.chunk_count > 1) pipeline["chunks"] = costs.chunk_count;
  if (costs.split_backward) pipeline["split_backward"] = true;
  doc["pipeline"] = std::move(pipeline);

  const StageCost& base = costs.stages.front();
  const ChunkCosts uniform = config_costs(base, scale);
  nlohmann::ordered_json section;
  put_costs(section, uniform);
  nlohmann::ordered_json overrides = nlohmann::ordered_json::array();
  std::set<std::pair<std::uint32_t, std::uint32_t>> measured;
  bool any_full_only = false;
  for (const StageCost& cost : costs.stages) {
    measured.emplace(cost.stage, cost.chunk);
    const bool split = cost.of(MarkerKind::Backward) || cost.of(MarkerKind::Weight);
    any_full_only = any_full_only || (!split && cost.of(MarkerKind::FullBackward));
    const ChunkCosts values = config_costs(cost, scale);
    if (values == uniform) continue;
    nlohmann::ordered_json entry;
    entry["stages"] = cost.stage;
    if (costs.chunk_count > 1) entry["chunk"] = cost.chunk;
    put_costs(entry, values);
    overrides.push_back(std::move(entry));
  }
  const MeasuredCommunication& net = costs.network;
  if (costs.launch_overhead && scaled(*costs.launch_overhead, scale) > 0) {
    section["launch_overhead"] = exact_duration(scaled(*costs.launch_overhead, scale));
  }
  if (net.boundary_bytes) section["boundary_bytes"] = *net.boundary_bytes;
  const bool data_parallel = net.gradient_bytes && net.data_parallel > 1;
  const bool tensor_parallel =
      net.tp_allreduce_bytes && net.tensor_parallel > 1 && net.tp_allreduces > 0;
  if (data_parallel) section["gradient_bytes"] = scaled(*net.gradient_bytes, scale);
  if (tensor_parallel) {
    section["tp_allreduce_bytes"] = *net.tp_allreduce_bytes;
    section["tp_allreduces"] = std::max<std::int64_t>(scaled(net.tp_allreduces, scale), 0);
  }
  if (!overrides.empty()) section["overrides"] = std::move(overrides);
  doc["costs"] = std::move(section);

  nlohmann::ordered_json parallelism = nlohmann::ordered_json::object();
  nlohmann::ordered_json network = nlohmann::ordered_json::object();
  if (data_parallel) {
    parallelism["data_parallel"] = net.data_parallel;
    if (net.data_parallel_link) network["data_parallel"] = link_json(*net.data_parallel_link);
  }
  if (tensor_parallel) {
    parallelism["tensor_parallel"] = net.tensor_parallel;
    if (net.tensor_parallel_link) {
      network["tensor_parallel"] = link_json(*net.tensor_parallel_link);
    }
  }
  const bool blocking = net.p2p_blocking.value_or(false) && stage_count > 1;
  if (blocking) network["p2p_mode"] = "blocking";
  if (net.p2p_link && stage_count > 1) network["intra_node"] = link_json(*net.p2p_link);
  if (!parallelism.empty()) doc["parallelism"] = std::move(parallelism);
  if (!network.empty()) doc["network"] = std::move(network);

  if (costs.launch_overhead && scaled(*costs.launch_overhead, scale) > 0) {
    out.notes.push_back(fmt::format(
        "launch_overhead {} per compute task: the lower median of the GPU idle time between a "
        "task's kernels (host-bound launches); the costs are the kernels' busy time without it",
        format_duration(scaled(*costs.launch_overhead, scale))));
  }
  if (blocking) {
    out.notes.push_back(
        "network.p2p_mode \"blocking\": no compute kernel ran while a point-to-point kernel "
        "did, so each transfer occupies the compute lanes of both its devices");
  }
  if (scale != 1.0) {
    out.notes.push_back(fmt::format(
        "{}: durations, launch overhead, activation and gradient bytes measured on the profile "
        "are multiplied by {} (rounded to the nearest ns / byte)",
        options.scale_origin, scale));
  }

  if (any_full_only) {
    out.notes.push_back(
        "where only a full backward was measured, the config's backward is that full backward "
        "(B + W) and its weight is 0: a fused BW costs what was measured, but schedules that "
        "split B from W would treat W as free");
  }
  std::vector<std::string> missing;
  for (std::uint32_t s = 0; s < stage_count; ++s) {
    for (std::uint32_t c = 0; c < costs.chunk_count; ++c) {
      if (!measured.contains({s, c})) {
        missing.push_back(costs.chunk_count > 1 ? fmt::format("{}.{}", s, c)
                                                : fmt::format("{}", s));
      }
    }
  }
  if (!missing.empty() && scale != 1.0) {
    out.notes.push_back(
        fmt::format("{}{} {} {} the scaled costs of stage {}{}",
                    costs.chunk_count > 1 ? "stage.chunk" : "stage", missing.size() == 1 ? "" : "s",
                    fmt::join(missing, ", "), missing.size() == 1 ? "takes" : "take", base.stage,
                    costs.chunk_count > 1 ? fmt::format(" chunk {}", base.chunk) : std::string()));
  } else if (!missing.empty()) {
    out.notes.push_back(
        fmt::format("{} {} not measured: {} the uniform costs (those of stage {}{})",
                    costs.chunk_count > 1 ? "stage.chunk" : "stage", fmt::join(missing, ", "),
                    missing.size() == 1 ? "it gets" : "they get", base.stage,
                    costs.chunk_count > 1 ? fmt::format(" chunk {}", base.chunk) : std::string()));
  }
  return out;
}

}  // namespace perflow::reader
