// `perflow schema [config|sweep|search]`: a file format's JSON Schema, or (config, --format
// markdown) its reference, docs/config-reference.md.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "detail/commands.hpp"
#include "detail/study.hpp"
#include "perflow/core/error.hpp"
#include "perflow/explore/file_schema.hpp"
#include "perflow/study/config_schema.hpp"

namespace perflow::cli::detail {

void add_schema_command(CLI::App& app) {
  struct Options {
    std::string kind = "config";
    std::string format = "json";
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "schema",
      "Print a file format's JSON Schema (draft 2020-12) for editors and scripts: config "
      "(the default), sweep or search files");
  cmd->add_option("kind", options->kind, "config (default), sweep or search")
      ->check(CLI::IsMember({"config", "sweep", "search"}));
  cmd->add_option("--format", options->format,
                  "json (default), or markdown: the config reference (docs/config-reference.md)")
      ->check(CLI::IsMember({"json", "markdown"}));
  cmd->callback([options] {
    if (options->format == "markdown") {
      if (options->kind != "config") {
        throw Error(
            fmt::format("--format markdown is the config reference; the {} schema is "
                        "JSON only",
                        options->kind));
      }
      fmt::print("{}", study::config_reference_markdown());
      return;
    }
    const nlohmann::ordered_json schema = options->kind == "sweep"    ? explore::sweep_schema()
                                          : options->kind == "search" ? explore::search_schema()
                                                                      : study::config_schema();
    fmt::print("{}\n", schema.dump(2));
  });
}

}  // namespace perflow::cli::detail
