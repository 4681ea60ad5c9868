#include "detail/output_paths.hpp"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::cli::detail {
namespace {

namespace fs = std::filesystem;

/// Exists and is a device, FIFO or socket: written in place, never replaced.
bool is_special_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  return !ec && fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status);
}

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

}  // namespace

void check_output_paths(std::span<const InputFile> inputs, std::span<const OutputFile> outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const OutputFile& output = outputs[i];
    if (output.path.empty() || is_special_file(output.path)) continue;
    for (const InputFile& input : inputs) {
      if (!same_file(output.path, input.path)) continue;
      throw Error(fmt::format(
          "{} '{}' is {} being read{}; refusing to overwrite an input", output.option, output.path,
          input.what,
          output.path == input.path ? std::string() : fmt::format(" ('{}')", input.path)));
    }
    for (std::size_t j = 0; j < i; ++j) {
      const OutputFile& other = outputs[j];
      if (other.path.empty() || !same_file(output.path, other.path)) continue;
      throw Error(fmt::format("{} '{}' and {} '{}' are the same file; give each output its own",
                              other.option, other.path, output.option, output.path));
    }
  }
}

}  // namespace perflow::cli::detail
