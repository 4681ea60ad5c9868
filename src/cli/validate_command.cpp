#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "detail/set_option.hpp"
#include "detail/study.hpp"
#include "perflow/study/config.hpp"
#include "perflow/study/summary.hpp"

namespace perflow::cli::detail {

void add_validate_command(CLI::App& app) {
  auto config_path = std::make_shared<std::string>();
  auto set = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Check a config: read it, build its task graph, check it cannot deadlock");
  cmd->add_option("config", *config_path, "Config file (JSON)")->required();
  add_set_option(*cmd, *set);
  cmd->callback([config_path, set] {
    const Config config = load_config(*config_path, parse_overrides(*set));
    const EventGraph graph = build_graph(config);
    fmt::print("{}: ok: {}\n", *config_path, describe_run(config, graph));
  });
}

}  // namespace perflow::cli::detail
