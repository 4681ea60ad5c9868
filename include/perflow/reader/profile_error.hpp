#pragma once

#include <string>

#include "perflow/core/error.hpp"

namespace perflow::reader {

/// A profile file is damaged or not in the format its reader expects:
/// `file:location: expectation, got what was found`, where location is "line N",
/// "byte N", "table T" or a JSON path; empty if the whole file is at fault.
class ProfileError : public Error {
 public:
  ProfileError(std::string file, std::string location, const std::string& message);
  const std::string& file() const { return file_; }
  const std::string& location() const { return location_; }

 private:
  std::string file_;
  std::string location_;
};

}  // namespace perflow::reader
