#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

namespace perflow::visualizer {

/// The file formats the renderers write; an output file's extension picks one.
enum class ImageFormat : std::uint8_t { Svg, Png, Pdf };

struct ImageFormatInfo {
  ImageFormat format;
  std::string_view extension;  ///< with the dot, lower case: ".svg"
  std::string_view description;
};

/// Every format, in the order they are listed in messages: SVG, PNG, PDF.
std::span<const ImageFormatInfo> image_formats();

std::string_view to_string(ImageFormat format);

/// The format named by `path`'s extension (any case: ".svg", ".PNG"). Throws
/// UnknownNameError naming the path (after `option`, the command-line option that gave it,
/// when not empty: "--timeline 'x.txt': ...") and the accepted extensions otherwise.
ImageFormat image_format_of(const std::filesystem::path& path, std::string_view option = {});

}  // namespace perflow::visualizer
