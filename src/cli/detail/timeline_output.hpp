#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "output_paths.hpp"
#include "perflow/visualizer/image_format.hpp"

namespace perflow::cli::detail {

/// The timeline options `simulate`, `measured` and `compare-measured` share, at most one of
/// them given: `--timeline FILE` in the format its extension names (.svg, .png, .pdf; any
/// other is a usage error) and `--svg FILE`, always SVG (a .png or .pdf name is a usage
/// error pointing to --timeline).
struct TimelineOutput {
  std::string timeline;
  std::string svg;

  /// Adds --timeline and --svg to `command`; `what` is what they draw ("the timeline").
  void add_options(CLI::App& command, std::string_view what);
  /// The file named and its option; an empty path when neither option is given.
  [[nodiscard]] OutputFile output() const;
  /// The format to write, checked before any work (throws Error, a usage error); nullopt
  /// when neither option is given.
  [[nodiscard]] std::optional<visualizer::ImageFormat> format() const;
};

}  // namespace perflow::cli::detail
