#include "detail/output_paths.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "perflow/core/atomic_file.hpp"
#include "perflow/core/error.hpp"

namespace perflow::cli::detail {
namespace {

namespace fs = std::filesystem;

/// Absolute first: weakly_canonical leaves a relative path whose first part does not exist
/// as it is ("x" and "./x" would differ).
fs::path canonical_path(const fs::path& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  if (ec) return path.lexically_normal();
  fs::path canonical = fs::weakly_canonical(absolute, ec);
  return ec ? absolute : canonical;
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec_a;
  std::error_code ec_b;
  if (fs::exists(a, ec_a) && fs::exists(b, ec_b)) {
    std::error_code ec;
    return fs::equivalent(a, b, ec) && !ec;
  }
  return canonical_path(a) == canonical_path(b);
}

/// An existing regular file the user may not write, or that has no write permission for
/// anyone (root may write any file, and would replace it unasked).
bool is_read_only(const fs::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return false;
  return (status.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 || ::access(path.c_str(), W_OK) != 0;
}

void check_outputs(std::span<const InputFile> inputs, std::span<const OutputFile> outputs,
                   bool refuse_read_only) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const OutputFile& output = outputs[i];
    if (output.path.empty() || is_special_file(output.path)) continue;
    const fs::path destination = output_destination(output.path);  // a symlink loop throws
    std::error_code ec;
    if (fs::is_directory(destination, ec)) {
      throw Error(
          fmt::format("{} '{}' is a directory; name a file to write", output.option, output.path));
    }
    if (refuse_read_only && is_read_only(destination)) {
      throw Error(fmt::format("{} '{}' is read-only; refusing to replace it (--force replaces it)",
                              output.option, output.path));
    }
    for (const InputFile& input : inputs) {
      if (!same_file(output.path, input.path)) continue;
      throw Error(fmt::format(
          "{} '{}' is {} being read{}; refusing to overwrite an input", output.option, output.path,
          input.what,
          output.path == input.path ? std::string() : fmt::format(" ('{}')", input.path)));
    }
    for (std::size_t j = 0; j < i; ++j) {
      const OutputFile& other = outputs[j];
      // By destination: a dangling link and the file it would create are one output too.
      if (other.path.empty() || !same_file(destination, output_destination(other.path))) continue;
      throw Error(fmt::format("{} '{}' and {} '{}' are the same file; give each output its own",
                              other.option, other.path, output.option, output.path));
    }
  }
}

}  // namespace

void OutputRules::add_options(CLI::App& command) {
  command.add_flag("--force", force, "Replace output files even when they are read-only");
}

CLI::Option* output_option(CLI::Option* option) {
  return option->check(CLI::Validator(
      [](const std::string& path) {
        return path.empty() ? std::string("an empty path names no file") : std::string();
      },
      ""));
}

void check_output_paths(std::span<const InputFile> inputs, std::span<const OutputFile> outputs,
                        const OutputRules& rules) {
  check_outputs(inputs, outputs, !rules.force);
}

void check_output_paths(std::span<const InputFile> inputs, std::span<const OutputFile> outputs) {
  check_outputs(inputs, outputs, false);
}

}  // namespace perflow::cli::detail
