#include "perflow/cli/config.hpp"

#include <limits>

#include <fmt/format.h>

#include "perflow/core/error.hpp"
#include "perflow/core/json_cursor.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::cli {
namespace {

constexpr std::int64_t kMaxSize = 1 << 24;

std::uint32_t read_size(const JsonCursor& cursor) {
  return static_cast<std::uint32_t>(cursor.as_integer(1, kMaxSize));
}

void parse_pipeline(const JsonCursor& c, parallel::PipelineSpec& spec) {
  c.expect_object({"schedule", "stages", "microbatches", "chunks", "split_backward"});
  const JsonCursor schedule = c.at("schedule");
  spec.schedule = schedule.as_string();
  const auto& registry = parallel::builtin_schedules();
  if (registry.find(spec.schedule) == nullptr) {
    try {
      (void)registry.get(spec.schedule);
    } catch (const UnknownNameError& e) {
      schedule.fail(e.what());
    }
  }
  spec.stages = read_size(c.at("stages"));
  spec.microbatches = read_size(c.at("microbatches"));
  if (auto chunks = c.find("chunks")) spec.chunks = read_size(*chunks);
  if (auto split = c.find("split_backward")) spec.split_backward = split->as_bool();
}

parallel::TaskCosts parse_costs(const JsonCursor& c) {
  c.expect_object({"forward", "backward", "weight", "activation", "backward_frees"});
  parallel::TaskCosts costs;
  costs.forward = c.at("forward").as_duration();
  costs.backward = c.at("backward").as_duration();
  costs.weight = c.at("weight").as_duration();
  if (auto activation = c.find("activation")) {
    costs.activation = activation->as_number_at_least(0.0);
    if (costs.activation > 1e18) activation->fail_expected("an activation size <= 1e18");
  }
  if (auto frees = c.find("backward_frees")) {
    costs.backward_frees = frees->as_number_at_least(0.0);
    if (costs.backward_frees > 1.0) frees->fail_expected("a fraction in [0, 1]");
  }
  return costs;
}

void parse_network(const JsonCursor& c, simulator::SimulationOptions& options) {
  c.expect_object({"p2p_latency"});
  if (auto latency = c.find("p2p_latency")) options.p2p_latency = latency->as_duration();
}

}  // namespace

Config parse_config(const nlohmann::json& document, const std::string& file) {
  const JsonCursor root(document, file);
  root.expect_object({"description", "pipeline", "costs", "network"});
  Config config;
  config.file = file;
  if (auto description = root.find("description")) config.description = description->as_string();
  parse_pipeline(root.at("pipeline"), config.pipeline);
  config.costs = parallel::CostTable(parse_costs(root.at("costs")));
  if (auto network = root.find("network")) parse_network(*network, config.simulation);
  return config;
}

Config load_config(const std::filesystem::path& path) {
  return parse_config(read_json_file(path), path.string());
}

EventGraph build_graph(const Config& config) {
  try {
    return parallel::build_schedule(config.pipeline, config.costs);
  } catch (const ScheduleError& e) {
    if (e.field().empty()) throw;
    throw ConfigError(config.file, "/pipeline/" + e.field(), e.what());
  }
}

}  // namespace perflow::cli
