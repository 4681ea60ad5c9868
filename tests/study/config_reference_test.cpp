// The config reference (docs/config-reference.md, `perflow schema --format markdown`) is
// generated from the table the parser reads: every key of it, with its type, bounds and
// default. (tests/schema/check_config_reference.py checks the page against the program.)
#include <string>

#include <gtest/gtest.h>

#include "../../src/study/detail/config_fields.hpp"
#include "perflow/study/config_schema.hpp"

namespace perflow::study {
namespace {

TEST(ConfigReference, ShowsEachKeyWithItsTypeDefaultAndMeaning) {
  const std::string page = config_reference_markdown();
  EXPECT_TRUE(page.starts_with("# Config reference\n")) << page.substr(0, 100);
  // A key of an object at one place: its whole pointer, bounds, required or default.
  EXPECT_NE(page.find("| `/pipeline/stages` | integer in [1, 65536] | required | pipeline "
                      "devices (p) |\n"),
            std::string::npos);
  EXPECT_NE(page.find("| `/pipeline/chunks` | integer in [1, 256] | `1` | model chunks per "
                      "device (v), default 1 |\n"),
            std::string::npos);
  EXPECT_NE(page.find("| `/simulation/mode` | `\"ordered\"` or `\"greedy\"` | `\"ordered\"` | "),
            std::string::npos);
  EXPECT_NE(page.find("| `/pipeline/memory_limit` | number in (0, 1e9] | "), std::string::npos);
  EXPECT_NE(page.find("| `/costs/overrides` | array of [override](#override) |  | "),
            std::string::npos);
  // An object at several places: where, then its keys.
  EXPECT_NE(page.find("## link\n\nA link: latency and bandwidth. At `/device_types/<name>/"
                      "host_link`, `/network/intra_node`, "),
            std::string::npos);
  EXPECT_NE(page.find("| `\u2026/latency` | [duration](#duration) | `0` | per transfer |\n"),
            std::string::npos);
  // The cost fields are listed once, under /costs; the others that take them say so.
  EXPECT_NE(page.find("It takes the keys of [costs](#costs) listed there: `forward`, "),
            std::string::npos);
  // Every key of every object, and every object's heading.
  const auto check = [&page](const detail::Section& section, auto& self) -> void {
    EXPECT_NE(page.find("\n## " + std::string(section.name) + "\n"), std::string::npos)
        << section.name;
    for (const auto& part : section.parts) {
      for (const detail::Field& field : part) {
        EXPECT_NE(page.find("/" + std::string(field.name) + "` |"), std::string::npos)
            << section.name << "." << field.name;
        if (field.section != nullptr) self(*field.section, self);
      }
    }
  };
  check(detail::kConfigSection, check);
  // The value types and the names a config may use.
  EXPECT_NE(page.find("\n### duration\n\nA JSON number of microseconds"), std::string::npos);
  EXPECT_NE(page.find("`1f1b`"), std::string::npos);
  EXPECT_NE(page.find("`llama3-70b`"), std::string::npos);
  EXPECT_NE(page.find("`h100-sxm`"), std::string::npos);
}

}  // namespace
}  // namespace perflow::study
