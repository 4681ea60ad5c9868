#include "detail/json_stream.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <span>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fmt/format.h>

#include "perflow/reader/profile_error.hpp"

namespace perflow::reader::detail {

namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

bool ends_scalar(char c) { return is_space(c) || c == ',' || c == '}' || c == ']' || c == ':'; }

// Bytes that matter outside strings; everything else is skipped in a tight loop.
constexpr std::array<bool, 256> kStructural = [] {
  std::array<bool, 256> table{};
  for (const char c : {'"', '{', '}', '[', ']'}) table[static_cast<unsigned char>(c)] = true;
  return table;
}();

// Bytes that end a run of string content.
constexpr std::array<bool, 256> kStringStop = [] {
  std::array<bool, 256> table{};
  table[static_cast<unsigned char>('"')] = true;
  table[static_cast<unsigned char>('\\')] = true;
  return table;
}();

std::string quoted_char(char c) { return fmt::format("'{}'", c); }

// The first '"' or '\\' in [p, e), or e. Kernel names and call stacks are long strings, so on
// x86-64 16 bytes are tested at a time.
const char* find_string_stop(const char* p, const char* const e) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (; e - p >= 16; p += 16) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int stops = _mm_movemask_epi8(
        _mm_or_si128(_mm_cmpeq_epi8(block, quote), _mm_cmpeq_epi8(block, backslash)));
    if (stops != 0) return p + std::countr_zero(static_cast<unsigned>(stops));
  }
#endif
  while (p < e && !kStringStop[static_cast<unsigned char>(*p)]) ++p;
  return p;
}

}  // namespace

JsonStream::JsonStream(ByteSource& source, std::size_t chunk_bytes)
    : source_(source),
      capacity_(std::max<std::size_t>(chunk_bytes, 1)),
      buffer_(std::make_unique_for_overwrite<char[]>(capacity_)) {}

// Moves the bytes still needed (from the mark, else from the cursor) to the front, grows the
// buffer if they fill it, and reads more. False at the end of the input.
bool JsonStream::fill() {
  const std::size_t keep_from = mark_ != kNoMark ? mark_ : pos_;
  if (keep_from > 0) {
    std::memmove(buffer_.get(), buffer_.get() + keep_from, end_ - keep_from);
    base_ += keep_from;
    end_ -= keep_from;
    pos_ -= keep_from;
    if (mark_ != kNoMark) mark_ -= keep_from;
  }
  if (end_ == capacity_) {
    const std::size_t grown = capacity_ * 2;
    auto buffer = std::make_unique_for_overwrite<char[]>(grown);
    std::memcpy(buffer.get(), buffer_.get(), end_);
    buffer_ = std::move(buffer);
    capacity_ = grown;
  }
  const std::size_t n = source_.read(std::span<char>(buffer_.get() + end_, capacity_ - end_));
  end_ += n;
  return n > 0;
}

int JsonStream::peek() {
  for (;;) {
    while (pos_ < end_ && is_space(buffer_[pos_])) ++pos_;
    if (pos_ < end_) return static_cast<unsigned char>(buffer_[pos_]);
    if (!fill()) return kEnd;
  }
}

void JsonStream::fail(std::uint64_t at, std::string_view pointer, std::int64_t index,
                      const std::string& message) const {
  const std::string where =
      index >= 0 ? fmt::format("{}/{}", pointer, index) : std::string(pointer);
  throw ProfileError(name(), fmt::format("byte {}", at),
                     where.empty() ? message : fmt::format("{}: {}", where, message));
}

JsonStream::Value JsonStream::value(bool keep, std::string_view pointer, std::int64_t index) {
  const std::uint64_t start = offset();
  mark_ = keep ? pos_ : kNoMark;
  closers_.clear();
  bool in_string = false;
  bool escaped = false;  // the previous string byte was a backslash
  const char first = buffer_[pos_];
  if (first == '"') {
    in_string = true;
    ++pos_;
  } else if (first == '{' || first == '[') {
    closers_.push_back(first == '{' ? '}' : ']');
    ++pos_;
  } else {
    for (;;) {
      while (pos_ < end_ && !ends_scalar(buffer_[pos_])) ++pos_;
      if (pos_ < end_ || !fill()) break;
    }
    in_string = false;
  }
  bool done = first != '"' && closers_.empty();
  while (!done) {
    if (pos_ == end_ && !fill()) {
      fail(offset(), pointer, index,
           fmt::format("expected {} to close the value that starts at byte {}, found the end of "
                       "the file (is it truncated?)",
                       in_string ? std::string("'\"'") : quoted_char(closers_.back()), start));
    }
    const char* p = buffer_.get() + pos_;
    const char* const e = buffer_.get() + end_;
    if (in_string) {
      if (escaped) {
        escaped = false;
        ++p;
      }
      p = find_string_stop(p, e);
      if (p < e) {
        if (*p == '\\') {
          escaped = true;
          ++p;
          if (p < e) {
            escaped = false;
            ++p;
          }
        } else {
          in_string = false;
          ++p;
          done = closers_.empty();
        }
      }
    } else {
      for (; p < e; ++p) {
        const char c = *p;
        if (!kStructural[static_cast<unsigned char>(c)]) continue;
        if (c == '"') {
          in_string = true;
          ++p;
          break;
        }
        if (c == '{' || c == '[') {
          closers_.push_back(c == '{' ? '}' : ']');
          continue;
        }
        if (c != closers_.back()) {
          pos_ = static_cast<std::size_t>(p - buffer_.get());
          fail(offset(), pointer, index,
               fmt::format("expected {} to close the value that starts at byte {}, found {}",
                           quoted_char(closers_.back()), start, quoted_char(c)));
        }
        closers_.pop_back();
        if (closers_.empty()) {
          ++p;
          done = true;
          break;
        }
      }
    }
    pos_ = static_cast<std::size_t>(p - buffer_.get());
  }
  Value result{{}, start};
  if (keep) result.text = std::string_view(buffer_.get() + mark_, pos_ - mark_);
  mark_ = kNoMark;
  return result;
}

std::string JsonStream::found() {
  if (peek() == kEnd) return "the end of the file";
  constexpr std::size_t kExcerpt = 24;
  if (end_ - pos_ < kExcerpt) {
    mark_ = pos_;
    while (end_ - mark_ < kExcerpt && fill()) {
    }
    pos_ = mark_;
    mark_ = kNoMark;
  }
  std::string text = "'";
  const std::size_t stop = std::min(end_, pos_ + kExcerpt);
  for (std::size_t i = pos_; i < stop; ++i) {
    const auto c = static_cast<unsigned char>(buffer_[i]);
    if (c == '\n' || c == '\r') break;
    if (c < 0x20 || c >= 0x7f) {
      text += fmt::format("\\x{:02x}", c);
    } else {
      text += static_cast<char>(c);
    }
  }
  if (stop == pos_ + kExcerpt) text += "...";
  return text + "'";
}

}  // namespace perflow::reader::detail
