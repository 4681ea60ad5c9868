#include "perflow/explore/file_schema.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../../src/explore/detail/file_fields.hpp"
#include "perflow/core/error.hpp"
#include "perflow/explore/search.hpp"
#include "perflow/explore/sweep.hpp"
#include "perflow/study/config_schema.hpp"

namespace perflow::explore {
namespace {

using Json = nlohmann::ordered_json;

std::vector<std::string> schema_keys(const Json& object) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.at("properties").items()) out.push_back(key);
  return out;
}

// The keys a parser takes from the table, and the comment every object takes.
std::vector<std::string> table_keys(const detail::FileSection& section) {
  std::vector<std::string> out;
  for (std::string_view key : section.keys()) out.emplace_back(key);
  out.emplace_back("comment");
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The schema is generated from the table the parser reads: every key it takes, nothing else.
TEST(SweepSchema, ListsEveryKeyOfTheTable) {
  const Json schema = sweep_schema();
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(schema["title"], "PerFlow sweep");
  EXPECT_EQ(schema_keys(schema),
            (std::vector<std::string>{"$schema", "description", "base", "axes", "zip", "comment"}));
  EXPECT_EQ(schema_keys(schema), table_keys(detail::kSweepSection));
  EXPECT_EQ(schema["required"], Json::array({"base", "axes"}));
  EXPECT_EQ(schema["additionalProperties"], false);
  EXPECT_EQ(schema_keys(schema["$defs"]["range"]), table_keys(detail::kRangeSection));
  EXPECT_EQ(schema["$defs"]["range"]["required"], Json::array({"from", "to", "step"}));
  // An inline base is a config: the config schema's document and objects.
  EXPECT_EQ(schema["properties"]["base"]["anyOf"][1], Json({{"$ref", "#/$defs/config"}}));
  const Json config = study::config_schema();
  EXPECT_EQ(schema["$defs"]["config"]["properties"], config["properties"]);
  // Its objects, with no key required: an axis may give what the base leaves out.
  EXPECT_FALSE(schema["$defs"]["config"].contains("required"));
  for (const auto& [name, def] : config["$defs"].items()) {
    Json optional = def;
    optional.erase("required");
    EXPECT_EQ(schema["$defs"][name], optional) << name;
  }
  EXPECT_EQ(config["$defs"]["pipeline"]["required"], Json::array({"schedule", "stages"}));
}

TEST(SearchSchema, ListsEveryKeyOfTheTable) {
  const Json schema = search_schema();
  EXPECT_EQ(schema["title"], "PerFlow search");
  EXPECT_EQ(schema_keys(schema), table_keys(detail::kSearchSection));
  EXPECT_EQ(schema["required"], Json::array({"base", "cluster"}));
  const Json& defs = schema["$defs"];
  EXPECT_EQ(schema_keys(defs["cluster"]), table_keys(detail::kClusterSection));
  EXPECT_EQ(schema_keys(defs["space"]), table_keys(detail::kSpaceSection));
  EXPECT_EQ(schema_keys(defs["constraints"]), table_keys(detail::kConstraintsSection));
  // The same bounds as the parser.
  EXPECT_EQ(schema["properties"]["top"]["maximum"], 1 << 20);
  EXPECT_EQ(defs["space"]["properties"]["pipeline"]["items"],
            Json({{"type", "integer"}, {"minimum", 1}, {"maximum", 1048576}}));
  EXPECT_EQ(defs["space"]["properties"]["recompute"]["items"]["enum"],
            Json::array({"none", "selective", "full"}));
  const Json& schedules = defs["space"]["properties"]["schedules"]["items"]["enum"];
  EXPECT_NE(std::find(schedules.begin(), schedules.end(), "zbv"), schedules.end());
  EXPECT_EQ(std::find(schedules.begin(), schedules.end(), "custom"), schedules.end());
  // A GPU type: a config's device type and its count.
  const Json& gpu = defs["gpu_type"];
  EXPECT_EQ(gpu["required"], Json::array({"count"}));
  EXPECT_EQ(gpu["properties"]["count"]["maximum"], 1048576);
  EXPECT_EQ(gpu["properties"]["preset"],
            study::config_schema()["$defs"]["device_type"]["properties"]["preset"]);
  // The base: a config without what the search chooses, with a model and training.
  const Json& base = defs["search_base"];
  EXPECT_EQ(base["required"], Json::array({"model", "training"}));
  for (std::string_view key : detail::kSearchChosenKeys) {
    EXPECT_FALSE(base["properties"].contains(key)) << key;
  }
  EXPECT_TRUE(base["properties"].contains("network"));
}

// The parsers name the table's keys when they refuse one (same messages as before the table).
TEST(FileFields, ParsersRefuseKeysOutsideTheTable) {
  EXPECT_EQ(error_of([] {
              parse_sweep(
                  nlohmann::json::parse(R"({"base": "b.json", "axes": {"/a": [1]}, "zips": []})"),
                  {"/a"}, "s.json", ".");
            }),
            "s.json:/zips: unknown key 'zips'; did you mean 'zip'? (valid keys here: $schema, "
            "description, base, axes, zip)");
  EXPECT_EQ(
      error_of([] {
        parse_sweep(nlohmann::json::parse(R"({"base": {}, "axes": {"/model/layers":
                                                     {"from": 1, "to": 2, "stp": 1}}})"),
                    {"/model/layers"}, "s.json", ".");
      }),
      "s.json:/axes/~1model~1layers/stp: unknown key 'stp'; did you mean 'step'? (valid keys here: "
      "from, to, step)");
  const auto search = [](const std::string& extra) {
    return nlohmann::json::parse(
        R"({"base": {"model": {"preset": "gpt-1.7b"}, "training": {"global_batch_size": 8}},
            "cluster": {"gpus": {"H100": {"preset": "h100-sxm", "count": 8}}})" +
        extra + "}");
  };
  EXPECT_EQ(error_of([&] { parse_search(search(R"(, "space": {"chunk": [2]})"), {}, "f.json"); }),
            "f.json:/space/chunk: unknown key 'chunk'; did you mean 'chunks'? (valid keys here: "
            "schedules, pipeline, tensor_parallel, micro_batch_size, chunks, recompute, offload, "
            "layers, expert_parallel, context_parallel, precision, fsdp, fsdp_shard_size)");
  EXPECT_EQ(
      error_of([&] { parse_search(search(R"(, "constraints": {"memry": 1})"), {}, "f.json"); }),
      "f.json:/constraints/memry: unknown key 'memry'; did you mean 'memory'? (valid keys "
      "here: use_all_gpus, memory)");
  EXPECT_EQ(error_of([&] { parse_search(search(R"(, "tops": 3)"), {}, "f.json"); }),
            "f.json:/tops: unknown key 'tops'; did you mean 'top'? (valid keys here: $schema, "
            "description, base, cluster, space, constraints, top)");
}

}  // namespace
}  // namespace perflow::explore
