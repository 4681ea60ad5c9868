#include "detail/timeline_output.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::cli::detail {

void TimelineOutput::add_options(CLI::App& command, std::string_view what) {
  CLI::Option* by_extension = output_option(command.add_option(
      "--timeline", timeline,
      fmt::format("Write {} to this file; its extension picks the format: .svg, .png or .pdf",
                  what)));
  CLI::Option* as_svg = output_option(command.add_option(
      "--svg", svg,
      fmt::format("Write {} to this file as SVG (for PNG or PDF use --timeline)", what)));
  by_extension->excludes(as_svg);
}

OutputFile TimelineOutput::output() const {
  if (!svg.empty()) return {"--svg", svg};
  return {"--timeline", timeline};
}

std::optional<visualizer::ImageFormat> TimelineOutput::format() const {
  if (!timeline.empty()) return visualizer::image_format_of(timeline, "--timeline");
  if (svg.empty()) return std::nullopt;
  std::string extension = std::filesystem::path(svg).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const visualizer::ImageFormatInfo& info : visualizer::image_formats()) {
    if (info.format != visualizer::ImageFormat::Svg && extension == info.extension) {
      throw Error(fmt::format("--svg '{}' always writes SVG; for a {} use --timeline '{}'", svg,
                              visualizer::to_string(info.format), svg));
    }
  }
  return visualizer::ImageFormat::Svg;
}

}  // namespace perflow::cli::detail
