#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "byte_source.hpp"

namespace perflow::reader::detail {

/// A forward cursor over JSON text that arrives in chunks from a ByteSource. It finds where
/// each value ends (tracking strings, escapes and bracket nesting across chunk boundaries)
/// without parsing it, so that a huge top-level array can be handed over one element at a
/// time to a real parser. Memory is one chunk plus the largest value kept.
class JsonStream {
 public:
  explicit JsonStream(ByteSource& source, std::size_t chunk_bytes = 4U << 20);

  static constexpr int kEnd = -1;

  /// The next byte that is not JSON whitespace, without consuming it; kEnd at the end.
  int peek();
  /// Consumes the byte peek() returned.
  void advance() { ++pos_; }
  /// Offset in the (decompressed) input of the byte peek() returned.
  [[nodiscard]] std::uint64_t offset() const { return base_ + pos_; }

  struct Value {
    std::string_view text;  ///< empty unless kept
    std::uint64_t offset = 0;
  };
  /// Scans the value that starts at the byte peek() returned: an object, array or string
  /// to its closing byte, anything else up to the next delimiter. If `keep`, returns its
  /// text, contiguous and valid until the next call on the stream;
  /// otherwise the bytes are dropped as they are passed, so a huge value costs no memory.
  /// `pointer` (plus `/index` if index >= 0) names the value in errors.
  Value value(bool keep, std::string_view pointer, std::int64_t index = -1);

  /// A short, printable excerpt of what follows the cursor, for "found ..." in errors.
  std::string found();

  [[nodiscard]] const std::string& name() const { return source_.name(); }

 private:
  static constexpr std::size_t kNoMark = ~std::size_t{0};
  bool fill();
  [[noreturn]] void fail(std::uint64_t at, std::string_view pointer, std::int64_t index,
                         const std::string& message) const;

  ByteSource& source_;
  std::size_t capacity_;
  std::unique_ptr<char[]> buffer_;
  std::size_t end_ = 0;         // valid bytes are [0, end_)
  std::size_t pos_ = 0;         // the cursor
  std::size_t mark_ = kNoMark;  // start of a value being kept across fills
  std::uint64_t base_ = 0;      // input offset of buffer_[0]
  std::vector<char> closers_;   // expected closing brackets of the open containers
};

}  // namespace perflow::reader::detail
