#include "perflow/study/config_schema.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "detail/config_fields.hpp"
#include "perflow/model/device_spec.hpp"
#include "perflow/model/layer_split.hpp"
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
    case FieldKind::LayerSplit: {
      Json names = Json::array();
      for (const std::string_view name : model::kLayerSplits) names.push_back(name);
      out = {{"anyOf", Json::array({{{"enum", std::move(names)}},
                                    {{"type", "array"},
                                     {"items", {{"type", "integer"}, {"minimum", 0}}},
                                     {"minItems", 1}}})}};
      break;
    }
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

// The reference (docs/config-reference.md): every object of the table, where it sits, its
// keys with their type, bounds, default and meaning.

// A section's heading, and the anchor GitHub gives it.
std::string anchor(std::string_view heading) {
  std::string out;
  for (char c : heading) out += c == ' ' ? '-' : c;
  return out;
}

std::string section_link(const Section& section) {
  return fmt::format("[{}](#{})", section.name, anchor(section.name));
}

// A bound as a reader writes it: 65536, 1e9, 0.5.
std::string format_bound(double value) {
  if (std::isinf(value)) return "inf";
  std::string text = fmt::format("{:g}", value);
  if (const auto e = text.find("e+"); e != std::string::npos) {
    std::size_t digits = e + 2;
    while (digits + 1 < text.size() && text[digits] == '0') ++digits;
    text = text.substr(0, e + 1) + text.substr(digits);
  }
  return text;
}

std::string choice_list(std::span<const std::string_view> choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) out += i + 1 == choices.size() ? " or " : ", ";
    out += fmt::format("`\"{}\"`", choices[i]);
  }
  return out;
}

std::string field_type(const Field& field) {
  switch (field.kind) {
    case FieldKind::String:
      return "string";
    case FieldKind::Choice:
      return choice_list(field.choices);
    case FieldKind::Schedule:
      return "a [schedule](#schedules) name";
    case FieldKind::ModelPreset:
      return "a [model preset](#model-presets)";
    case FieldKind::DevicePreset:
      return "a [device preset](#device-presets)";
    case FieldKind::LayerSplit:
      return "`\"even\"`, `\"balanced\"`, `\"fastest\"`, or an array of integers >= 0";
    case FieldKind::Boolean:
      return "boolean";
    case FieldKind::Integer:
      return fmt::format("integer in [{}, {}]", static_cast<std::int64_t>(field.min),
                         static_cast<std::int64_t>(field.max));
    case FieldKind::Number:
      return fmt::format("number in {}{}, {}]", field.exclusive_min ? "(" : "[",
                         format_bound(field.min), format_bound(field.max));
    case FieldKind::Duration:
      return "[duration](#duration)";
    case FieldKind::Size:
      return "[size](#size)";
    case FieldKind::Rate:
      return "[rate](#rate)";
    case FieldKind::StageRange:
      return "[stage range](#stage-range)";
    case FieldKind::Order:
      return "[order](#order)";
    case FieldKind::Object:
      return fmt::format("{} object", section_link(*field.section));
    case FieldKind::ObjectArray:
      return fmt::format("array of {}", section_link(*field.section));
    case FieldKind::ObjectMap:
      return fmt::format("object of named {}", section_link(*field.section));
  }
  return "";
}

// A default that is a value the key could hold is code; any other is prose.
std::string field_default(const Field& field) {
  if (field.required) return "required";
  const std::string_view value = field.default_value;
  if (value.empty()) return "";
  const bool choice =
      std::find(field.choices.begin(), field.choices.end(), value) != field.choices.end();
  const bool split = field.kind == FieldKind::LayerSplit &&
                     std::find(std::begin(model::kLayerSplits), std::end(model::kLayerSplits),
                               value) != std::end(model::kLayerSplits);
  if (choice || split) return fmt::format("`\"{}\"`", value);
  const bool boolean = field.kind == FieldKind::Boolean && (value == "true" || value == "false");
  const bool number = (field.kind == FieldKind::Integer || field.kind == FieldKind::Number ||
                       field.kind == FieldKind::Duration || field.kind == FieldKind::Size) &&
                      value.find_first_not_of("0123456789.") == std::string_view::npos;
  if (boolean || number) return fmt::format("`{}`", value);
  return std::string(value);
}

