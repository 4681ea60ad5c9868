// `perflow explain CONFIG`: how /model's costs were derived, stage by stage (study::explain).
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "detail/set_option.hpp"
#include "detail/study.hpp"
#include "perflow/core/csv.hpp"
#include "perflow/study/config.hpp"
#include "perflow/study/explain.hpp"

namespace perflow::cli::detail {
namespace {

struct ExplainOptions {
  std::string config;
  std::string format = "text";
  std::vector<std::string> set;
};

std::string cell(const nlohmann::ordered_json& v) {
  return v.is_null() ? std::string() : v.is_string() ? v.get<std::string>() : v.dump();
}

// One row per operator of each stage and chunk (a stage without times has none), then the
// task's totals as the operator "task": what a spreadsheet or pandas groups by.
std::string explain_csv(const nlohmann::ordered_json& explained) {
  const std::vector<std::string> columns = {"stage",     "chunk",        "device_type",
                                            "operator",  "forward_ns",   "backward_ns",
                                            "weight_ns", "forward_flops"};
  std::string out = csv_record(columns);
  for (const auto& p : explained.at("positions")) {
    for (const auto& op : p.at("operators")) {
      out += csv_record(std::vector<std::string>{cell(p["stage"]), cell(p["chunk"]),
                                                 cell(p["device_type"]), cell(op["name"]),
                                                 cell(op["forward_ns"]), cell(op["backward_ns"]),
                                                 cell(op["weight_ns"]), cell(op["forward_flops"])});
    }
    out += csv_record(std::vector<std::string>{
        cell(p["stage"]), cell(p["chunk"]), cell(p["device_type"]), "task", cell(p["forward_ns"]),
        cell(p["backward_ns"]), cell(p["weight_ns"]), ""});
  }
  return out;
}

}  // namespace

void add_explain_command(CLI::App& app) {
  auto options = std::make_shared<ExplainOptions>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Show how /model's costs, memory and traffic were derived, per stage");
  cmd->add_option("config", options->config, "Config file (JSON) with /model")->required();
  cmd->add_option("--format", options->format,
                  "text (default); json: every figure as data; csv: one row per operator")
      ->check(CLI::IsMember({"text", "json", "csv"}));
  add_set_option(*cmd, options->set);
  cmd->callback([options] {
    const Config config = load_config(options->config, parse_overrides(options->set));
    if (options->format == "json") {
      fmt::print("{}\n", explain_json(config).dump(1));
    } else if (options->format == "csv") {
      fmt::print("{}", explain_csv(explain_json(config)));
    } else {
      fmt::print("{}", explain(config));
    }
  });
}

}  // namespace perflow::cli::detail
