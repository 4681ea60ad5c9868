#include <fmt/format.h>

#include "detail/commands.hpp"
#include "detail/study.hpp"
#include "perflow/study/config_schema.hpp"

namespace perflow::cli::detail {

void add_schema_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "schema", "Print the config format's JSON Schema (draft 2020-12) for editors and scripts");
  cmd->callback([] { fmt::print("{}\n", config_schema().dump(2)); });
}

}  // namespace perflow::cli::detail
