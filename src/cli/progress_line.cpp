#include "detail/progress_line.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace perflow::cli::detail {

ProgressLine::ProgressLine(std::string unit, bool enabled)
    : unit_(std::move(unit)), enabled_(enabled) {}

void ProgressLine::update(const explore::SweepProgress& p) {
  if (!enabled_ || (p.seconds - shown_at_ < 0.1 && p.done != p.total)) return;
  shown_at_ = p.seconds;
  const double rate = p.seconds > 0 ? double(p.done) / p.seconds : 0;
  fmt::print(stderr, "\r\033[K{}/{} {}, {:.0f} per second, {} left", p.done, p.total, unit_, rate,
             format_eta(rate > 0 ? double(p.total - p.done) / rate : 0));
  std::fflush(stderr);
}

void ProgressLine::clear() {
  if (shown_at_ < 0) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_at_ = -1;
}

std::string format_eta(double seconds) {
  const auto whole = static_cast<long long>(std::llround(seconds));
  if (whole < 60) return fmt::format("{}s", whole);
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m", whole / 3600, whole / 60 % 60);
}

}  // namespace perflow::cli::detail
