#pragma once

#include <vector>

#include "output_paths.hpp"
#include "perflow/reader/measurement.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace perflow::cli::detail {

/// The options every command that reads profiles takes: PROFILE..., --preset | --pattern,
/// --rank-stage R=S (each item one R=S: a comma-separated list is split before).
using ProfileOptions = reader::ProfileRequest;

/// Adds those options to a command (profile_options.cpp).
void add_profile_options(CLI::App& command, ProfileOptions& options);

/// The profiles as inputs for check_output_paths ("a profile").
std::vector<InputFile> profile_inputs(const ProfileOptions& options);

}  // namespace perflow::cli::detail
