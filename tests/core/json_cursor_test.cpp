#include "perflow/core/json_cursor.hpp"

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"

namespace perflow {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JsonCursor, ErrorsNameFilePointerExpectationAndValue) {
  const auto doc = nlohmann::json::parse(R"({"pipeline": {"chunks": 0, "name": [1], "x": 2.5}})");
  const JsonCursor root(doc, "cfg.json");
  const JsonCursor pipeline = root.at("pipeline");
  EXPECT_EQ(error_of([&] { (void)pipeline.at("chunks").as_integer(1, 64); }),
            "cfg.json:/pipeline/chunks: expected an integer in [1, 64], got 0");
  EXPECT_EQ(error_of([&] { (void)pipeline.at("name").as_string(); }),
            "cfg.json:/pipeline/name: expected a string, got an array");
  EXPECT_EQ(error_of([&] { (void)pipeline.at("x").as_integer(0, INT64_MAX); }),
            "cfg.json:/pipeline/x: expected an integer >= 0, got 2.5");
  EXPECT_EQ(error_of([&] { (void)pipeline.at("stages"); }),
            "cfg.json:/pipeline: missing required key 'stages'");
  EXPECT_EQ(error_of([&] { (void)root.at("pipeline").at("name").at(3); }),
            "cfg.json:/pipeline/name: index 3 is out of range (the array has 1 element)");
}

TEST(JsonCursor, UnknownKeyGetsDidYouMeanAndValidKeys) {
  const auto doc = nlohmann::json::parse(R"({"stagse": 4})");
  const JsonCursor root(doc, "c.json");
  EXPECT_EQ(error_of([&] {
              root.expect_object({"stages", "microbatches"});
            }),
            "c.json:/stagse: unknown key 'stagse'; did you mean 'stages'? (valid keys here: "
            "stages, microbatches)");
}

TEST(JsonCursor, PointerEscapesSlashAndTilde) {
  const auto doc = nlohmann::json::parse(R"({"a/b": {"c~d": true}})");
  const JsonCursor root(doc, "f");
  EXPECT_EQ(error_of([&] { (void)root.at("a/b").at("c~d").as_string(); }),
            "f:/a~1b/c~0d: expected a string, got true");
}

TEST(JsonCursor, Durations) {
  const auto doc = nlohmann::json::parse(R"({"a": 1315, "b": "1.5us", "c": "fast", "d": -1})");
  const JsonCursor root(doc, "f");
  EXPECT_EQ(root.at("a").as_duration(), 1'315'000);
  EXPECT_EQ(root.at("b").as_duration(), 1500);
  EXPECT_EQ(error_of([&] { (void)root.at("c").as_duration(); }),
            "f:/c: expected a duration with a unit (ns, us, ms, s), got \"fast\"");
  EXPECT_EQ(error_of([&] { (void)root.at("d").as_duration(); }),
            "f:/d: expected a duration >= 0, got -1");
}

TEST(ParseJsonText, SyntaxErrorNamesLineAndColumn) {
  const std::string text = "{\n  \"a\": 1,\n  \"b\": }\n";
  const std::string message = error_of([&] { (void)parse_json_text(text, "bad.json"); });
  EXPECT_TRUE(message.starts_with("bad.json: invalid JSON at line 3, column 8: ")) << message;
}

TEST(ParseJsonText, NumberOverflowIsAConfigError) {
  // Found by the config fuzzer: nlohmann reports this as out_of_range, not parse_error.
  EXPECT_EQ(error_of([&] { (void)parse_json_text(R"({"forward": 2e308})", "big.json"); }),
            "big.json: invalid JSON: number overflow parsing '2e308'");
}

TEST(ParseJsonText, DuplicateKeysAreRejected) {
  EXPECT_EQ(error_of([&] { (void)parse_json_text(R"({"a": {"b": 1, "b": 2}})", "d.json"); }),
            "d.json: invalid JSON at line 1, column 16: key 'b' appears twice in one object");
  EXPECT_NO_THROW((void)parse_json_text(R"({"a": {"b": 1}, "c": {"b": 2}})", "ok.json"));
}

// The position is the second key's: not a "b" in a sibling object or inside a string, and
// an escaped spelling of the same key counts.
TEST(ParseJsonText, DuplicateKeyPositionIsTheSecondKeys) {
  const std::string text =
      "{\"x\": {\"b\": 1}, \"s\": \"\\\"b\\\": 1\",\n"
      " \"pipeline\": {\"b\": [1, {\"b\": 2}]},\n"
      "  \"pip\\u0065line\": {}}";
  EXPECT_EQ(error_of([&] { (void)parse_json_text(text, "d.json"); }),
            "d.json: invalid JSON at line 3, column 3: key 'pipeline' appears twice in one "
            "object");
}

// A string left open runs to the end of the file: the message keeps a short, printable end
// of it, and a byte that is not UTF-8 is escaped, not printed raw.
TEST(ParseJsonText, WhatWasLastReadIsShortAndPrintable) {
  const std::string open = "{\"description\": \"abc" + std::string(100000, 'x') + "\n";
  const std::string message = error_of([&] { (void)parse_json_text(open, "u.json"); });
  EXPECT_EQ(message,
            "u.json: invalid JSON at line 1, column 100021: syntax error while parsing value - "
            "invalid string: control character U+000A (LF) must be escaped to \\u000A or \\n; "
            "last read: '...xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx<U+000A>'");
  EXPECT_EQ(error_of([&] { (void)parse_json_text("{\"a\": \"1f1b\xff\"}", "f.json"); }),
            "f.json: invalid JSON at line 1, column 12: syntax error while parsing value - "
            "invalid string: ill-formed UTF-8 byte; last read: '\"1f1b\\xff'");
}

TEST(ReadJsonFile, OnlyRegularFiles) {
  EXPECT_EQ(error_of([&] { (void)read_json_file("/dev/zero"); }),
            "/dev/zero: is not a regular file");
  EXPECT_EQ(error_of([&] { (void)read_json_file("/tmp"); }),
            "/tmp: is a directory, not a JSON file");
}

TEST(ReadJsonFile, MissingFileIsAConfigError) {
  EXPECT_EQ(error_of([&] { (void)read_json_file("/nonexistent/perflow.json"); }),
            "/nonexistent/perflow.json: cannot open the file for reading");
}

}  // namespace
}  // namespace perflow
