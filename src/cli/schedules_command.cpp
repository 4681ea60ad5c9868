#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "detail/commands.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::cli::detail {

void add_schedules_command(CLI::App& app) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* cmd =
      app.add_subcommand("schedules", "List the pipeline schedules and their constraints");
  cmd->add_option("--format", *format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([format] {
    const auto& registry = parallel::builtin_schedules();
    if (*format == "json") {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& s : registry.all()) {
        list.push_back(
            {{"name", s.name}, {"description", s.description}, {"constraints", s.constraints}});
      }
      fmt::print("{}\n", list.dump(1));
      return;
    }
    fmt::print("{}", parallel::schedule_listing(registry));
  });
}

}  // namespace perflow::cli::detail