std::string table_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// Every section under `section` (itself first, then depth first in table order), with the
// JSON pointers it sits at: "<i>" stands for an array index, "<name>" for a named entry.
void collect_paths(const Section& section, const std::string& path,
                   std::vector<const Section*>& order,
                   std::map<const Section*, std::vector<std::string>>& paths) {
  if (!paths.contains(&section)) order.push_back(&section);
  paths[&section].push_back(path);
  for (const auto& part : section.parts) {
    for (const Field& field : part) {
      if (field.section == nullptr) continue;
      std::string child = fmt::format("{}/{}", path, field.name);
      if (field.kind == FieldKind::ObjectArray) child += "/<i>";
      if (field.kind == FieldKind::ObjectMap) child += "/<name>";
      collect_paths(*field.section, child, order, paths);
    }
  }
}

}  // namespace

std::string config_reference_markdown() {
  std::vector<const Section*> order;
  std::map<const Section*, std::vector<std::string>> paths;
  collect_paths(detail::kConfigSection, "", order, paths);
  std::string out =
      "# Config reference\n"
      "\n"
      "<!-- Generated by `perflow schema --format markdown` from the table the config parser\n"
      "and `perflow schema` take their keys and bounds from (src/study/config_fields.cpp):\n"
      "edit the table, then regenerate this file with\n"
      "`perflow schema --format markdown > docs/config-reference.md`. A test fails when they\n"
      "differ. -->\n"
      "\n"
      "Every key a `perflow simulate` config may hold, object by object: its type and bounds,\n"
      "what applies when it is absent, and what it means. Every object also takes `comment`, a\n"
      "string nothing reads; any other key is an error. The rules across fields (a schedule's\n"
      "sizes, stages within `/pipeline/stages`, device types that exist) are `perflow\n"
      "validate`'s. In paths, `<i>` stands for an array index and `<name>` for an entry's name.\n"
      "\n"
      "Objects:";
  for (const Section* section : order) {
    out += fmt::format(" {}{}", section_link(*section), section == order.back() ? ".\n" : ",");
  }
  // The first section to list a shared part (the cost fields) owns it; the others refer to it.
  std::map<const Field*, const Section*> owner;
  for (const Section* section : order) {
    const std::vector<std::string>& at = paths.at(section);
    const bool one_path = at.size() == 1;
    std::string description(section->description);
    if (!description.empty()) description[0] = static_cast<char>(std::toupper(description[0]));
    out += fmt::format("\n## {}\n\n{}. ", section->name, description);
    std::vector<std::string> shown;
    for (const std::string& path : at)
      shown.push_back(fmt::format("`{}`", path.empty() ? "/" : path));
    out += fmt::format("At {}.\n\n", fmt::join(shown, ", "));
    std::string rows;
    for (const auto& part : section->parts) {
      if (part.empty()) continue;
      if (const auto o = owner.find(part.data()); o != owner.end()) {
        std::vector<std::string> keys;
        for (const Field& field : part) keys.push_back(fmt::format("`{}`", field.name));
        out += fmt::format("It takes the keys of {} listed there: {}; and these:\n\n",
                           section_link(*o->second), fmt::join(keys, ", "));
        continue;
      }
      owner.emplace(part.data(), section);
      for (const Field& field : part) {
        const std::string path = one_path ? fmt::format("{}/{}", at.front(), field.name)
                                          : fmt::format("\u2026/{}", field.name);
        rows += fmt::format("| `{}` | {} | {} | {} |\n", path, table_cell(field_type(field)),
                            table_cell(field_default(field)), table_cell(field.description));
      }
    }
    out += "| JSON path | type | default | meaning |\n|---|---|---|---|\n" + rows;
  }
  out += "\n## Value types\n";
  const Json defs = common_defs();
  for (const auto& [name, def] : defs.items()) {
    std::string heading = name;
    for (char& c : heading) c = c == '_' ? ' ' : c;
    std::string description = def["description"].get<std::string>();
    description[0] = static_cast<char>(std::toupper(description[0]));
    out += fmt::format("\n### {}\n\n{}.\n", heading, description);
  }
  const auto names = [](const auto& list) {
    std::vector<std::string> shown;
    for (const auto& item : list) shown.push_back(fmt::format("`{}`", item.name));
    return fmt::format("{}", fmt::join(shown, ", "));
  };
  out += fmt::format(
      "\n## Names\n\n### schedules\n\n`perflow schedules` describes each: {}.\n"
      "\n### model presets\n\n`perflow models` describes each: {}.\n"
      "\n### device presets\n\n`perflow devices` describes each: {}.\n",
      names(parallel::builtin_schedules().all()), names(model::model_presets()),
      names(model::device_presets()));
  return out;
}

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
