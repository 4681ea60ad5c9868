// Marker presets and user patterns: the exact (kind, stage, microbatch, chunk, part) tuple
// for each convention of FORMATS.md section 1.5, and names that must not match.
#include "perflow/reader/markers.hpp"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"
#include "perflow/reader/measurement.hpp"
#include "profile_test_support.hpp"

namespace perflow::reader {
namespace {

using K = MarkerKind;
constexpr std::optional<std::uint32_t> none = std::nullopt;

MarkerMatch m(K kind, std::optional<std::uint32_t> stage, std::optional<std::uint32_t> mb,
              std::optional<std::uint32_t> chunk, std::string part = {}) {
  return MarkerMatch{kind, stage, mb, chunk, std::move(part)};
}

std::optional<MarkerMatch> classify(std::string_view preset, std::string_view name) {
  return MarkerClassifier::preset(preset).classify(name);
}

TEST(Markers, TorchPipelining) {
  EXPECT_EQ(classify("torch-pipelining", "PP:0F3"), m(K::Forward, 0, 3, none));
  EXPECT_EQ(classify("torch-pipelining", "PP:1I2"), m(K::Backward, 1, 2, none));
  EXPECT_EQ(classify("torch-pipelining", "PP:1W2"), m(K::Weight, 1, 2, none));
  EXPECT_EQ(classify("torch-pipelining", "PP:0B0"), m(K::FullBackward, 0, 0, none));
  EXPECT_EQ(classify("torch-pipelining", "PP:12F345"), m(K::Forward, 12, 345, none));
  EXPECT_EQ(classify("torch-pipelining", "Forward 7"), m(K::Forward, none, 7, none));
  EXPECT_EQ(classify("torch-pipelining", "Backward 7"), m(K::FullBackward, none, 7, none));
  for (const char* other :
       {"PP:2SEND_F1", "PP:1RECV_B0", "PP:0UNSHARD", "PP:0REDUCE_GRAD", "(0F1;1B0)OVERLAP_F_B",
        "PP:F3", "PP:0F", "PP:0F3x", "PP:0X3", "PP:99999999999F1", "Forward", "Forward x", "PP:"}) {
    EXPECT_EQ(classify("torch-pipelining", other), std::nullopt) << other;
  }
}

TEST(Markers, ZeroBubbleNvtx) {
  EXPECT_EQ(classify("zb-nvtx", "F0.1.0"), m(K::Forward, none, 0, 1));
  EXPECT_EQ(classify("zb-nvtx", "B12.0.3"), m(K::Backward, none, 12, 0));
  EXPECT_EQ(classify("zb-nvtx", "W3.1.0"), m(K::Weight, none, 3, 1));
  for (const char* other : {"F0.1", "F0.1.0.2", "X0.1.0", "F.1.0", "F0..0", "iter_0_1", "F"}) {
    EXPECT_EQ(classify("zb-nvtx", other), std::nullopt) << other;
  }
}

TEST(Markers, DeepSeek) {
  EXPECT_EQ(classify("deepseek", "attn(F)"), m(K::Forward, none, none, none, "attn"));
  EXPECT_EQ(classify("deepseek", "mlp(W)"), m(K::Weight, none, none, none, "mlp"));
  EXPECT_EQ(classify("deepseek", "dispatch(B)"), m(K::Backward, none, none, none, "dispatch"));
  EXPECT_EQ(classify("deepseek", "combine_2(F)"), m(K::Forward, none, none, none, "combine_2"));
  for (const char* other : {"(F)", "attn(X)", "attn(FB)", "at tn(F)", "1F1B", "attn F"}) {
    EXPECT_EQ(classify("deepseek", other), std::nullopt) << other;
  }
}

TEST(Markers, MegatronCallStack) {
  EXPECT_EQ(classify("megatron-callstack",
                     "megatron/core/pipeline_parallel/schedules.py(275): forward_step"),
            m(K::Forward, none, none, none));
  EXPECT_EQ(classify("megatron-callstack", "schedules.py(1): backward_step"),
            m(K::FullBackward, none, none, none));
  for (const char* other :
       {"schedules.py(275): forward_step_calc_loss", "schedules.py(): forward_step",
        "utils.py(12): forward_step", "forward_step"}) {
    EXPECT_EQ(classify("megatron-callstack", other), std::nullopt) << other;
  }
}

TEST(Markers, Ddp) {
  EXPECT_EQ(classify("ddp", "## forward ##"), m(K::Forward, none, none, none));
  EXPECT_EQ(classify("ddp", "## backward ##"), m(K::FullBackward, none, none, none));
  EXPECT_EQ(classify("ddp", "## optimizer ##"), std::nullopt);
  EXPECT_EQ(classify("ddp", "DistributedDataParallel.forward"), std::nullopt);
}

TEST(Markers, PerflowAi) {
  EXPECT_EQ(classify("perflow-ai", "forward_step-16-1"), m(K::Forward, none, none, 1));
  EXPECT_EQ(classify("perflow-ai", "backward_step-0-4"), m(K::FullBackward, none, none, 4));
  EXPECT_EQ(classify("perflow-ai", "forward_step"), m(K::Forward, none, none, none));
  EXPECT_EQ(classify("perflow-ai", "forward_step_x"), m(K::Forward, none, none, none));
  EXPECT_EQ(classify("perflow-ai", "forward_step-3"), m(K::Forward, none, none, none));
  EXPECT_EQ(classify("perflow-ai", "schedules.py(1): forward_step"), std::nullopt);
}

TEST(Markers, EveryPresetIsListedAndBuilds) {
  ASSERT_EQ(marker_presets().size(), 6u);
  for (const MarkerPreset& preset : marker_presets()) {
    const MarkerClassifier classifier = MarkerClassifier::preset(preset.name);
    EXPECT_EQ(classifier.name(), preset.name);
    EXPECT_FALSE(preset.description.empty());
    EXPECT_EQ(classifier.classify(""), std::nullopt);
  }
}

TEST(Markers, UnknownPresetListsTheValidOnes) {
  try {
    (void)MarkerClassifier::preset("torch-pipeline");
    FAIL();
  } catch (const UnknownNameError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown marker preset 'torch-pipeline'; did you mean 'torch-pipelining'? "
                 "(valid: torch-pipelining, zb-nvtx, deepseek, megatron-callstack, ddp, "
                 "perflow-ai)");
  }
}

TEST(Markers, UserPatternWithNamedCaptures) {
  const MarkerClassifier c = MarkerClassifier::pattern(
      R"(^step(?<stage>\d+)_(?<kind>fwd|bwd|[IW])_(?<mb>\d+)(?:_c(?<chunk>\d))?$)");
  EXPECT_EQ(c.name(), "pattern");
  EXPECT_EQ(c.classify("step2_fwd_5"), m(K::Forward, 2, 5, none));
  EXPECT_EQ(c.classify("step2_bwd_5_c1"), m(K::FullBackward, 2, 5, 1));
  EXPECT_EQ(c.classify("step0_I_1"), m(K::Backward, 0, 1, none));
  EXPECT_EQ(c.classify("step0_W_1"), m(K::Weight, 0, 1, none));
  EXPECT_EQ(c.classify("xstep2_fwd_5"), std::nullopt);
  // Kind words are case-insensitive; the search is unanchored without ^ $.
  const MarkerClassifier loose = MarkerClassifier::pattern(R"(\[(?<kind>\w+)\])");
  EXPECT_EQ(loose.classify("layer [Forward] 3"), m(K::Forward, none, none, none));
  EXPECT_EQ(loose.classify("layer [Weight]"), m(K::Weight, none, none, none));
  EXPECT_EQ(loose.classify("layer [optimizer]"), std::nullopt);  // not a kind
  // Groups inside classes and escaped parentheses do not shift the numbering.
  const MarkerClassifier tricky = MarkerClassifier::pattern(R"([(]\((?<kind>F|B)\)(?<mb>\d+))");
  EXPECT_EQ(tricky.classify("((F)12"), m(K::Forward, none, 12, none));
}

std::string pattern_error(std::string_view regex) {
  try {
    (void)MarkerClassifier::pattern(regex);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Markers, BadPatternsAreErrors) {
  EXPECT_EQ(
      pattern_error(R"(^(?<mb>\d+)$)"),
      R"(--pattern '^(?<mb>\d+)$': expected a (?<kind>...) capture (F, B/I, W or BW), found none)");
  EXPECT_EQ(pattern_error("(?<kind>F)(?<micro>1)"),
            "--pattern '(?<kind>F)(?<micro>1)': unknown capture name 'micro' (valid: kind, stage, "
            "mb, chunk)");
  EXPECT_EQ(pattern_error("(?<kind>F)(?<kind>B)"),
            "--pattern '(?<kind>F)(?<kind>B)': capture 'kind' given twice");
  EXPECT_NE(pattern_error("(?<kind>F").find("invalid regular expression"), std::string::npos);
  EXPECT_NE(pattern_error("(?<kind").find("unterminated (?<name>"), std::string::npos);
}

// Issue 35: std::regex recursed once per character (a stack overflow at 30,000) and
// backtracked exponentially; RE2 matches in time linear in the name, without recursion.
TEST(Markers, UserPatternOnALongNameDoesNotOverflowTheStack) {
  const std::string name = "F" + std::string(30000, 'a');
  const MarkerClassifier c = MarkerClassifier::pattern("(?<kind>F)(a|b)*");
  EXPECT_EQ(c.classify(name), m(K::Forward, none, none, none));
  EXPECT_EQ(MarkerClassifier::pattern("(?<kind>F)(a*)*$").classify(name),
            m(K::Forward, none, none, none));
  EXPECT_EQ(MarkerClassifier::pattern(R"(^F(a|b)*(?<mb>\d+)(?<kind>W)$)").classify(name + "17W"),
            m(K::Weight, none, 17, none));
}

TEST(Markers, UserPatternDoesNotBacktrack) {
  const MarkerClassifier c = MarkerClassifier::pattern("(?<kind>F)(a*)*b");
  EXPECT_EQ(c.classify("F" + std::string(30, 'a')), std::nullopt);
  EXPECT_EQ(c.classify("F" + std::string(30000, 'a')), std::nullopt);
  EXPECT_EQ(c.classify("F" + std::string(30, 'a') + "b"), m(K::Forward, none, none, none));
}

// A Kineto trace of one annotation `name` over one kernel of 5 us.
std::string one_range_trace(const std::string& name) {
  return R"({"schemaVersion": 1, "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": ")" +
         name + R"(", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 2, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 1}}
]}
)";
}

