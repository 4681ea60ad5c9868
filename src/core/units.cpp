#include "perflow/core/units.hpp"

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
  for (const Unit& unit : kByteUnits) {
    if (text.size() > unit.suffix.size() && text.ends_with(unit.suffix)) {
      return parse_number(text.substr(0, text.size() - unit.suffix.size()), kExpectation) *
             unit.factor;
    }
  }
  return parse_number(text, kExpectation);
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

}  // namespace perflow
