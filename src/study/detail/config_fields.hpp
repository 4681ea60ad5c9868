#pragma once

// The config format as a table: every object of a config, its keys, what each holds and
// its bounds. The parser takes each object's valid keys from here (JsonCursor rejects the
// rest) and `perflow schema` generates the JSON Schema from the same table, so the two
// cannot drift apart.
#include <array>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "perflow/core/json_cursor.hpp"
#include "perflow/core/units.hpp"

namespace perflow::study::detail {

enum class FieldKind {
  String,        ///< free text
  Choice,        ///< one of `choices`
  Schedule,      ///< a registered schedule name
  ModelPreset,   ///< a name from `perflow models`
  DevicePreset,  ///< a name from `perflow devices`
  LayerSplit,    ///< "even", "balanced", "fastest", or layers per pipeline position
  Boolean,       ///< true or false
  Integer,       ///< an integer in [min, max]
  Number,        ///< a number in (min, max] when exclusive_min, else [min, max]
  Duration,      ///< a JSON number of microseconds, or a string with a unit
  Size,          ///< bytes as a number, or a string with a unit ("64MB", "80GiB")
  Rate,          ///< bytes per second as a number, or a string ("400GB/s", "100Gb/s")
  StageRange,    ///< a stage or an inclusive range: 3, "0-3" or [0, 3]
  Order,         ///< per device, a string of task labels or an array of labels
  Object,        ///< an object whose keys are `section`'s
  ObjectArray,   ///< an array of objects whose keys are `section`'s
  ObjectMap,     ///< an object of named objects whose keys are `section`'s
};

struct Section;

struct Field {
  std::string_view name;
  FieldKind kind;
  std::string_view description;
  /// What applies when the key is absent, for the reference (`perflow schema --format
  /// markdown`); empty: nothing (the key is optional, or `required`).
  std::string_view default_value = {};
  double min = 0;
  double max = std::numeric_limits<double>::infinity();
  bool exclusive_min = false;
  bool required = false;
  std::span<const std::string_view> choices = {};
  const Section* section = nullptr;
};

/// An object of the config: its fields, given as up to two lists (a shared list such as the
/// cost fields, then the object's own).
struct Section {
  std::string_view name;
  std::string_view description;
  std::array<std::span<const Field>, 2> parts;

  /// The object's keys, in table order (what JsonCursor::expect_object takes).
  [[nodiscard]] std::vector<std::string_view> keys() const;
  /// The field named `name` (a bug if there is none: throws std::logic_error).
  [[nodiscard]] const Field& field(std::string_view name) const;
};

/// The integer at `cursor`, within the bounds the table gives `field`.
std::int64_t read_integer(const JsonCursor& cursor, const Field& field);

/// The whole document (/), and the objects the parser reads on their own.
extern const Section kConfigSection;
extern const Section kPipelineSection;
extern const Section kCostsSection;
extern const Section kOverrideSection;
extern const Section kOffloadSection;
extern const Section kMlaSection;
extern const Section kMambaSection;
extern const Section kDeviceTypeSection;
extern const Section kPlacementSection;
extern const Section kPartSection;
extern const Section kNetworkSection;
extern const Section kLinkSection;
extern const Section kParallelismSection;
extern const Section kSimulationSection;
extern const Section kModelSection;
extern const Section kTrainingSection;

/// `costs.per`'s values: what the durations and sizes of /costs describe.
inline constexpr std::string_view kCostsPerChunk = "chunk";
inline constexpr std::string_view kCostsPerStage = "stage";

}  // namespace perflow::study::detail
