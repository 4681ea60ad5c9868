#pragma once

#include <span>
#include <string_view>

#include <CLI/CLI.hpp>

namespace perflow::cli::detail {

/// A file a command reads; `what` names it in messages: "the config", "a profile".
struct InputFile {
  std::string_view what;
  std::string_view path;
};

/// A file a command writes and the option that names it ("--report"); an empty path is an
/// option not given.
struct OutputFile {
  std::string_view option;
  std::string_view path;
};

/// What every command that writes files takes (docs/cli.md "Output files"): `--force`,
/// without which an existing output that is read-only is refused.
struct OutputRules {
  bool force = false;

  /// Adds --force to `command`.
  void add_options(CLI::App& command);
};

/// Makes an output option refuse an empty path (`--report ''`), which would otherwise read
/// as the option not given; returns `option`.
CLI::Option* output_option(CLI::Option* option);

/// Refuses, before any work, an output that is one of the inputs being read
/// (`--report 'in.json' is the config being read; refusing to overwrite an input`), two
/// outputs that are the same file, an output that is a directory and one that is read-only
/// (unless `rules.force`); throws Error (a usage error), or IoError for a symlink loop.
/// Files that exist are compared by identity (symlinks, hard links, `./x` and `x`), others by
/// their canonical path. An output that exists and is not a regular file (`/dev/null`, a
/// FIFO) is never overwritten, so it is not refused.
void check_output_paths(std::span<const InputFile> inputs, std::span<const OutputFile> outputs,
                        const OutputRules& rules);
/// The same without OutputRules: a read-only output is replaced (for a command that has no
/// --force yet).
void check_output_paths(std::span<const InputFile> inputs, std::span<const OutputFile> outputs);

}  // namespace perflow::cli::detail
