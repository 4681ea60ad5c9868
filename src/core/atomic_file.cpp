#include "perflow/core/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <memory>
#include <system_error>

#include <fmt/format.h>
#include <unistd.h>

#include "perflow/core/error.hpp"

namespace perflow {

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  // Same directory as the target, so the final rename never crosses file systems.
  temp_ = target_;
  temp_ += fmt::format(".tmp{}", static_cast<long>(::getpid()));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    std::error_code ignored;
    std::filesystem::remove(temp_, ignored);
  }
}

void AtomicFile::commit() {
  std::error_code ec;
  std::filesystem::rename(temp_, target_, ec);
  if (ec) {
    throw IoError(fmt::format("cannot write '{}': {}", target_.string(), ec.message()));
  }
  committed_ = true;
}

namespace {

void write_temporary(const AtomicFile& file, const std::filesystem::path& path,
                     std::string_view content) {
  std::ofstream out(file.temp_path(), std::ios::binary | std::ios::trunc);
  if (!out) {
    const int error = errno;
    throw IoError(fmt::format("cannot write '{}': {}", path.string(),
                              std::generic_category().message(error)));
  }
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();  // a full disk may only show here
  if (!out) throw IoError(fmt::format("cannot write '{}'", path.string()));
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  AtomicFile file(path);
  write_temporary(file, path, content);
  file.commit();
}

void write_files_atomically(
    std::span<const std::pair<std::filesystem::path, std::string_view>> files) {
  std::vector<std::unique_ptr<AtomicFile>> temporaries;
  for (const auto& [path, content] : files) {
    temporaries.push_back(std::make_unique<AtomicFile>(path));
    write_temporary(*temporaries.back(), path, content);
  }
  for (auto& file : temporaries) file->commit();
}

}  // namespace perflow
