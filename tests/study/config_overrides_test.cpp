#include "perflow/study/config_overrides.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "perflow/study/config.hpp"
#include "perflow/study/device_display.hpp"

namespace perflow::study {
namespace {

nlohmann::json base() {
  return nlohmann::json::parse(R"({
    "pipeline": {"schedule": "1f1b", "stages": 4, "microbatches": 8},
    "costs": {"forward": 10, "backward": 20, "weight": 15}
  })");
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ConfigOverride, ValueIsJsonOrABareWordString) {
  EXPECT_EQ(parse_override("/pipeline/stages=16").value, nlohmann::json(16));
  EXPECT_EQ(parse_override("/pipeline/schedule=zbv").value, nlohmann::json("zbv"));
  EXPECT_EQ(parse_override("/costs/forward=1.5ms").value, nlohmann::json("1.5ms"));
  EXPECT_EQ(parse_override(R"(/costs/forward="16")").value, nlohmann::json("16"));
  EXPECT_EQ(parse_override("/pipeline/split_backward=true").value, nlohmann::json(true));
  EXPECT_EQ(parse_override(R"(/parts=[{"a":1}])").value, nlohmann::json::parse(R"([{"a":1}])"));
  // Only the first '=' separates: a value may contain one.
  EXPECT_EQ(parse_override("/description=a=b").value, nlohmann::json("a=b"));
  EXPECT_EQ(parse_override("/description=").value, nlohmann::json(""));
}

TEST(ConfigOverride, MalformedTextIsNamed) {
  EXPECT_EQ(message_of([] { parse_override("/pipeline/stages"); }),
            "--set '/pipeline/stages': expected POINTER=VALUE such as /pipeline/stages=8");
  EXPECT_EQ(message_of([] { parse_override("stages=8"); }),
            "--set 'stages=8': expected a JSON pointer starting with '/' before '=', such as "
            "/pipeline/stages, found 'stages'");
  EXPECT_EQ(message_of([] { parse_override("/a~2=1"); }),
            "--set '/a~2=1': '/a~2' is not a JSON pointer ('~' must be followed by 0 or 1)");
  // A raw byte became a string the messages could not print (nlohmann threw type_error.316;
  // found by the set_override fuzz target).
  EXPECT_EQ(
      message_of([] { parse_override("/pipeline/stages=\xf7"); }),
      "--set '/pipeline/stages=\\xf7': expected UTF-8 text, found the byte 0xf7 at offset 17");
  EXPECT_EQ(message_of([] { parse_override("/description=caf\xc3\xa9"); }), "(no error)");
}

TEST(ConfigOverride, SetsReplacesAndCreatesFieldsInOrder) {
  nlohmann::json document = base();
  const std::vector<ConfigOverride> overrides = {
      parse_override("/pipeline/stages=8"), parse_override("/pipeline/stages=16"),
      parse_override("/simulation/mode=greedy"), parse_override("/a~1b=1")};
  apply_overrides(document, overrides, "c.json");
  EXPECT_EQ(document["pipeline"]["stages"], 16);  // the last one wins
  EXPECT_EQ(document["simulation"], nlohmann::json::parse(R"({"mode": "greedy"})"));
  EXPECT_EQ(document["a/b"], 1);
  EXPECT_EQ(document["costs"], base()["costs"]);
}

TEST(ConfigOverride, AFieldInsideAScalarIsRefusedAtItsParent) {
  nlohmann::json document = base();
  const std::vector<ConfigOverride> overrides = {parse_override("/pipeline/stages/x=1")};
  EXPECT_EQ(message_of([&] { apply_overrides(document, overrides, "c.json"); }),
            "c.json:/pipeline/stages: --set '/pipeline/stages/x=1': cannot set a field inside "
            "a number");
}

TEST(ConfigOverride, AnArrayIndexNamesAnElementOrTheEndNeverBeyond) {
  nlohmann::json document = nlohmann::json::parse(R"({"costs": {"overrides": [{"stages": 0}]}})");
  const std::vector<ConfigOverride> ok = {parse_override("/costs/overrides/0/forward=5"),
                                          parse_override(R"(/costs/overrides/1={"stages": 1})"),
                                          parse_override(R"(/costs/overrides/-={"stages": 2})"),
                                          parse_override("/parts/0/stages=[0]")};
  apply_overrides(document, ok, "c.json");
  EXPECT_EQ(
      document["costs"]["overrides"],
      nlohmann::json::parse(R"([{"stages": 0, "forward": 5}, {"stages": 1}, {"stages": 2}])"));
  // A missing container under an index is an array.
  EXPECT_EQ(document["parts"], nlohmann::json::parse(R"([{"stages": [0]}])"));

  // A huge index used to pad the array with a billion nulls; it is refused before allocating.
  nlohmann::json huge = document;
  const std::vector<ConfigOverride> beyond = {
      parse_override(R"(/costs/overrides/1000000000={"stages":0})")};
  EXPECT_EQ(message_of([&] { apply_overrides(huge, beyond, "c.json"); }),
            "c.json:/costs/overrides: --set '/costs/overrides/1000000000={\"stages\":0}': index "
            "1000000000 is beyond the end of this array of 3 (an index from 0 to 3, or '-' to "
            "append)");
  EXPECT_EQ(huge["costs"]["overrides"].size(), 3u);
  const std::vector<ConfigOverride> fresh = {parse_override("/x/5=1")};
  EXPECT_EQ(message_of([&] { apply_overrides(huge, fresh, "c.json"); }),
            "c.json:/x: --set '/x/5=1': index 5 is beyond the end of this array of 0 (an index "
            "from 0 to 0, or '-' to append)");
  const std::vector<ConfigOverride> word = {parse_override("/costs/overrides/01=1")};
  EXPECT_EQ(message_of([&] { apply_overrides(huge, word, "c.json"); }),
            "c.json:/costs/overrides: --set '/costs/overrides/01=1': '01' is not an index of this "
            "array (an index from 0 to 3, or '-' to append)");
}

TEST(ConfigOverride, ParsedConfigHasTheOverriddenValues) {
  const std::vector<ConfigOverride> overrides = {parse_override("/pipeline/schedule=zbv"),
                                                 parse_override("/pipeline/chunks=2"),
                                                 parse_override("/pipeline/microbatches=12")};
  const Config config = parse_config(base(), "c.json", overrides);
  EXPECT_EQ(config.pipeline.schedule, "zbv");
  EXPECT_EQ(config.pipeline.chunks, 2u);
  EXPECT_EQ(config.pipeline.microbatches, 12u);
  EXPECT_EQ(config.pipeline.stages, 4u);
}

TEST(ConfigOverride, TheTitleSaysWhatWasChanged) {
  nlohmann::json described = base();
  described["description"] = "1F1B on 4 GPUs";
  const std::vector<ConfigOverride> overrides = {parse_override("/pipeline/schedule=zb-h1"),
                                                 parse_override("/pipeline/microbatches=12")};
  const Config changed = parse_config(described, "c.json", overrides);
  EXPECT_EQ(run_display(changed, build_graph(changed)).title,
            "1F1B on 4 GPUs (with --set /pipeline/schedule=zb-h1, --set "
            "/pipeline/microbatches=12)");
  // Unchanged, a new description, or none: the title is the description or the schedule.
  const Config as_written = parse_config(described, "c.json");
  EXPECT_EQ(run_display(as_written, build_graph(as_written)).title, "1F1B on 4 GPUs");
  const std::vector<ConfigOverride> retitled = {parse_override("/description=\"ZB-H1\"")};
  const Config renamed = parse_config(described, "c.json", retitled);
  EXPECT_EQ(run_display(renamed, build_graph(renamed)).title, "ZB-H1");
  const Config plain = parse_config(base(), "c.json", overrides);
  EXPECT_EQ(run_display(plain, build_graph(plain)).title, "zb-h1");
}

TEST(ConfigOverride, ErrorsAtAnOverriddenFieldSaySo) {
  const std::vector<ConfigOverride> overrides = {parse_override("/pipeline/stages=0")};
  EXPECT_EQ(message_of([&] { parse_config(base(), "c.json", overrides); }),
            "c.json:/pipeline/stages: expected an integer in [1, 65536], got 0 (set by --set "
            "'/pipeline/stages=0')");
  // A whole section set: errors inside it name the override too.
  const std::vector<ConfigOverride> section = {parse_override(R"(/costs={"forward": -1})")};
  EXPECT_NE(message_of([&] {
              parse_config(base(), "c.json", section);
            }).find("(set by --set '/costs={\"forward\": -1}')"),
            std::string::npos);
  // A misspelt section that only the override created is the override's doing.
  const std::vector<ConfigOverride> typo = {parse_override("/pipline/stages=8")};
  const std::string message = message_of([&] { parse_config(base(), "c.json", typo); });
  EXPECT_TRUE(
      message.starts_with("c.json:/pipline: unknown key 'pipline'; did you mean "
                          "'pipeline'?"))
      << message;
  EXPECT_TRUE(message.ends_with("(set by --set '/pipline/stages=8')")) << message;
  // A section the file has is not: an error about it stays the file's.
  nlohmann::json no_schedule = base();
  no_schedule["pipeline"].erase("schedule");
  const std::vector<ConfigOverride> stages = {parse_override("/pipeline/stages=8")};
  EXPECT_EQ(message_of([&] { parse_config(no_schedule, "c.json", stages); }).find("set by"),
            std::string::npos);
  // Errors elsewhere are unchanged.
  const std::vector<ConfigOverride> other = {parse_override("/description=x")};
  nlohmann::json bad = base();
  bad["pipeline"]["stages"] = 0;
  EXPECT_EQ(message_of([&] { parse_config(bad, "c.json", other); }),
            "c.json:/pipeline/stages: expected an integer in [1, 65536], got 0");
}

}  // namespace
}  // namespace perflow::study
