#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "perflow/study/config_overrides.hpp"
#include "study.hpp"

namespace perflow::cli::detail {

/// `--set POINTER=VALUE` (repeatable): a config field overridden by JSON pointer.
void add_set_option(CLI::App& command, std::vector<std::string>& values);

/// The `--set` values read as overrides, in the order given.
std::vector<ConfigOverride> parse_overrides(const std::vector<std::string>& values);

}  // namespace perflow::cli::detail
