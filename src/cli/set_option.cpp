#include "detail/set_option.hpp"

namespace perflow::cli::detail {

void add_set_option(CLI::App& command, std::vector<std::string>& values) {
  command
      .add_option("--set", values,
                  "Override a config field by JSON pointer, e.g. --set /pipeline/stages=16 "
                  "(VALUE is JSON; a bare word is a string); repeatable")
      ->type_name("POINTER=VALUE")
      ->allow_extra_args(false);
}

std::vector<ConfigOverride> parse_overrides(const std::vector<std::string>& values) {
  std::vector<ConfigOverride> overrides;
  overrides.reserve(values.size());
  for (const std::string& value : values) overrides.push_back(parse_override(value));
  return overrides;
}

}  // namespace perflow::cli::detail
