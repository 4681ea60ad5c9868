#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace perflow::study {

/// What a launch line or a job file cannot say: the GPUs and how many run the job.
struct ImportOptions {
  std::string gpu;                             ///< a device preset (`perflow devices`)
  std::optional<std::uint32_t> nodes;          ///< nodes of the job
  std::optional<std::uint32_t> gpus_per_node;  ///< default 8 (or torchrun's --nproc_per_node)
  std::optional<std::uint32_t> vocab;          ///< the tokenizer's vocabulary, unpadded, when
                                               ///< the flags do not give it
};

/// A `perflow simulate` config written from another tool's settings, and what did not fit.
struct ImportResult {
  nlohmann::ordered_json config;      ///< deterministic: same input, same bytes
  std::vector<std::string> unknown;   ///< flags or keys not recognised, as written
  std::vector<std::string> warnings;  ///< settings whose feature PerFlow does not model
};

/// A config from Megatron-LM's command-line flags (megatron/training/arguments.py): model
/// shape, parallelism, batch, precision, recomputation, distributed optimizer and overlap.
/// `--flag value` and `--flag=value` both work; torchrun's --nproc_per_node and --nnodes
/// stand in for gpus_per_node and nodes when those are not given. `source` names where the
/// flags came from in messages (an arguments file; empty: the command line). Throws
/// OptionError for a missing gpu or nodes, Error for a malformed or inconsistent flag.
ImportResult import_megatron(std::span<const std::string> args, const ImportOptions& options,
                             std::string_view source = {});

/// The arguments in a file of flags, split as a shell would split a simple command line:
/// whitespace separates words, '...' and "..." quote, `#` starts a comment, a backslash
/// at a line's end continues it. Throws Error naming the file if it cannot be read or a
/// quote is not closed.
std::vector<std::string> read_args_file(const std::filesystem::path& path);

/// A config from a torchtitan job file (TOML; torchtitan/config/job_config.py): [model]
/// name and flavor, [training] batch and sequence, [parallelism] degrees and pipeline
/// schedule, [activation_checkpoint], float8. Throws FormatError for bad TOML, Error for a
/// setting PerFlow cannot import (an unknown model flavor), OptionError for a missing gpu
/// or nodes.
ImportResult import_torchtitan(const std::filesystem::path& job_file, const ImportOptions& options);
/// The same from the file's text; `source` names it in messages.
ImportResult import_torchtitan_text(std::string_view toml, const std::string& source,
                                    const ImportOptions& options);

}  // namespace perflow::study