// The reproducers of issue 35 through what `perflow measured` and `perflow costs` run.
TEST(Markers, MeasuringALongNameWithAUserPattern) {
  ProfileRequest request;
  request.profiles = {
      test::write_temp("long_name.json", one_range_trace("F" + std::string(30000, 'a'))).string()};
  request.pattern = "(?<kind>F)(a|b)*";
  const Measurement measured = measure_profiles(request);
  EXPECT_EQ(measured.marker_choice, "--pattern '(?<kind>F)(a|b)*'");
  ASSERT_EQ(measured.costs.tasks.size(), 1u);
  EXPECT_EQ(measured.costs.tasks[0].kind, K::Forward);
  EXPECT_EQ(measured.costs.tasks[0].ops, 1u);
  EXPECT_EQ(measured.costs.tasks[0].busy, 5000);

  request.profiles = {
      test::write_temp("short_name.json", one_range_trace("F" + std::string(30, 'a'))).string()};
  request.pattern = "(?<kind>F)(a*)*b";
  try {
    (void)measure_profiles(request);
    FAIL() << "no range matches";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              request.profiles[0] +
                  ": no range matched the pattern '(?<kind>F)(a*)*b'; most frequent range names: "
                  "'Faaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' (1)");
  }
}

TEST(Markers, UserPatternSyntax) {
  // RE2's own spelling of a named group is read too.
  EXPECT_EQ(MarkerClassifier::pattern(R"(^(?P<kind>B)(?<mb>\d+)$)").classify("B3"),
            m(K::Backward, none, 3, none));
  // Unnamed groups before the named ones, and optional groups that did not take part.
  const MarkerClassifier c =
      MarkerClassifier::pattern(R"(^(x)?(?<kind>F|W)(y)?(?<mb>\d+)(?:_(?<chunk>\d+))?$)");
  EXPECT_EQ(c.classify("F12"), m(K::Forward, none, 12, none));
  EXPECT_EQ(c.classify("xWy3_4"), m(K::Weight, none, 3, 4));
  // A `]` first in a class is a literal, and a group inside a class is no group.
  EXPECT_EQ(MarkerClassifier::pattern("^[]x](?<kind>F)$").classify("]F"),
            m(K::Forward, none, none, none));
  EXPECT_EQ(MarkerClassifier::pattern("^[^]x](?<kind>F)$").classify("yF"),
            m(K::Forward, none, none, none));
  // Byte by byte: `.` is one byte of a UTF-8 name, as before.
  EXPECT_EQ(MarkerClassifier::pattern("^...(?<kind>F)$")
                .classify("\xe5\xb1\x82"
                          "F"),
            m(K::Forward, none, none, none));
  // An empty name and an empty id.
  EXPECT_EQ(MarkerClassifier::pattern("(?<kind>F?)").classify(""), std::nullopt);
  EXPECT_EQ(MarkerClassifier::pattern(R"(^(?<kind>F)(?<mb>\d*)$)").classify("F"), std::nullopt);
}

