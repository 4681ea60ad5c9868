#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace perflow {

/// Simulated time and durations: integer nanoseconds, so results are exact and
/// byte-for-byte reproducible. User units are converted once, at the edge.
using TimeNs = std::int64_t;

/// The longest duration a config or an argument may give (about 5.8e17 ns, 18 years):
/// sums of many stay within TimeNs.
inline constexpr TimeNs kMaxDurationNs = std::numeric_limits<TimeNs>::max() / 16;

inline constexpr TimeNs kNsPerUs = 1'000;
inline constexpr TimeNs kNsPerMs = 1'000'000;
inline constexpr TimeNs kNsPerS = 1'000'000'000;

/// Parses "250ns", "1.5us", "2ms", "0.1s" (also "µs") exactly, with decimal arithmetic.
/// The unit is required: a bare "12.5" is refused (a JSON number is microseconds, but a
/// string says its unit). Throws std::invalid_argument with a reason
/// (no unit, negative, finer than 1 ns, too large) that callers wrap with context.
TimeNs parse_duration(std::string_view text);

/// Converts a JSON number in microseconds to nanoseconds; throws std::invalid_argument if
/// negative, not finite, too large, or not a whole number of nanoseconds.
TimeNs microseconds_to_ns(double us);

/// Human-readable duration with a unit chosen by magnitude: "812ns", "1.315us", "202.4ms".
std::string format_duration(TimeNs ns);

}  // namespace perflow
