#include "perflow/core/error.hpp"

#include <string>
#include <utility>

namespace perflow {

ConfigError::ConfigError(std::string file, std::string pointer, const std::string& message)
    : Error(file + (pointer.empty() ? std::string() : ":" + pointer) + ": " + message),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      message_(message) {}

ScheduleError::ScheduleError(const std::string& message, std::string field)
    : Error(message), field_(std::move(field)) {}

CycleError::CycleError(const std::string& message, std::vector<std::string> cycle)
    : Error(message), cycle_(std::move(cycle)) {}

FormatError::FormatError(std::string source, std::size_t line, const std::string& message)
    : Error(source + ":line " + std::to_string(line) + ": " + message),
      source_(std::move(source)),
      line_(line) {}

}  // namespace perflow
