#include "perflow/explore/file_schema.hpp"

#include <functional>
#include <initializer_list>
#include <string>

#include "detail/file_fields.hpp"
#include "perflow/parallel/schedule_registry.hpp"
#include "perflow/study/config_schema.hpp"

namespace perflow::explore {
namespace {

using detail::FileField;
using detail::FileFieldKind;
using detail::FileSection;
using Json = nlohmann::ordered_json;

// A JSON pointer as check_pointer accepts it: "/" then keys, "~" only as "~0" or "~1".
constexpr const char* kPointerPattern = "^(/([^~/]|~[01])*)+$";

Json schema_ref(std::string_view name) { return Json{{"$ref", "#/$defs/" + std::string(name)}}; }

Json non_empty_list(Json items) {
  return {{"type", "array"}, {"items", std::move(items)}, {"minItems", 1}};
}

Json field_schema(const FileField& field, const Json& config_defs) {
  Json out;
  switch (field.kind) {
    case FileFieldKind::Text:
      out = {{"type", "string"}};
      break;
    case FileFieldKind::SweepBase:
      out = {{"anyOf", Json::array({{{"type", "string"}}, schema_ref("config")})}};
      break;
    case FileFieldKind::SearchBase:
      out = schema_ref("search_base");
      break;
    case FileFieldKind::Axes:
      out = {{"type", "object"},
             {"minProperties", 1},
             {"propertyNames", {{"pattern", kPointerPattern}}},
             {"additionalProperties",
              {{"anyOf", Json::array({{{"type", "array"}, {"minItems", 1}},
                                      schema_ref(field.section->name)})}}}};
      break;
    case FileFieldKind::Zip:
      out = {{"type", "array"},
             {"items",
              {{"type", "array"},
               {"items", {{"type", "string"}, {"pattern", kPointerPattern}}},
               {"minItems", 2}}}};
      break;
    case FileFieldKind::Number:
      out = {{"type", "number"}};
      if (field.name == "step") out["not"] = {{"const", 0}};
      break;
    case FileFieldKind::Boolean:
      out = {{"type", "boolean"}};
      break;
    case FileFieldKind::Integer:
      out = {{"type", "integer"}, {"minimum", field.min}, {"maximum", field.max}};
      break;
    case FileFieldKind::Size:
      // The config's size strings; a number is at least `min` bytes.
      out = {{"anyOf", Json::array({{{"type", "number"}, {"minimum", field.min}},
                                    config_defs.at("size").at("anyOf").at(1)})}};
      break;
    case FileFieldKind::Gpus:
      out = {{"type", "object"},
             {"minProperties", 1},
             {"additionalProperties", schema_ref(field.section->name)}};
      break;
    case FileFieldKind::Integers:
      out = non_empty_list({{"type", "integer"}, {"minimum", field.min}, {"maximum", field.max}});
      break;
    case FileFieldKind::Names: {
      Json values = Json::array();
      for (std::string_view choice : field.choices) values.push_back(choice);
      out = non_empty_list({{"enum", std::move(values)}});
      break;
    }
    case FileFieldKind::Schedules: {
      Json values = Json::array();
      for (const auto& schedule : parallel::builtin_schedules().all()) {
        if (schedule.name != "custom") values.push_back(schedule.name);
      }
      out = non_empty_list({{"enum", std::move(values)}});
      break;
    }
    case FileFieldKind::Shares:
      out = non_empty_list({{"type", "number"}, {"minimum", 0}, {"maximum", 1}});
      break;
    case FileFieldKind::Object:
      out = schema_ref(field.section->name);
      break;
  }
  out["description"] = field.description;
  return out;
}

Json section_schema(const FileSection& section, const Json& config_defs) {
  Json properties;
  Json required = Json::array();
  for (const FileField& field : section.fields) {
    properties[std::string(field.name)] = field_schema(field, config_defs);
    if (field.required) required.push_back(field.name);
  }
  properties["comment"] = {{"type", "string"}, {"description", "an annotation; nothing reads it"}};
  Json out = {{"type", "object"},
              {"description", section.description},
              {"properties", std::move(properties)},
              {"additionalProperties", false}};
  if (!required.empty()) out["required"] = std::move(required);
  return out;
}

// A document's schema: its root section, its objects' and the config schema's $defs.
Json file_schema(const FileSection& root, std::string_view title,
                 std::initializer_list<const FileSection*> objects,
                 const std::function<void(const Json& config, Json& defs)>& add_defs,
                 bool config_keys_required) {
  const Json config = study::config_schema();
  const Json& config_defs = config.at("$defs");
  Json schema = {{"$schema", "https://json-schema.org/draft/2020-12/schema"}, {"title", title}};
  const Json document = section_schema(root, config_defs);
  for (const auto& [key, value] : document.items()) schema[key] = value;
  Json defs;
  for (const FileSection* section : objects) {
    defs[std::string(section->name)] = section_schema(*section, config_defs);
  }
  add_defs(config, defs);
  for (const auto& [key, value] : config_defs.items()) defs[key] = value;
  if (!config_keys_required) {
    defs["config"].erase("required");
    for (const auto& item : config_defs.items()) defs[item.key()].erase("required");
  }
  schema["$defs"] = std::move(defs);
  return schema;
}

// The config document's own schema, as a definition (without $schema, title and $defs).
Json config_root(const Json& config) {
  Json root = config;
  root.erase("$schema");
  root.erase("title");
  root.erase("$defs");
  return root;
}

}  // namespace

nlohmann::ordered_json sweep_schema() {
  return file_schema(
      detail::kSweepSection, "PerFlow sweep", {&detail::kRangeSection},
      [](const Json& config, Json& defs) { defs["config"] = config_root(config); },
      // An axis may give what the base leaves out: no config key is required.
      /*config_keys_required=*/false);
}

nlohmann::ordered_json search_schema() {
  return file_schema(
      detail::kSearchSection, "PerFlow search",
      {&detail::kClusterSection, &detail::kSpaceSection, &detail::kConstraintsSection},
      [](const Json& config, Json& defs) {
        // The base: a config without what the search chooses, with a model and the training's
        // global batch size.
        Json base = config_root(config);
        base["description"] = "a config without what the search chooses for each plan";
        for (std::string_view key : detail::kSearchChosenKeys) {
          base["properties"].erase(std::string(key));
        }
        base["properties"]["training"] = {
            {"allOf",
             Json::array({base["properties"]["training"], {{"required", {"global_batch_size"}}}})}};
        base["required"] = {"model", "training"};
        defs["search_base"] = std::move(base);
        // A GPU type: a device type and its count.
        Json gpu = config.at("$defs").at("device_type");
        gpu["description"] = detail::kGpuSection.description;
        Json required = Json::array();
        for (const FileField& field : detail::kGpuSection.fields) {
          gpu["properties"][std::string(field.name)] = field_schema(field, config.at("$defs"));
          if (field.required) required.push_back(field.name);
        }
        gpu["required"] = std::move(required);
        defs[std::string(detail::kGpuSection.name)] = std::move(gpu);
      },
      /*config_keys_required=*/true);
}

}  // namespace perflow::explore
