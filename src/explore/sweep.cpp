#include "perflow/explore/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "detail/file_fields.hpp"
#include "perflow/core/error.hpp"
#include "perflow/core/json_cursor.hpp"
#include "perflow/study/config_schema.hpp"

namespace perflow::explore {
namespace {

// {"from": a, "to": b, "step": s}: a, a+s, ... up to b inclusive; integers stay integers.
std::vector<nlohmann::json> read_range(const JsonCursor& c) {
  c.expect_object(detail::kRangeSection.keys());
  const double from = c.at("from").as_number();
  const double to = c.at("to").as_number();
  const JsonCursor step_at = c.at("step");
  const double step = step_at.as_number();
  if (step == 0 || (to - from) * step < 0 || !std::isfinite(step)) {
    step_at.fail(fmt::format("expected a step that goes from {} to {}, got {}",
                             JsonCursor::describe(c.at("from").value()),
                             JsonCursor::describe(c.at("to").value()),
                             JsonCursor::describe(step_at.value())));
  }
  const bool integers = c.at("from").value().is_number_integer() &&
                        c.at("to").value().is_number_integer() &&
                        step_at.value().is_number_integer();
  // Tolerate rounding so 0.1 steps reach `to`.
  const double steps = std::floor((to - from) / step + 1e-9);
  // Every value is held in memory: an axis has at most 2^24 of them.
  constexpr double kMaxAxisValues = double(1 << 24);
  if (steps + 1 > kMaxAxisValues) {
    c.fail(
        fmt::format("{:.0f} values; an axis may have at most {:.0f}", steps + 1, kMaxAxisValues));
  }
  std::vector<nlohmann::json> values;
  values.reserve(static_cast<std::size_t>(steps) + 1);
  for (std::uint64_t k = 0; k <= static_cast<std::uint64_t>(steps); ++k) {
    if (integers) {
      values.emplace_back(c.at("from").value().get<std::int64_t>() +
                          static_cast<std::int64_t>(k) * step_at.value().get<std::int64_t>());
    } else {
      values.emplace_back(from + double(k) * step);
    }
  }
  return values;
}

std::vector<nlohmann::json> read_values(const JsonCursor& c) {
  if (c.value().is_object()) return read_range(c);
  if (!c.value().is_array()) {
    c.fail_expected("a list of values or {\"from\": a, \"to\": b, \"step\": s}");
  }
  if (c.array_size() == 0) c.fail("expected at least one value, got an empty list");
  return c.value().get<std::vector<nlohmann::json>>();
}

}  // namespace

// SHA-256 as FIPS 180-4 specifies it (sections 4.1.2, 4.2.2, 5.1.1, 6.2), for a sweep's
// digest: not for secrets, only so results of different sweeps never pass for one.
std::string sha256_hex(std::string_view text) {
  static constexpr std::uint32_t kRound[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
      0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
      0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
      0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
      0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
      0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
      0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
      0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
      0xc67178f2};
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  // The message, a 1 bit, zeros to 56 mod 64 bytes, and its length in bits (big-endian).
  std::string padded(text);
  padded += static_cast<char>(0x80);
  while (padded.size() % 64 != 56) padded += '\0';
  const std::uint64_t bits = std::uint64_t{text.size()} * 8;
  for (int i = 7; i >= 0; --i) padded += static_cast<char>((bits >> (8 * i)) & 0xff);
  for (std::size_t block = 0; block < padded.size(); block += 64) {
    std::uint32_t w[64];
    for (std::size_t t = 0; t < 16; ++t) {
      w[t] = 0;
      for (std::size_t b = 0; b < 4; ++b) {
        w[t] = (w[t] << 8) | static_cast<unsigned char>(padded[block + 4 * t + b]);
      }
    }
    for (std::size_t t = 16; t < 64; ++t) {
      const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (std::size_t t = 0; t < 64; ++t) {
      const std::uint32_t t1 =
          k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[t] + w[t];
      const std::uint32_t t2 =
          (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      k = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
  }
  std::string hex;
  for (const std::uint32_t word : h) hex += fmt::format("{:08x}", word);
  return hex;
}

namespace {

// The sweep's digest: its base and axes as canonical JSON (sorted keys, no spaces).
std::string digest_of(const Sweep& sweep) {
  nlohmann::json axes = nlohmann::json::array();
  for (const SweepAxis& axis : sweep.axes) {
    axes.push_back({{"pointers", axis.pointers}, {"values", axis.values}});
  }
  nlohmann::json identity = {{"base", sweep.base}, {"axes", std::move(axes)}};
  // Only when given, so that a sweep without --set keeps the digest it always had.
  if (!sweep.base_overrides.empty()) {
    nlohmann::json set = nlohmann::json::array();
    for (const study::ConfigOverride& o : sweep.base_overrides) {
      set.push_back({{"pointer", o.pointer}, {"value", o.value}});
    }
    identity["set"] = std::move(set);
  }
  return "sha256:" +
         sha256_hex(identity.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void check_pointer(const JsonCursor& at, const std::string& pointer) {
  try {
    if (pointer.empty() || pointer.front() != '/') throw std::invalid_argument(pointer);
    (void)nlohmann::json::json_pointer(pointer);
  } catch (const std::exception&) {
    at.fail(fmt::format("expected a JSON pointer such as /pipeline/stages, got '{}'", pointer));
  }
  // A misspelt pointer would make every run invalid, each blaming the base: say it once.
  if (const std::string problem = study::config_pointer_problem(pointer); !problem.empty()) {
    at.fail(fmt::format("'{}' is not a place in a config: {}", pointer, problem));
  }
}

}  // namespace

std::uint64_t Sweep::run_count() const {
  std::uint64_t n = 1;
  for (const SweepAxis& axis : axes) n *= axis.values.size();
  return n;
}

std::vector<std::string> Sweep::pointers() const {
  std::vector<std::string> all;
  for (const SweepAxis& axis : axes)
    all.insert(all.end(), axis.pointers.begin(), axis.pointers.end());
  return all;
}

std::vector<study::ConfigOverride> Sweep::overrides(std::uint64_t run) const {
  // Mixed radix, the last axis fastest.
  std::vector<std::size_t> step(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    step[a] = static_cast<std::size_t>(run % axes[a].values.size());
    run /= axes[a].values.size();
  }
  std::vector<study::ConfigOverride> result;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    for (std::size_t p = 0; p < axes[a].pointers.size(); ++p) {
      study::ConfigOverride o;
      o.pointer = axes[a].pointers[p];
      o.value = axes[a].values[step[a]][p];
      o.text = o.pointer + "=" + o.value.dump();
      o.origin = "the sweep axis";
      result.push_back(std::move(o));
    }
  }
  return result;
}

std::vector<study::ConfigOverride> Sweep::run_overrides(std::uint64_t run) const {
  std::vector<study::ConfigOverride> result = base_overrides;
  std::vector<study::ConfigOverride> axes_set = overrides(run);
  result.insert(result.end(), std::make_move_iterator(axes_set.begin()),
                std::make_move_iterator(axes_set.end()));
  return result;
}

Sweep parse_sweep(const nlohmann::json& document, const std::vector<std::string>& axis_order,
                  const std::string& file, const std::filesystem::path& directory) {
  const JsonCursor root(document, file);
  root.expect_object(detail::kSweepSection.keys());
  Sweep sweep;
  sweep.file = file;
  const JsonCursor base = root.at("base");
  if (base.value().is_string()) {
    std::filesystem::path path = base.as_string();
    if (path.is_relative()) path = directory / path;
    sweep.base_file = path.lexically_normal().string();
    try {
      sweep.base = read_json_file(path);
    } catch (const ConfigError& e) {
      // A file that cannot be read is named from where the sweep names it; a syntax error
      // inside it names its own line.
      std::error_code ignored;  // a name too long to look up is one that cannot be read
      if (!e.pointer().empty() || std::filesystem::exists(path, ignored)) throw;
      base.fail(fmt::format("cannot read the base config '{}': {}", sweep.base_file, e.message()));
    }
  } else if (base.value().is_object()) {
    sweep.base_file = file;
    sweep.base_pointer = "/base";
    sweep.base = base.value();
  } else {
    base.fail_expected("a config object or the path of a config file");
  }

  const JsonCursor axes = root.at("axes");
  if (!axes.value().is_object() || axes.value().empty()) {
    axes.fail_expected("an object of at least one POINTER: values");
  }
  // The order given, then any key it missed (sorted).
  std::vector<std::string> order;
  for (const std::string& key : axis_order) {
    if (axes.value().contains(key) && std::find(order.begin(), order.end(), key) == order.end()) {
      order.push_back(key);
    }
  }
  for (const auto& [key, value] : axes.value().items()) {
    if (std::find(order.begin(), order.end(), key) == order.end()) order.push_back(key);
  }
  std::map<std::string, std::vector<nlohmann::json>> values;
  for (const std::string& pointer : order) {
    const JsonCursor axis = axes.at(pointer);
    check_pointer(axis, pointer);
    values[pointer] = read_values(axis);
  }

  // Zipped pointers form one axis, at the place of its first pointer.
  std::map<std::string, std::size_t> group_of;
  std::vector<std::vector<std::string>> groups;
  if (auto zip = root.find("zip")) {
    const std::size_t n = zip->array_size();
    for (std::size_t g = 0; g < n; ++g) {
      const JsonCursor group = zip->at(g);
      const std::size_t members = group.array_size();
      if (members < 2) group.fail("expected at least two pointers that move together");
      std::vector<std::string> pointers;
      for (std::size_t m = 0; m < members; ++m) {
        const JsonCursor member = group.at(m);
        const std::string pointer = member.as_string();
        if (!values.contains(pointer)) {
          member.fail(fmt::format("'{}' is not an axis of /axes", pointer));
        }
        if (group_of.contains(pointer)) member.fail(fmt::format("'{}' is zipped twice", pointer));
        if (values[pointer].size() != values[group.at(0).as_string()].size()) {
          member.fail(fmt::format("zipped axes must have as many values: '{}' has {}, '{}' has {}",
                                  pointer, values[pointer].size(), group.at(0).as_string(),
                                  values[group.at(0).as_string()].size()));
        }
        group_of[pointer] = groups.size();
        pointers.push_back(pointer);
      }
      groups.push_back(std::move(pointers));
    }
  }
  std::set<std::size_t> placed;
  for (const std::string& pointer : order) {
    SweepAxis axis;
    if (const auto g = group_of.find(pointer); g != group_of.end()) {
      if (!placed.insert(g->second).second) continue;
      axis.pointers = groups[g->second];
    } else {
      axis.pointers = {pointer};
    }
    const std::size_t steps = values[axis.pointers.front()].size();
    for (std::size_t k = 0; k < steps; ++k) {
      std::vector<nlohmann::json> at_step;
      for (const std::string& p : axis.pointers) at_step.push_back(values[p][k]);
      axis.values.push_back(std::move(at_step));
    }
    sweep.axes.push_back(std::move(axis));
  }
  double runs = 1;
  for (const SweepAxis& axis : sweep.axes) runs *= double(axis.values.size());
  if (runs > double(kMaxSweepRuns)) {
    axes.fail(fmt::format("{:.0f} runs; a sweep may have at most {}", runs, kMaxSweepRuns));
  }
  sweep.digest = digest_of(sweep);
  return sweep;
}

Sweep load_sweep(const std::filesystem::path& path,
                 std::vector<study::ConfigOverride> base_overrides) {
  const std::string text = read_json_text(path);
  const nlohmann::json document = parse_json_text(text, path.string());
  // The axes' order as written: nlohmann::json sorts keys, ordered_json keeps them.
  std::vector<std::string> order;
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(text);
  if (const auto axes = ordered.find("axes"); axes != ordered.end() && axes->is_object()) {
    for (const auto& [key, value] : axes->items()) order.push_back(key);
  }
  Sweep sweep = parse_sweep(document, order, path.string(), path.parent_path());
  if (base_overrides.empty()) return sweep;
  study::check_override_pointers(base_overrides);
  sweep.base_overrides = std::move(base_overrides);
  sweep.digest = digest_of(sweep);
  return sweep;
}

}  // namespace perflow::explore
