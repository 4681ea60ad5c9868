#include "perflow/core/error.hpp"

#include <utility>

namespace perflow {

ConfigError::ConfigError(std::string file, std::string pointer, const std::string& message)
    : Error(file + (pointer.empty() ? std::string() : ":" + pointer) + ": " + message),
      file_(std::move(file)),
      pointer_(std::move(pointer)) {}

ScheduleError::ScheduleError(const std::string& message, std::string field)
    : Error(message), field_(std::move(field)) {}

CycleError::CycleError(const std::string& message, std::vector<std::string> cycle)
    : Error(message), cycle_(std::move(cycle)) {}

}  // namespace perflow
