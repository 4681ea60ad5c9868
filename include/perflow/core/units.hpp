#pragma once

#include <string>
#include <string_view>

namespace perflow {

/// Sizes (bytes) and bandwidths (bytes per second) a config or an argument may give are at
/// most this.
inline constexpr double kMaxBytes = 1e18;

/// Parses a memory size: a number of bytes, or a string with a unit: "512", "1.5MB",
/// "80GB" (decimal: kB, MB, GB, TB) or "80GiB" (binary: KiB, MiB, GiB, TiB), "B" for bytes.
/// Spaces may separate the number and the unit, nowhere else; units are case-sensitive. At most
/// kMaxBytes. Throws std::invalid_argument with the expectation for callers to wrap with context.
double parse_bytes(std::string_view text);

/// Parses a bandwidth in bytes per second: "400GB/s", "25GiB/s", "100Gb/s" (bits),
/// "800MB/s". Throws std::invalid_argument.
double parse_bandwidth(std::string_view text);

/// A memory amount for people: below 10'000 as a plain number (activation units: "4",
/// "2.5"), above in decimal units with one decimal ("36.2GB", "64.0MB").
std::string format_memory(double amount);

/// A number of bytes for people: as format_memory, with "bytes" below 1 kB ("512 bytes").
std::string format_bytes(double bytes);

}  // namespace perflow
