// `perflow explain CONFIG`: how /model's costs were derived, stage by stage (study::explain).
#include <memory>
#include <string>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "detail/study.hpp"
#include "perflow/study/config.hpp"
#include "perflow/study/explain.hpp"

namespace perflow::cli::detail {

void add_explain_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Show how /model's costs, memory and traffic were derived, per stage");
  cmd->add_option("config", *path, "Config file (JSON) with /model")->required();
  cmd->callback([path] { fmt::print("{}", explain(load_config(*path))); });
}

}  // namespace perflow::cli::detail
