#pragma once

namespace perflow::visualizer::detail {

/// The "nice" tick step of every axis the visualizer draws (time axes, charts, the search
/// page's Pareto chart): the smallest of 1, 2 and 5 x 10^k at least `raw`, k = the decade
/// of `raw` (floor(log10(raw))); raw > 0. `at_least` is the smallest step there is (a time
/// axis counts whole nanoseconds: 1) and `at_most` the largest (a time axis stops at
/// 5 x 10^17 ns, where 10 times more would overflow its ticks): raw at or below `at_least`
/// gives `at_least`, raw above `at_most` gives `at_most`.
double nice_step(double raw, double at_least = 0, double at_most = 0);

}  // namespace perflow::visualizer::detail
