#include "perflow/reader/profile_error.hpp"

#include <utility>

namespace perflow::reader {

ProfileError::ProfileError(std::string file, std::string location, const std::string& message)
    : Error(file + (location.empty() ? std::string() : ":" + location) + ": " + message),
      file_(std::move(file)),
      location_(std::move(location)) {}

}  // namespace perflow::reader
