// The streaming writer against nlohmann::json::dump, byte for byte: strings (escapes,
// UTF-8, invalid UTF-8), integers, doubles (nlohmann's Grisu2 digits and layout), and whole
// random documents at several indents.
#include "perflow/core/json_writer.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace perflow {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

/// nlohmann's dump of a string, invalid UTF-8 replaced (as the writer does).
std::string nlohmann_string(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string streamed_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::string streamed_number(double x) {
  std::string out;
  append_json_number(out, x);
  return out;
}

TEST(JsonWriterStrings, EscapesAsNlohmann) {
  std::vector<std::string> cases = {
      "",
      "plain",
      "quote \" and backslash \\",
      "\"\\\"",
      "tab\tnewline\ncarriage\rback\bform\f",
      std::string("nul \0 inside", 12),
      "del \x7F stays",
      "slash / stays",
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80",  // 2, 3 and 4 byte UTF-8
      "\xEF\xBF\xBD",                               // U+FFFD itself
      "\xF4\x8F\xBF\xBF",                           // U+10FFFF
  };
  for (int c = 0; c < 0x20; ++c) cases.push_back(std::string(1, static_cast<char>(c)));
  for (const std::string& text : cases) {
    EXPECT_EQ(streamed_string(text), json(text).dump()) << json(text).dump();
  }
  EXPECT_EQ(streamed_string("a\x01z"), R"("a\u0001z")");
  EXPECT_EQ(streamed_string("\x1f"), R"("\u001f")");
}

TEST(JsonWriterStrings, InvalidUtf8ReplacedAsNlohmann) {
  const std::vector<std::string> cases = {
      "\xFF",
      "\x80",
      "abc\xC3",
      "\xC3(",
      "\xC0\xAF",  // overlong
      "\xE0\x80\x80",
      "\xED\xA0\x80",      // surrogate
      "\xF4\x90\x80\x80",  // > U+10FFFF
      "\xF0\x9F\x98",
      "\xF0\x9F\x98z",
      "\xE2\x82",
      "\xE2\x82\xE2\x82\xAC",
      "\xF5\x80\x80\x80",
      "x\xC2\xC2\xA9y",
  };
  for (const std::string& text : cases) {
    EXPECT_EQ(streamed_string(text), nlohmann_string(text)) << nlohmann_string(text);
  }
}

// Random byte strings biased towards UTF-8 lead and continuation bytes and escapes.
TEST(JsonWriterStrings, RandomBytesAsNlohmann) {
  const unsigned seed = 20240601;
  std::mt19937 rng(seed);
  const unsigned char interesting[] = {0x00, 0x01, 0x08, 0x09, 0x0A, 0x1F, 0x20, '"',  '\\',
                                       'a',  0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0,
                                       0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF,
                                       0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
  for (int n = 0; n < 100'000; ++n) {
    std::string text(rng() % 12, ' ');
    for (char& c : text) {
      c = static_cast<char>(rng() % 2 ? interesting[rng() % sizeof interesting] : rng() % 256);
    }
    ASSERT_EQ(streamed_string(text), nlohmann_string(text)) << "seed " << seed << " case " << n;
  }
}

TEST(JsonWriterNumbers, IntegersAsNlohmann) {
  for (const std::int64_t x :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{7}, std::int64_t{-1315},
        std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}) {
    std::string out;
    append_json_number(out, x);
    EXPECT_EQ(out, json(x).dump());
  }
  for (const std::uint64_t x :
       {std::uint64_t{0}, std::uint64_t{10}, std::numeric_limits<std::uint64_t>::max()}) {
    std::string out;
    append_json_number(out, x);
    EXPECT_EQ(out, json(x).dump());
  }
}

TEST(JsonWriterNumbers, DoublesAsNlohmann) {
  // The layout: fixed notation with ".0" for integers up to 1e15, scientific beyond and
  // below 1e-4, two-digit exponents; non-finite as null.
  EXPECT_EQ(streamed_number(0.1), "0.1");
  EXPECT_EQ(streamed_number(100.0), "100.0");
  EXPECT_EQ(streamed_number(0.0), "0.0");
  EXPECT_EQ(streamed_number(-0.0), "-0.0");
  EXPECT_EQ(streamed_number(1e20), "1e+20");
  EXPECT_EQ(streamed_number(1.5e-7), "1.5e-07");
  EXPECT_EQ(streamed_number(1e-5), "1e-05");
  EXPECT_EQ(streamed_number(0.0001), "0.0001");
  EXPECT_EQ(streamed_number(1e15), "1e+15");
  EXPECT_EQ(streamed_number(123456789012345.0), "123456789012345.0");
  EXPECT_EQ(streamed_number(0.2727272727272727), "0.2727272727272727");
  EXPECT_EQ(streamed_number(std::nan("")), "null");
  EXPECT_EQ(streamed_number(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(streamed_number(-std::numeric_limits<double>::infinity()), "null");
  // Grisu2 is not always the shortest form: here nlohmann (and the writer) print 17 digits
  // where std::to_chars prints 16.
  EXPECT_EQ(streamed_number(4.1767526543242814), "4.1767526543242814");

  const double special[] = {std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::lowest(),
                            std::numeric_limits<double>::epsilon(),
                            9007199254740992.0,
                            9007199254740993.0,
                            1e16,
                            1e-4,
                            0.5,
                            1.0 / 3.0,
                            2.0 / 3.0,
                            57691668480.0,
                            174577692672.0,
                            1e308,
                            1e-308,
                            5e-324};
  for (const double x : special) {
    EXPECT_EQ(streamed_number(x), json(x).dump());
    EXPECT_EQ(streamed_number(-x), json(-x).dump());
  }

  // Random bit patterns (every exponent), decimal-looking values and ratios as the
  // metrics produce them, and integers as doubles.
  const unsigned seed = 1315;
  std::mt19937_64 rng(seed);
  for (int n = 0; n < 60'000; ++n) {
    const std::uint64_t bits = rng();
    double values[4];
    std::memcpy(&values[0], &bits, sizeof bits);
    values[1] = static_cast<double>(rng() % 100'000'000) * std::pow(10.0, int(rng() % 40) - 20);
    values[2] = static_cast<double>(rng() % 1'000'000) / static_cast<double>(1 + rng() % 1'000'000);
    values[3] = static_cast<double>(rng() >> (rng() % 64));
    for (const double x : values) {
      ASSERT_EQ(streamed_number(x), json(x).dump()) << "seed " << seed << " case " << n;
    }
  }
}

/// Builds a random document twice: as an nlohmann tree and through the writer.
class RandomDocument {
 public:
  RandomDocument(unsigned seed, int indent) : rng_(seed), writer_(text_, indent) {}

  ordered_json build() { return value(0); }
  const std::string& text() const { return text_; }
  bool complete() const { return writer_.complete(); }

 private:
  ordered_json value(int depth) {
    const unsigned kind = next(depth >= 4 ? 7 : 9);
    switch (kind) {
      case 0:
        writer_.value(nullptr);
        return nullptr;
      case 1: {
        const bool b = next(2) == 1;
        writer_.value(b);
        return b;
      }
      case 2: {
        const std::int64_t x = std::int64_t{next(1u << 31)} - (std::int64_t{1} << 30);
        writer_.value(x);
        return x;
      }
      case 3: {
        const std::uint32_t x = next(4'000'000'000u);
        writer_.value(x);
        return x;
      }
      case 4: {
        const double x = static_cast<double>(next(1u << 31)) / 7.0 - 1e8;
        writer_.value(x);
        return x;
      }
      case 5:
      case 6: {
        const std::string s = string();
        writer_.value(s);
        return s;
      }
      case 7: {
        ordered_json array = ordered_json::array();
        writer_.begin_array();
        for (unsigned n = next(4); n > 0; --n) array.push_back(value(depth + 1));
        writer_.end_array();
        return array;
      }
      default: {
        ordered_json object = ordered_json::object();
        writer_.begin_object();
        for (unsigned n = next(4); n > 0; --n) {
          const std::string key = string() + std::to_string(object.size());  // unique
          writer_.key(key);
          object[key] = value(depth + 1);
        }
        writer_.end_object();
        return object;
      }
    }
  }

  unsigned next(unsigned n) { return static_cast<unsigned>(rng_() % n); }

  std::string string() {
    static const char* const pieces[] = {"a", "key", "\"", "\\", "\n", "\x01", "\xC3\xA9", " "};
    std::string s;
    for (unsigned n = next(4); n > 0; --n) s += pieces[next(8)];
    return s;
  }

  std::mt19937 rng_;
  std::string text_;
  JsonWriter writer_;
};

TEST(JsonWriter, RandomDocumentsAsNlohmannDump) {
  for (const int indent : {-1, 0, 1, 2, 4}) {
    for (unsigned seed = 0; seed < 2000; ++seed) {
      RandomDocument doc(seed, indent);
      const ordered_json tree = doc.build();
      ASSERT_TRUE(doc.complete());
      ASSERT_EQ(doc.text(), tree.dump(indent)) << "seed " << seed << " indent " << indent;
    }
  }
}

TEST(JsonWriter, LayoutOfDump1) {
  std::string out;
  JsonWriter w(out, 1);
  w.begin_object()
      .field("a", 1)
      .key("b")
      .begin_array()
      .value("x")
      .begin_object()
      .end_object()
      .begin_array()
      .end_array()
      .end_array()
      .field("c", nullptr)
      .field("d", 2.5)
      .field("e", false)
      .end_object();
  EXPECT_TRUE(w.complete());
  EXPECT_EQ(out,
            "{\n \"a\": 1,\n \"b\": [\n  \"x\",\n  {},\n  []\n ],\n \"c\": null,\n"
            " \"d\": 2.5,\n \"e\": false\n}");
  const json tree = {{"a", 1},
                     {"b", {"x", json::object(), json::array()}},
                     {"c", nullptr},
                     {"d", 2.5},
                     {"e", false}};
  EXPECT_EQ(out, tree.dump(1));
}

TEST(JsonWriter, CompactAndScalarDocuments) {
  std::string out;
  JsonWriter w(out);
  EXPECT_FALSE(w.complete());
  w.begin_array().value(1).value(-2).value("3").raw_value("{\"raw\":true}").end_array();
  EXPECT_TRUE(w.complete());
  EXPECT_EQ(out, R"([1,-2,"3",{"raw":true}])");

  std::string scalar;
  JsonWriter(scalar, 1).value(0.1);
  EXPECT_EQ(scalar, "0.1");
  std::string empty_object;
  JsonWriter(empty_object, 1).begin_object().end_object();
  EXPECT_EQ(empty_object, "{}");
}

// plain_strings writes the bytes value() writes for each string: every indent, runs long
// enough to fill its buffer many times, labels of every length up to the bound, separators
// short and long (depth 600 at indent 8 takes the one-by-one fallback), and runs split
// across calls and mixed with values.
TEST(JsonWriter, PlainStringsAsValues) {
  std::mt19937 random(7);
  const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.@ -_:/";
  for (const int indent : {-1, 0, 1, 2, 8}) {
    for (const std::size_t depth : {std::size_t{0}, std::size_t{3}, std::size_t{600}}) {
      for (const std::size_t count :
           {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{5000}}) {
        std::vector<std::string> texts(count);
        for (std::string& text : texts) {
          text.resize(random() % 41);
          for (char& c : text) c = alphabet[random() % alphabet.size()];
        }
        std::string expected;
        std::string actual;
        JsonWriter by_value(expected, indent);
        JsonWriter plain(actual, indent);
        for (std::size_t d = 0; d < depth; ++d) {
          by_value.begin_array();
          plain.begin_array();
        }
        by_value.begin_array().value(1);
        plain.begin_array().value(1);
        for (const std::string& text : texts) by_value.value(text);
        by_value.value("end");
        const std::size_t half = count / 2;  // two calls, the second after an element
        const auto put = [&](std::size_t offset) {
          return [&, offset](std::size_t i, char* p) {
            const std::string& text = texts[offset + i];
            std::memcpy(p, text.data(), text.size());
            return p + text.size();
          };
        };
        plain.plain_strings(half, 40, put(0)).plain_strings(count - half, 40, put(half));
        plain.value("end");
        for (std::size_t d = 0; d <= depth; ++d) {
          by_value.end_array();
          plain.end_array();
        }
        ASSERT_TRUE(plain.complete());
        ASSERT_EQ(actual, expected)
            << "indent " << indent << " depth " << depth << " count " << count;
      }
    }
  }
  // The first element of an array, and an array of plain strings alone, as dump lays them out.
  std::string out;
  JsonWriter w(out, 1);
  w.begin_object().key("order").begin_array();
  const std::vector<std::string> labels = {"F0.0", "B12.1", "W3.0@2"};
  w.plain_strings(labels.size(), 8, [&](std::size_t i, char* p) {
    std::memcpy(p, labels[i].data(), labels[i].size());
    return p + labels[i].size();
  });
  w.end_array().end_object();
  EXPECT_EQ(out, json({{"order", labels}}).dump(1));

  // One string as the whole document.
  std::string root;
  JsonWriter only(root, 2);
  only.plain_strings(1, 8, [&](std::size_t, char* p) {
    std::memcpy(p, "F0.0", 4);
    return p + 4;
  });
  EXPECT_TRUE(only.complete());
  EXPECT_EQ(root, "\"F0.0\"");
}

}  // namespace
}  // namespace perflow
