#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace perflow {

/// Edit distance (Levenshtein), case-sensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `name`, if it is close enough to be a plausible typo
/// (distance <= max(2, |name| / 3)); ties go to the earlier candidate.
std::optional<std::string> closest_match(std::string_view name,
                                         std::span<const std::string> candidates);

/// "unknown schedule 'f1b1'; did you mean '1f1b'? valid: gpipe, 1f1b" style suffix:
/// returns "; did you mean 'x'?" or an empty string.
std::string did_you_mean_suffix(std::string_view name, std::span<const std::string> candidates);

}  // namespace perflow
