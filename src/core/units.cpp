#include "perflow/core/units.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace perflow {
namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};

// Longest suffixes first, so "GiB" is not read as "B".
constexpr Unit kByteUnits[] = {{"KiB", 1024.0},
                               {"MiB", 1024.0 * 1024},
                               {"GiB", 1024.0 * 1024 * 1024},
                               {"TiB", 1024.0 * 1024 * 1024 * 1024},
                               {"kB", 1e3},
                               {"KB", 1e3},
                               {"MB", 1e6},
                               {"GB", 1e9},
                               {"TB", 1e12},
                               {"B", 1.0}};

constexpr Unit kBitUnits[] = {{"kb", 1e3 / 8}, {"Mb", 1e6 / 8}, {"Gb", 1e9 / 8}, {"Tb", 1e12 / 8}};

double parse_number(std::string_view text, const char* expectation) {
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    throw std::invalid_argument(expectation);
  }
  if (value < 0) throw std::invalid_argument(std::string(expectation) + " (>= 0)");
  return value;
}

}  // namespace

double parse_bytes(std::string_view text) {
  constexpr const char* kExpectation = "a size such as 512, \"64MB\" or \"80GiB\"";
  // The same grammar as the schema's size pattern: a number, optional spaces, a unit.
  // Near misses say what to write instead of only what is expected.
  if (!text.empty() &&
      (text.front() == ' ' || text.back() == ' ' || text.front() == '\t' || text.back() == '\t')) {
    throw std::invalid_argument(std::string(kExpectation) +
                                ", without spaces before the number or after the unit");
  }
  double bytes = -1;
  for (const Unit& unit : kByteUnits) {
    if (text.size() > unit.suffix.size() && text.ends_with(unit.suffix)) {
      bytes = parse_number(text.substr(0, text.size() - unit.suffix.size()), kExpectation) *
              unit.factor;
      break;
    }
  }
  if (bytes < 0) {
    std::size_t digits = 0;
    while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) != 0 ||
                                    text[digits] == '.' || text[digits] == ' ')) {
      ++digits;
    }
    const std::string_view suffix = text.substr(digits);
    for (const Unit& unit : kByteUnits) {
      const bool same_letters =
          suffix.size() == unit.suffix.size() &&
          std::equal(suffix.begin(), suffix.end(), unit.suffix.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
          });
      if (digits > 0 && same_letters) {
        throw std::invalid_argument(
            fmt::format("{} (units are case-sensitive: did you mean \"{}{}\"?)", kExpectation,
                        text.substr(0, digits), unit.suffix));
      }
    }
    bytes = parse_number(text, kExpectation);
  }
  // Larger sizes would overflow the 64-bit byte counts they become (1e30GB read as 0).
  if (!(bytes <= kMaxBytes)) throw std::invalid_argument("a size of at most 1e18 bytes");
  return bytes;
}

double parse_bandwidth(std::string_view text) {
  constexpr const char* kExpectation = "a bandwidth such as \"400GB/s\" or \"100Gb/s\"";
  if (!text.ends_with("/s")) throw std::invalid_argument(kExpectation);
  text.remove_suffix(2);
  for (const Unit& unit : kBitUnits) {
    if (text.size() > unit.suffix.size() && text.ends_with(unit.suffix)) {
      return parse_number(text.substr(0, text.size() - unit.suffix.size()), kExpectation) *
             unit.factor;
    }
  }
  for (const Unit& unit : kByteUnits) {
    if (text.size() > unit.suffix.size() && text.ends_with(unit.suffix)) {
      return parse_number(text.substr(0, text.size() - unit.suffix.size()), kExpectation) *
             unit.factor;
    }
  }
  throw std::invalid_argument(kExpectation);
}

std::string format_memory(double amount) {
  if (!std::isfinite(amount)) return fmt::format("{}", amount);
  if (std::fabs(amount) < 1e4) {
    if (amount == std::floor(amount)) return fmt::format("{:.0f}", amount);
    std::string text = fmt::format("{:.3f}", amount);
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    return text;
  }
  constexpr std::pair<double, const char*> kUnits[] = {
      {1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}};
  for (const auto& [factor, unit] : kUnits) {
    if (std::fabs(amount) >= factor) return fmt::format("{:.1f}{}", amount / factor, unit);
  }
  return fmt::format("{:.0f}", amount);
}

std::string format_bytes(double bytes) {
  if (bytes == 1) return "1 byte";
  // format_memory leaves amounts below 1e4 unitless (abstract units): bytes say so here.
  if (std::isfinite(bytes) && std::fabs(bytes) < 1e4) return fmt::format("{:.0f} bytes", bytes);
  return format_memory(bytes);
}

}  // namespace perflow
