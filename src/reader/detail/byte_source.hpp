#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>

struct gzFile_s;  // zlib's gzFile, declared so that zlib.h stays out of this header

namespace perflow::reader::detail {

/// A forward-only stream of bytes, read in chunks so that multi-GB profiles never have to fit
/// in memory. `read` fills up to `out.size()` bytes and returns how many; 0 means the end.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::size_t read(std::span<char> out) = 0;
  /// The file named in errors.
  [[nodiscard]] virtual const std::string& name() const = 0;
  /// Bytes delivered so far (decompressed, for gzip).
  [[nodiscard]] std::uint64_t offset() const { return offset_; }

 protected:
  ByteSource() = default;
  ByteSource(const ByteSource&) = default;
  ByteSource& operator=(const ByteSource&) = default;
  std::uint64_t offset_ = 0;
};

/// A plain or gzip file through zlib's gzread, which passes plain files through unchanged.
/// Throws ProfileError naming the file and the decompressed byte offset when the file cannot
/// be opened or the gzip stream is truncated or damaged.
class GzFileSource final : public ByteSource {
 public:
  explicit GzFileSource(const std::filesystem::path& path);
  ~GzFileSource() override;
  GzFileSource(const GzFileSource&) = delete;
  GzFileSource& operator=(const GzFileSource&) = delete;

  std::size_t read(std::span<char> out) override;
  [[nodiscard]] const std::string& name() const override { return name_; }

 private:
  std::string name_;
  gzFile_s* file_ = nullptr;
  bool done_ = false;
};

/// Bytes already in memory (fuzz targets, tests).
class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string_view bytes, std::string name) : bytes_(bytes), name_(std::move(name)) {}
  std::size_t read(std::span<char> out) override;
  [[nodiscard]] const std::string& name() const override { return name_; }

 private:
  std::string_view bytes_;
  std::string name_;
};

}  // namespace perflow::reader::detail
