#pragma once

#include <string>

#include "perflow/explore/sweep_runner.hpp"

namespace perflow::cli::detail {

/// "120/4000 runs, 35 per second, 1m51s left" on standard error, rewritten in place at most
/// ten times a second; only on a terminal (a log file gets no carriage returns).
class ProgressLine {
 public:
  /// `unit`: what is counted ("runs", "plans weighed"); `enabled` false: shows nothing.
  ProgressLine(std::string unit, bool enabled);
  void update(const explore::SweepProgress& progress);
  /// Erases the line, if one was shown.
  void clear();

 private:
  std::string unit_;
  bool enabled_;
  double shown_at_ = -1;
};

/// A remaining time for a progress line: "42s", "3m07s", "2h05m".
std::string format_eta(double seconds);

}  // namespace perflow::cli::detail
