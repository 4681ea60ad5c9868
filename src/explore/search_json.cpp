// A search's result as data: the JSON `perflow search -o PLANS.json` writes and Python's
// perflow.search returns, and its plans as CSV (`--format csv`), from one function so that
// they cannot drift apart.
#include "perflow/explore/search_json.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "perflow/core/csv.hpp"

namespace perflow::explore {
namespace {

nlohmann::json optional_number(const std::optional<double>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

// What a plan chose, as both a ranked plan and the nearest miss show it.
nlohmann::json choices_json(const Plan& p) {
  return {{"schedule", p.schedule},
          {"pipeline", p.pipeline},
          {"tensor_parallel", p.tensor_parallel},
          {"data_parallel", p.data_parallel},
          {"micro_batch_size", p.micro_batch_size},
          {"microbatches", p.microbatches},
          {"chunks", p.chunks},
          {"recompute", p.recompute},
          {"offload", p.offload},
          {"expert_parallel", p.expert_parallel},
          {"context_parallel", p.context_parallel},
          {"precision", p.precision},
          {"fsdp", p.fsdp},
          {"fsdp_shard_size", p.fsdp_shard_size},
          {"placement", p.placement},
          {"layers", p.layers},
          {"config", p.config}};
}

nlohmann::json plan_json(const PlanResult& r, std::size_t rank) {
  nlohmann::json out = choices_json(r.plan);
  out["rank"] = rank;
  out["makespan_ns"] = r.outcome.makespan;
  out["bubble_ratio"] = r.outcome.bubble_ratio;
  out["tokens_per_s"] = optional_number(r.outcome.tokens_per_s);
  out["mfu"] = optional_number(r.outcome.mfu);
  out["peak_memory"] = r.outcome.peak_memory;
  out["peak_total_memory"] = r.outcome.peak_total_memory;
  return out;
}

// When no plan fits: the plan closest to fitting and by how much it misses.
nlohmann::json miss_json(const NearestMiss& miss) {
  nlohmann::json out = choices_json(miss.plan);
  out["stage"] = miss.overshoot.device;
  out["needed_memory"] = miss.overshoot.needed;
  out["memory_capacity"] = miss.overshoot.capacity;
  out["lower_bound"] = miss.lower_bound;
  return out;
}

nlohmann::json search_result_json(const SearchResult& result) {
  const SearchCounts& c = result.counts;
  nlohmann::json best = nlohmann::json::array();
  for (std::size_t i = 0; i < result.best.size(); ++i)
    best.push_back(plan_json(result.best[i], i + 1));
  nlohmann::json pareto = nlohmann::json::array();
  for (std::size_t i = 0; i < result.pareto.size(); ++i)
    pareto.push_back(plan_json(result.pareto[i], i + 1));
  nlohmann::json out = {{"considered", c.considered},
                        {"pruned", c.pruned_divisibility + c.pruned_memory},
                        {"pruned_divisibility", c.pruned_divisibility},
                        {"pruned_memory", c.pruned_memory},
                        {"simulated", c.simulated},
                        {"invalid", c.invalid},
                        {"fit", c.fit},
                        {"best", std::move(best)},
                        {"pareto", std::move(pareto)}};
  if (result.nearest_miss) out["nearest_miss"] = miss_json(*result.nearest_miss);
  return out;
}

}  // namespace

std::string search_result_csv(const SearchResult& result) {
  const nlohmann::json document = search_result_json(result);
  // The plan fields but the config, in the order of the docs (nlohmann::json sorts its keys).
  const std::vector<std::string> fields = {"rank",
                                           "schedule",
                                           "pipeline",
                                           "tensor_parallel",
                                           "data_parallel",
                                           "micro_batch_size",
                                           "microbatches",
                                           "chunks",
                                           "recompute",
                                           "offload",
                                           "expert_parallel",
                                           "placement",
                                           "layers",
                                           "makespan_ns",
                                           "bubble_ratio",
                                           "tokens_per_s",
                                           "mfu",
                                           "peak_memory",
                                           "peak_total_memory",
                                           "context_parallel",
                                           "precision",
                                           "fsdp",
                                           "fsdp_shard_size"};
  std::vector<std::string> header = {"list"};
  header.insert(header.end(), fields.begin(), fields.end());
  std::string out = csv_record(header);
  for (const char* list : {"best", "pareto"}) {
    for (const nlohmann::json& plan : document.at(list)) {
      std::vector<std::string> cells = {list};
      for (const std::string& f : fields) {
        const nlohmann::json& v = plan.at(f);
        cells.push_back(v.is_null()     ? std::string()
                        : v.is_string() ? v.get<std::string>()
                                        : v.dump());
      }
      out += csv_record(cells);
    }
  }
  return out;
}

std::string search_result_text(const SearchResult& result) {
  return search_result_json(result).dump(1) + "\n";
}

}  // namespace perflow::explore
