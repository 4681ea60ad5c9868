#pragma once

#include <span>
#include <string_view>

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

/// Refuses, before any work, an output that is one of the inputs being read
/// (`--report 'in.json' is the config being read; refusing to overwrite an input`) and two
/// outputs that are the same file; throws Error (a usage error). Files that exist are
/// compared by identity (symlinks, hard links, `./x` and `x`), others by their canonical
/// path. An output that exists and is not a regular file (`/dev/null`, a FIFO) is never
/// overwritten, so it is not refused.
void check_output_paths(std::span<const InputFile> inputs, std::span<const OutputFile> outputs);

}  // namespace perflow::cli::detail
