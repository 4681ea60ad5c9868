// The one 1-2-5 tick routine (detail/ticks.hpp) and what is drawn with it: the sweep chart of
// a table (plot_chart) and the search page's Pareto chart.
#include "../../src/visualizer/detail/ticks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "perflow/core/option_error.hpp"
#include "perflow/visualizer/chart.hpp"
#include "perflow/visualizer/pareto.hpp"

namespace perflow::visualizer {
namespace {

using detail::nice_step;

TEST(NiceStep, IsTheSmallestOneTwoFiveAtLeastRaw) {
  EXPECT_EQ(nice_step(1), 1);
  EXPECT_EQ(nice_step(1.5), 2);
  EXPECT_EQ(nice_step(2), 2);
  EXPECT_EQ(nice_step(2.01), 5);
  EXPECT_EQ(nice_step(7), 10);
  EXPECT_EQ(nice_step(10), 10);
  EXPECT_EQ(nice_step(0.3), 0.5);
  EXPECT_EQ(nice_step(0.02), 0.02);
  EXPECT_EQ(nice_step(450), 500);
  EXPECT_EQ(nice_step(5.5e6), 1e7);
}

TEST(NiceStep, BoundsClampTheStep) {
  EXPECT_EQ(nice_step(0.3, 1), 1);
  EXPECT_EQ(nice_step(1, 1), 1);
  EXPECT_EQ(nice_step(1.2, 1), 2);
  EXPECT_EQ(nice_step(4e17, 1, 5e17), 5e17);
  EXPECT_EQ(nice_step(5e17, 1, 5e17), 5e17);
  EXPECT_EQ(nice_step(9e18, 1, 5e17), 5e17);
}

// The time axis's steps before the routine was shared: whole nanoseconds, 1, 2, 5 x 10^k
// from 1 ns, stopping at 5 x 10^17.
std::int64_t integer_step(double raw) {
  std::int64_t decade = 1;
  while (true) {
    for (const std::int64_t mantissa : {std::int64_t{1}, std::int64_t{2}, std::int64_t{5}}) {
      if (static_cast<double>(mantissa * decade) >= raw) return mantissa * decade;
    }
    if (decade > std::numeric_limits<std::int64_t>::max() / 100) return 5 * decade;
    decade *= 10;
  }
}

TEST(NiceStep, WithTheTimeAxisBoundsIsTheIntegerSteps) {
  const unsigned seed = 20261127;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exponent(-2, 19);
  for (int i = 0; i < 100000; ++i) {
    const double raw = std::pow(10.0, exponent(rng));
    ASSERT_EQ(static_cast<std::int64_t>(nice_step(raw, 1, 5e17)), integer_step(raw))
        << "raw " << raw << ", seed " << seed;
  }
  // Exact decades, their doubles and halves, and what the axis asks after a step (x 1.5).
  for (double decade = 1; decade <= 1e17; decade *= 10) {
    for (const double raw : {decade, 2 * decade, 5 * decade, 1.5 * decade, 3 * decade, 7.5 * decade,
                             decade + 1, 2 * decade - 1}) {
      ASSERT_EQ(static_cast<std::int64_t>(nice_step(raw, 1, 5e17)), integer_step(raw))
          << "raw " << raw;
    }
  }
}

const std::vector<std::string> kColumns = {"run", "/pipeline/schedule", "/pipeline/microbatches",
                                           "makespan_ns", "error"};
const std::vector<std::vector<std::string>> kRows = {
    {"0", "1f1b", "4", "28000000", ""}, {"1", "1f1b", "8", "44000000", ""},
    {"2", "zbv", "4", "20000000", ""},  {"3", "zbv", "4", "22000000", ""},
    {"4", "zbv", "8", "", ""},          {"5", "zbv", "16", "1", "refused"}};

TEST(PlotChart, AveragesRepeatedPointsAndLeavesOutErrors) {
  const ChartData chart =
      plot_chart({"results.csv", kColumns, kRows},
                 {"/pipeline/microbatches", "makespan_ns", "/pipeline/schedule"});
  EXPECT_EQ(chart.title, "makespan_ns vs /pipeline/microbatches, by /pipeline/schedule");
  EXPECT_EQ(chart.caption,
            "4 of 6 rows plotted; 2 left out (an error or no makespan_ns); a point marked n=K "
            "is the mean of K rows (other columns vary)");
  EXPECT_EQ(chart.x_unit, ValueUnit::Plain);
  EXPECT_EQ(chart.y_unit, ValueUnit::Nanoseconds);
  ASSERT_EQ(chart.series.size(), 2u);
  EXPECT_EQ(chart.series[0].name, "1f1b");
  ASSERT_EQ(chart.series[0].points.size(), 2u);
  EXPECT_EQ(chart.series[0].points[1].x, 8);
  EXPECT_EQ(chart.series[0].points[1].y, 44000000);
  EXPECT_EQ(chart.series[0].points[0].rows, 1u);
  EXPECT_EQ(chart.series[0].points[1].rows, 1u);
  ASSERT_EQ(chart.series[1].points.size(), 1u);
  EXPECT_EQ(chart.series[1].points[0].y, 21000000);
  EXPECT_EQ(chart.series[1].points[0].rows, 2u);  // labelled n=2: the other points average 1
  EXPECT_EQ(usual_point_rows(chart), 1u);
  EXPECT_TRUE(chart.categories.empty());
}

TEST(PlotChart, AColumnNotInTheTableNamesItsField) {
  try {
    (void)plot_chart({"results.csv", kColumns, kRows}, {"/pipeline/microbatch", "makespan_ns", ""});
    FAIL() << "expected an OptionError";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "x");
    EXPECT_EQ(e.worded([](const OptionError::Piece& p) { return "--" + p.text + " " + p.value; }),
              "--x '/pipeline/microbatch': results.csv has no such column; did you mean "
              "'/pipeline/microbatches'?; its columns: run, /pipeline/schedule, "
              "/pipeline/microbatches, makespan_ns, error");
  }
  EXPECT_THROW((void)plot_chart({"results.csv", kColumns, kRows}, {"run", "error", ""}), Error);
}

TEST(ParetoChart, TicksAtOneTwoFiveAndEscapesDescriptions) {
  const ParetoPoint front[] = {{40e9, 2'000'000'000, "a <fast> & big"},
                               {20e9, 3'000'000'000, "\"small\""}};
  const std::string svg = render_pareto_svg(front, {front, 1});
  EXPECT_NE(svg.find("<title>Pareto 1: a &lt;fast&gt; &amp; big</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>Pareto 2: &quot;small&quot;</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>best 1: a &lt;fast&gt; &amp; big</title>"), std::string::npos);
  // The memory axis spans 19-41 GB: ticks every 5 GB (22 / 5 = 4.4 rounds up to 5).
  EXPECT_NE(svg.find(">20.0GB</text>"), std::string::npos);
  EXPECT_NE(svg.find(">25.0GB</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">22.0GB</text>"), std::string::npos);
  EXPECT_EQ(escape_html("<&>\"'"), "&lt;&amp;&gt;&quot;'");
}

}  // namespace
}  // namespace perflow::visualizer
