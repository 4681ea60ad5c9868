#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace perflow::reader::detail {

/// A whole file's content, decompressed if it is gzip (zlib's gzread passes plain files
/// through), followed by `padding` zero bytes that are not part of the text (simdjson reads
/// past the end).
struct DecompressedFile {
  std::string bytes;  ///< the text, then the padding
  std::size_t size = 0;

  [[nodiscard]] std::string_view text() const { return {bytes.data(), size}; }
};

/// Reads the file. Throws ProfileError when it cannot be opened, and for a damaged or cut-off
/// gzip stream: "file:byte N: expected the rest of the gzip stream, found <zlib's reason>",
/// N being the number of bytes that decompressed.
DecompressedFile read_decompressed(const std::filesystem::path& path, std::size_t padding = 0);

}  // namespace perflow::reader::detail
