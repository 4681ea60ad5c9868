#include "perflow/study/config_schema.hpp"

#include <string>

#include <fmt/format.h>

#include "detail/config_fields.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/transformer.hpp"
#include "perflow/parallel/schedule_registry.hpp"

namespace perflow::study {
namespace {

using detail::Field;
using detail::FieldKind;
using detail::Section;
using Json = nlohmann::ordered_json;

// The texts the parser reads (parse_duration, parse_bytes, parse_bandwidth), as patterns.
constexpr const char* kDecimal = "([0-9]+\\.?[0-9]*|\\.[0-9]+)";
constexpr const char* kByteUnits = "(KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB|B)";
constexpr const char* kLabel = "(F|B|W|BW)[0-9]+\\.[0-9]+";

std::string def_name(const Section& section) {
  std::string name(section.name);
  for (char& c : name) c = c == ' ' ? '_' : c;
  return name;
}

Json schema_ref(const std::string& name) { return Json{{"$ref", "#/$defs/" + name}}; }

Json common_defs() {
  Json defs;
  // fmt, not operator+: GCC 12 misreports string concatenation here (-Wrestrict).
  const std::string number = fmt::format("{}([eE][+-]?[0-9]+)?", kDecimal);
  const std::string duration = fmt::format("^\\+?{} *(ns|us|\u00b5s|ms|s)$", kDecimal);
  const std::string size = fmt::format("^{} *{}?$", number, kByteUnits);
  const std::string rate = fmt::format("^{} *((kb|Mb|Gb|Tb)|{})/s$", number, kByteUnits);
  const std::string program = fmt::format("^ *({}( +|$))*$", kLabel);
  const std::string label = fmt::format("^{}$", kLabel);
  defs["duration"] = {
      {"description",
       "a JSON number of microseconds, or a string with its unit: \"250ns\", \"1.5us\", "
       "\"2ms\", \"0.1s\" (a string without a unit is refused)"},
      {"anyOf", Json::array({{{"type", "number"}, {"minimum", 0}},
                             {{"type", "string"}, {"pattern", duration}}})}};
  defs["size"] = {
      {"description", "bytes as a number, or a string: \"64MB\", \"80GB\", \"80GiB\""},
      {"anyOf", Json::array({{{"type", "number"}, {"minimum", 0}, {"maximum", kMaxBytes}},
                             {{"type", "string"}, {"pattern", size}}})}};
  defs["rate"] = {
      {"description",
       "bytes per second as a number, or a string: \"300GB/s\", \"25GiB/s\", \"200Gb/s\""},
      {"anyOf", Json::array({{{"type", "number"}, {"minimum", 1}, {"maximum", kMaxBytes}},
                             {{"type", "string"}, {"pattern", rate}}})}};
  defs["stage_range"] = {
      {"description", "a stage or an inclusive range of stages: 3, \"0-3\" or [0, 3]"},
      {"anyOf", Json::array({{{"type", "integer"}, {"minimum", 0}},
                             {{"type", "string"}, {"pattern", "^[0-9]+(-[0-9]+)?$"}},
                             {{"type", "array"},
                              {"items", {{"type", "integer"}, {"minimum", 0}}},
                              {"minItems", 2},
                              {"maxItems", 2}}})}};
  defs["order"] = {
      {"description",
       "one program per device: task labels separated by spaces, or an array of labels"},
      {"type", "array"},
      {"items",
       {{"anyOf", Json::array({{{"type", "string"}, {"pattern", program}},
                               {{"type", "array"},
                                {"items", {{"type", "string"}, {"pattern", label}}}}})}}}};
  return defs;
}

Json field_schema(const Field& field) {
  Json out;
  switch (field.kind) {
    case FieldKind::String:
      out = {{"type", "string"}};
      break;
    case FieldKind::Choice: {
      Json values = Json::array();
      for (std::string_view choice : field.choices) values.push_back(choice);
      out = {{"enum", std::move(values)}};
      break;
    }
    case FieldKind::Schedule: {
      Json values = Json::array();
      for (const auto& schedule : parallel::builtin_schedules().all()) {
        values.push_back(schedule.name);
      }
      out = {{"enum", std::move(values)}};
      break;
    }
    case FieldKind::ModelPreset: {
      Json values = Json::array();
      for (const auto& preset : model::model_presets()) values.push_back(preset.name);
      out = {{"enum", std::move(values)}};
      break;
    }
    case FieldKind::DevicePreset: {
      Json values = Json::array();
      for (const auto& preset : model::device_presets()) values.push_back(preset.name);
      out = {{"enum", std::move(values)}};
      break;
    }
    case FieldKind::LayerSplit:
      out = {{"anyOf", Json::array({{{"enum", Json::array({"balanced", "fastest"})}},
                                    {{"type", "array"},
                                     {"items", {{"type", "integer"}, {"minimum", 0}}},
                                     {"minItems", 1}}})}};
      break;
    case FieldKind::Boolean:
      out = {{"type", "boolean"}};
      break;
    case FieldKind::Integer:
      out = {{"type", "integer"},
             {"minimum", static_cast<std::int64_t>(field.min)},
             {"maximum", static_cast<std::int64_t>(field.max)}};
      break;
    case FieldKind::Number:
      out = {{"type", "number"}};
      out[field.exclusive_min ? "exclusiveMinimum" : "minimum"] = field.min;
      out["maximum"] = field.max;
      break;
    case FieldKind::Duration:
      out = schema_ref("duration");
      break;
    case FieldKind::Size:
      out = schema_ref("size");
      break;
    case FieldKind::Rate:
      out = schema_ref("rate");
      break;
    case FieldKind::StageRange:
      out = schema_ref("stage_range");
      break;
    case FieldKind::Order:
      out = schema_ref("order");
      break;
    case FieldKind::Object:
      out = schema_ref(def_name(*field.section));
      break;
    case FieldKind::ObjectArray:
      out = {{"type", "array"}, {"items", schema_ref(def_name(*field.section))}};
      break;
    case FieldKind::ObjectMap:
      // Named entries, and a comment like any object.
      out = {{"type", "object"},
             {"properties", {{"comment", {{"type", "string"}}}}},
             {"additionalProperties", schema_ref(def_name(*field.section))}};
      break;
  }
  // "$ref" may have siblings in draft 2020-12; the description helps editors either way.
  out["description"] = field.description;
  return out;
}

Json section_schema(const Section& section) {
  Json properties;
  Json required = Json::array();
  for (const auto& part : section.parts) {
    for (const Field& field : part) {
      properties[std::string(field.name)] = field_schema(field);
      if (field.required) required.push_back(field.name);
    }
  }
  properties["comment"] = {{"type", "string"}, {"description", "an annotation; nothing reads it"}};
  Json out = {{"type", "object"},
              {"description", section.description},
              {"properties", std::move(properties)},
              {"additionalProperties", false}};
  if (!required.empty()) out["required"] = std::move(required);
  return out;
}

void add_sections(const Section& section, Json& defs) {
  for (const auto& part : section.parts) {
    for (const Field& field : part) {
      if (field.section == nullptr) continue;
      const std::string name = def_name(*field.section);
      if (defs.contains(name)) continue;
      defs[name] = section_schema(*field.section);
      add_sections(*field.section, defs);
    }
  }
}

}  // namespace

nlohmann::ordered_json config_schema() {
  Json schema = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                 {"title", "PerFlow config"}};
  const Json root = section_schema(detail::kConfigSection);
  for (const auto& [key, value] : root.items()) schema[key] = value;
  Json defs = common_defs();
  add_sections(detail::kConfigSection, defs);
  schema["$defs"] = std::move(defs);
  return schema;
}

}  // namespace perflow::study
