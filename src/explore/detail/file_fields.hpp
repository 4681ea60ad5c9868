#pragma once

// The sweep and search file formats as tables: every object's keys, what each holds and its
// bounds. The parsers (sweep.cpp, search.cpp) take each object's valid keys from here
// (JsonCursor rejects the rest) and `perflow schema sweep|search` generates the JSON Schemas
// from the same tables, so they cannot drift apart.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "perflow/model/layer_split.hpp"

namespace perflow::explore::detail {

enum class FileFieldKind {
  Text,        ///< free text
  SweepBase,   ///< a config object, or the path of a config file
  SearchBase,  ///< a config object without what the search chooses, with model and training
  Axes,        ///< POINTER: a list of values or a range (`section`)
  Zip,         ///< groups of at least two axis pointers
  Number,      ///< any number
  Boolean,     ///< true or false
  Integer,     ///< an integer in [min, max]
  Size,        ///< bytes (a number >= min), or a string with a unit ("72GB")
  Gpus,        ///< named GPU types: a config's device type plus `section`'s keys
  Integers,    ///< a non-empty list of integers in [min, max]
  Names,       ///< a non-empty list of `choices`
  Schedules,   ///< a non-empty list of registered schedule names (not custom)
  Shares,      ///< a non-empty list of numbers in [0, 1]
  Object,      ///< an object whose keys are `section`'s
};

struct FileSection;

struct FileField {
  std::string_view name;
  FileFieldKind kind;
  std::string_view description;
  std::int64_t min = 0;
  std::int64_t max = 0;
  bool required = false;
  std::span<const std::string_view> choices = {};
  const FileSection* section = nullptr;
};

/// An object of a sweep or search file and its keys.
struct FileSection {
  std::string_view name;  ///< its name in the schema's $defs
  std::string_view description;
  std::span<const FileField> fields;

  /// The object's keys, in table order (what JsonCursor::expect_object takes).
  [[nodiscard]] std::vector<std::string_view> keys() const;
  /// The field named `name` (a bug if there is none: throws std::logic_error).
  [[nodiscard]] const FileField& field(std::string_view name) const;
};

/// The largest count, degree or size a search file may give.
inline constexpr std::int64_t kMaxSearchValue = 1 << 20;

/// Sweep files: the document, and a range of axis values.
extern const FileSection kSweepSection;
extern const FileSection kRangeSection;

/// Search files: the document and its objects; a GPU type's own keys (beyond a device type's).
extern const FileSection kSearchSection;
extern const FileSection kClusterSection;
extern const FileSection kGpuSection;
extern const FileSection kSpaceSection;
extern const FileSection kConstraintsSection;

/// The config keys a search chooses for each plan: a search base may not give them.
inline constexpr std::string_view kSearchChosenKeys[] = {"pipeline",     "parallelism", "device",
                                                         "device_types", "placement",   "parts"};
/// The values of /space/recompute and /space/layers.
inline constexpr std::string_view kRecomputeChoices[] = {"none", "selective", "full"};
using model::kLayerSplits;

}  // namespace perflow::explore::detail
