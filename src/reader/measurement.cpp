// Reading profiles for `perflow costs`, `measured` and `compare-measured` (and Python's
// perflow.costs and compare_measured): the choice of markers, and the measured step and stage
// times. The command line options that name the profiles are src/cli/profile_options.cpp's.
#include "perflow/reader/measurement.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "perflow/core/error.hpp"
#include "perflow/core/option_error.hpp"
#include "perflow/reader/markers.hpp"
#include "perflow/reader/profile_reader.hpp"

namespace perflow::reader {
namespace {

std::optional<std::int64_t> parse_whole(std::string_view text) {
  std::int64_t value = 0;
  const char* const end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

std::map<std::int64_t, std::uint32_t> parse_rank_stages(const std::vector<std::string>& items) {
  std::map<std::int64_t, std::uint32_t> out;
  for (const std::string& item : items) {
    const std::size_t eq = item.find('=');
    const auto rank = parse_whole(std::string_view(item).substr(0, eq));
    // -1: no stage given or not a whole number (a plain integer: GCC's -O2 flow analysis
    // takes an optional from a conditional for maybe-uninitialized).
    const std::int64_t stage =
        eq == std::string::npos ? -1
                                : parse_whole(std::string_view(item).substr(eq + 1)).value_or(-1);
    const std::string given = fmt::format("'{}'", item);
    if (!rank || stage < 0 || stage > 65535) {
      throw OptionError("rank_stage",
                        {OptionError::field("rank_stage", given),
                         OptionError::text(": expected RANK=STAGE (whole numbers, stage below "
                                           "65536), e.g. 3=1")});
    }
    if (!out.emplace(*rank, static_cast<std::uint32_t>(stage)).second) {
      throw OptionError("rank_stage",
                        {OptionError::field("rank_stage", given),
                         OptionError::text(fmt::format(": rank {} is given twice", *rank))});
    }
  }
  return out;
}

std::size_t count_matches(const std::vector<KernelTrace>& traces,
                          const MarkerClassifier& classifier) {
  std::size_t matched = 0;
  for (const KernelTrace& trace : traces) {
    std::vector<std::size_t> per_name(trace.names.size(), 0);
    for (const Range& range : trace.ranges) ++per_name[range.name];
    for (std::size_t name = 0; name < per_name.size(); ++name) {
      if (per_name[name] > 0 &&
          classifier.classify(trace.names[static_cast<std::uint32_t>(name)])) {
        matched += per_name[name];
      }
    }
  }
  return matched;
}

}  // namespace

Measurement measure_profiles(const ProfileRequest& options) {
  // The CLI's parser refuses both together too; Python reaches here directly.
  if (!options.preset.empty() && !options.pattern.empty()) {
    throw OptionError("preset", {OptionError::field("preset"), OptionError::text(" excludes "),
                                 OptionError::field("pattern")});
  }
  ExtractionOptions extraction;
  extraction.rank_stage = parse_rank_stages(options.rank_stage);
  // An unknown preset or a bad pattern fails before any file is read.
  std::optional<MarkerClassifier> classifier;
  Measurement out;
  if (!options.pattern.empty()) {
    classifier = MarkerClassifier::pattern(options.pattern);
    out.marker_choice = fmt::format("--pattern '{}'", options.pattern);
  } else if (!options.preset.empty()) {
    classifier = MarkerClassifier::preset(options.preset);
    out.marker_choice = "--preset " + options.preset;
  }
  std::vector<KernelTrace> traces;
  traces.reserve(options.profiles.size());
  for (const std::string& path : options.profiles) traces.push_back(read_profile(path));
  if (!classifier) {
    std::size_t best = 0;
    for (const MarkerPreset& preset : marker_presets()) {
      MarkerClassifier candidate = MarkerClassifier::preset(preset.name);
      const std::size_t matched = count_matches(traces, candidate);
      if (matched > best) {
        best = matched;
        classifier = std::move(candidate);
      }
    }
    if (!classifier) {
      std::vector<std::string> names;
      for (const MarkerPreset& preset : marker_presets()) {
        names.emplace_back(preset.name);
      }
      throw Error(
          fmt::format("{}: no range matched any marker preset ({}); name the ranges "
                      "to use with --pattern; {}",
                      fmt::join(options.profiles, ", "), fmt::join(names, ", "),
                      most_frequent_range_names(traces)));
    }
    out.marker_choice = fmt::format("{} (detected: the preset matching the most ranges, {})",
                                    classifier->name(), best);
  }
  out.costs = extract_costs(traces, *classifier, extraction);
  return out;
}

std::vector<MeasuredStep> measured_steps(const ExtractedCosts& costs) {
  std::map<std::int64_t, MeasuredStep> steps;
  std::map<std::int64_t, std::pair<TimeNs, TimeNs>> spans;
  for (const MeasuredTask& task : costs.tasks) {
    MeasuredStep& step = steps[task.iteration];
    step.iteration = task.iteration;
    step.warmup = step.warmup || task.warmup;
    auto [it, inserted] =
        spans.try_emplace(task.iteration, std::pair{task.first_start, task.last_end});
    if (!inserted) {
      it->second.first = std::min(it->second.first, task.first_start);
      it->second.second = std::max(it->second.second, task.last_end);
    }
  }
  std::vector<MeasuredStep> out;
  for (auto& [iteration, step] : steps) {
    step.time = spans[iteration].second - spans[iteration].first;
    out.push_back(step);
  }
  return out;
}

TimeNs median_step_time(const std::vector<MeasuredStep>& steps) {
  std::vector<TimeNs> times;
  for (const MeasuredStep& step : steps) {
    if (!step.warmup) times.push_back(step.time);
  }
  if (times.empty()) {
    for (const MeasuredStep& step : steps) times.push_back(step.time);
  }
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  return times[(times.size() - 1) / 2];
}

std::vector<TimeNs> measured_stage_busy(const ExtractedCosts& costs) {
  // (stage, profile, iteration) -> busy summed over its tasks.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::int64_t>, TimeNs> sums;
  for (const MeasuredTask& task : costs.tasks) {
    if (!task.warmup) sums[{task.stage, task.profile, task.iteration}] += task.busy;
  }
  std::vector<std::vector<TimeNs>> per_stage(costs.stage_count);
  for (const auto& [key, busy] : sums) per_stage[std::get<0>(key)].push_back(busy);
  std::vector<TimeNs> out(costs.stage_count, -1);
  for (std::size_t s = 0; s < per_stage.size(); ++s) {
    if (per_stage[s].empty()) continue;
    std::sort(per_stage[s].begin(), per_stage[s].end());
    out[s] = per_stage[s][(per_stage[s].size() - 1) / 2];
  }
  return out;
}

std::string exact_duration(TimeNs ns) {
  const TimeNs whole = ns / 1000;
  TimeNs fraction = ns % 1000;
  if (fraction == 0) return fmt::format("{}us", whole);
  std::string digits = fmt::format("{:03}", fraction);
  while (digits.back() == '0') digits.pop_back();
  return fmt::format("{}.{}us", whole, digits);
}

}  // namespace perflow::reader