TEST(Markers, PatternsRe2RefusesAreErrors) {
  EXPECT_EQ(pattern_error("(?<kind>F"),
            "--pattern '(?<kind>F': invalid regular expression: missing ): (?<kind>F");
  EXPECT_EQ(pattern_error(R"((?<kind>F)(a)\1)"),
            R"(--pattern '(?<kind>F)(a)\1': invalid regular expression: invalid escape sequence: )"
            R"(\1 (RE2 syntax: no lookarounds, no backreferences))");
  EXPECT_EQ(pattern_error("(?<kind>F)(?=a)"),
            "--pattern '(?<kind>F)(?=a)': invalid regular expression: invalid perl operator: "
            "(?= (RE2 syntax: no lookarounds, no backreferences)");
  // RE2's complaint quotes the user's text, not the (?P< spelling given to RE2.
  EXPECT_EQ(pattern_error("(?<kind>F)(?P=kind)"),
            "--pattern '(?<kind>F)(?P=kind)': invalid regular expression: invalid perl operator: "
            "(?P (RE2 syntax: no lookarounds, no backreferences)");
  // RE2's words for a lookbehind changed when it learnt (?<name> (2023).
  EXPECT_TRUE(pattern_error("(?<=x)(?<kind>F)")
                  .starts_with("--pattern '(?<=x)(?<kind>F)': invalid regular expression: "));
  EXPECT_EQ(pattern_error("(?<kind>F)a{1001}"),
            "--pattern '(?<kind>F)a{1001}': invalid regular expression: invalid repetition size: "
            "{1001}");
  EXPECT_EQ(pattern_error("(?P<kind>F)(?P<x>1)"),
            "--pattern '(?P<kind>F)(?P<x>1)': unknown capture name 'x' (valid: kind, stage, mb, "
            "chunk)");
  EXPECT_EQ(pattern_error(R"(\Q(?<kind>F)\E)"),
            R"(--pattern '\Q(?<kind>F)\E': capture 'kind' is not a group)");
}

}  // namespace
}  // namespace perflow::reader
