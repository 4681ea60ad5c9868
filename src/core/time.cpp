#include "perflow/core/time.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace perflow {
namespace {

struct Unit {
  std::string_view suffix;
  TimeNs ns;
};

// Longest suffixes first so "ms" is not read as "s".
constexpr Unit kUnits[] = {
    {"ns", 1}, {"us", kNsPerUs}, {"\xC2\xB5s", kNsPerUs}, {"ms", kNsPerMs}, {"s", kNsPerS}};

}  // namespace

TimeNs parse_duration(std::string_view text) {
  std::string_view number = text;
  TimeNs scale = 0;
  for (const Unit& unit : kUnits) {
    if (number.size() > unit.suffix.size() && number.ends_with(unit.suffix)) {
      number.remove_suffix(unit.suffix.size());
      scale = unit.ns;
      break;
    }
  }
  if (scale == 0) {
    // A string always needs its unit: "2733" could be any of them. (Plain JSON numbers are
    // microseconds; that rule is the config's, not this text's.)
    if (!text.empty() && text.back() >= '0' && text.back() <= '9') {
      throw std::invalid_argument(fmt::format(
          "a duration with a unit (ns, us, ms, s), such as \"{}us\"", text.substr(0, 40)));
    }
    throw std::invalid_argument("a duration with a unit (ns, us, ms, s)");
  }
  while (!number.empty() && number.back() == ' ') number.remove_suffix(1);
  if (!number.empty() && number.front() == '-') throw std::invalid_argument("a duration >= 0");
  if (!number.empty() && number.front() == '+') number.remove_prefix(1);

  // Exact decimal arithmetic: integer part and fraction digits, scaled by the unit.
  TimeNs whole = 0;
  TimeNs fraction = 0;
  TimeNs fraction_scale = 1;
  bool seen_point = false;
  bool seen_digit = false;
  for (char c : number) {
    if (c == '.' && !seen_point) {
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') throw std::invalid_argument("a duration such as 250ns, 1.5us or 2ms");
    seen_digit = true;
    const TimeNs digit = c - '0';
    if (!seen_point) {
      if (whole > (kMaxDurationNs - digit) / 10)
        throw std::invalid_argument("a duration below 5e17 ns");
      whole = whole * 10 + digit;
    } else {
      // Digits finer than a nanosecond must be zero; the rest stay below `scale`, so
      // fraction * scale cannot overflow.
      if (fraction_scale >= scale) {
        if (digit != 0) throw std::invalid_argument("a whole number of nanoseconds");
        continue;
      }
      fraction = fraction * 10 + digit;
      fraction_scale *= 10;
    }
  }
  if (!seen_digit) throw std::invalid_argument("a duration such as 250ns, 1.5us or 2ms");
  if (whole > kMaxDurationNs / scale) throw std::invalid_argument("a duration below 5e17 ns");
  const TimeNs scaled_fraction = fraction * scale;
  if (scaled_fraction % fraction_scale != 0) {
    throw std::invalid_argument("a whole number of nanoseconds");
  }
  return whole * scale + scaled_fraction / fraction_scale;
}

TimeNs microseconds_to_ns(double us) {
  if (!std::isfinite(us)) throw std::invalid_argument("a finite duration");
  if (us < 0) throw std::invalid_argument("a duration >= 0");
  const double ns = us * static_cast<double>(kNsPerUs);
  if (ns > static_cast<double>(kMaxDurationNs))
    throw std::invalid_argument("a duration below 5e17 ns");
  const double rounded = std::round(ns);
  // JSON numbers are binary doubles: 1.001 us is 1000.9999999 ns. Accept representation
  // error, reject a real sub-nanosecond part.
  if (std::abs(ns - rounded) > 1e-6 * std::max(1.0, ns)) {
    throw std::invalid_argument("a whole number of nanoseconds");
  }
  return static_cast<TimeNs>(rounded);
}

std::string format_duration(TimeNs ns) {
  const TimeNs magnitude = ns < 0 ? -ns : ns;
  if (magnitude < kNsPerUs) return fmt::format("{}ns", ns);
  const auto trimmed = [](double value, std::string_view unit) {
    std::string text = fmt::format("{:.3f}", value);
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    return text.append(unit);
  };
  if (magnitude < kNsPerMs) return trimmed(static_cast<double>(ns) / kNsPerUs, "us");
  if (magnitude < kNsPerS) return trimmed(static_cast<double>(ns) / kNsPerMs, "ms");
  return trimmed(static_cast<double>(ns) / kNsPerS, "s");
}

}  // namespace perflow
