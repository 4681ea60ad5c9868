#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace perflow {

/// Base of every error PerFlow reports for bad input. Library code throws these and never
/// exits or prints; the CLI catches them and maps each kind to an exit code.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A configuration value is wrong: `file:/json/pointer: expectation, got value`.
class ConfigError : public Error {
 public:
  ConfigError(std::string file, std::string pointer, const std::string& message);
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  /// What is wrong there, without the file and pointer.
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  std::string pointer_;
  std::string message_;
};

/// A schedule cannot be built for the requested sizes, or a program order is invalid.
/// `field` names the pipeline setting at fault ("chunks", "microbatches"), if one is.
class ScheduleError : public Error {
 public:
  explicit ScheduleError(const std::string& message, std::string field = {});
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

/// The task graph has a dependence cycle (a deadlocking schedule). Names tasks on it.
class CycleError : public Error {
 public:
  CycleError(const std::string& message, std::vector<std::string> cycle);
  const std::vector<std::string>& cycle() const { return cycle_; }

 private:
  std::vector<std::string> cycle_;
};

/// A name (schedule, renderer, ...) is not registered; lists the valid names.
class UnknownNameError : public Error {
 public:
  using Error::Error;
};

/// Text in a format PerFlow reads back (a task table) is malformed:
/// `source:line N: message`.
class FormatError : public Error {
 public:
  FormatError(std::string source, std::size_t line, const std::string& message);
  const std::string& source() const { return source_; }
  std::size_t line() const { return line_; }

 private:
  std::string source_;
  std::size_t line_;
};

/// A run refused before it allocates: it would need more memory than the process may
/// take (see memory_budget.hpp).
class ResourceError : public Error {
 public:
  using Error::Error;
};

/// What a run that ran out of memory anyway (std::bad_alloc past the up-front estimate)
/// says: the estimate covers the task graph, so what did not fit may be something else.
inline constexpr const char* kAllocationFailedMessage =
    "out of memory: an allocation failed beyond the up-front estimate (the task graph, the "
    "outputs or the search's plans); make the run smaller or give it more memory";

/// A study that ran and has no answer: a search in which no plan fits, a sweep in which no
/// run simulated. Its outputs are written (they say what was tried) before it is thrown.
class NoAnswerError : public Error {
 public:
  using Error::Error;
};

/// An output file could not be written.
class IoError : public Error {
 public:
  using Error::Error;
};

}  // namespace perflow
