#include "perflow/visualizer/image_format.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "perflow/core/error.hpp"

namespace perflow::visualizer {
namespace {

constexpr std::array<ImageFormatInfo, 3> kFormats = {{
    {ImageFormat::Svg, ".svg", "SVG vector image"},
    {ImageFormat::Png, ".png", "PNG raster image"},
    {ImageFormat::Pdf, ".pdf", "PDF document"},
}};

/// ".svg, .png, .pdf"
std::string accepted() {
  std::string list;
  for (const ImageFormatInfo& f : kFormats) {
    if (!list.empty()) list += ", ";
    list += f.extension;
  }
  return list;
}

}  // namespace

std::span<const ImageFormatInfo> image_formats() { return kFormats; }

std::string_view to_string(ImageFormat format) {
  switch (format) {
    case ImageFormat::Svg:
      return "SVG";
    case ImageFormat::Png:
      return "PNG";
    case ImageFormat::Pdf:
      return "PDF";
  }
  return "?";
}

ImageFormat image_format_of(const std::filesystem::path& path, std::string_view option) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const ImageFormatInfo& f : kFormats) {
    if (extension == f.extension) return f.format;
  }
  const std::string named = option.empty() ? fmt::format("'{}'", path.string())
                                           : fmt::format("{} '{}'", option, path.string());
  if (extension.empty()) {
    throw UnknownNameError(
        fmt::format("{}: no file extension to tell the image format by; the extension must be "
                    "one of {}",
                    named, accepted()));
  }
  throw UnknownNameError(
      fmt::format("{}: unknown image format '{}'; the extension must be one "
                  "of {}",
                  named, path.extension().string(), accepted()));
}

}  // namespace perflow::visualizer
