// --repeat N: one configuration measured N times, and what the repeats say together.
//
// Each repeat is a whole measurement: the model built, warmed up and measured anew. Repeated
// windows after one warm-up would share one build's algorithm choices and memory placement,
// and their spread would understate how far two separate `dlbench run`s differ, which is the
// difference `dlbench compare` has to judge. The cost is N warm-ups.
//
// The run's throughput is the median repeat's: for an even count the lower of the two middle
// ones, so that the figure is one measurement, and the step times, telemetry and memory the
// result carries are that same repeat's. The spread is the range (max - min) over the median and
// the sample standard deviation over the mean.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/result/noise.h"

namespace dlbench::result {

struct RunResult;

constexpr int kMaxRepeats = 100;

// One repeat, as the combined result remembers it.
struct Repeat {
  double throughput = 0;  // samples/s
  int measured_steps = 0;
  double measured_seconds = 0;
  std::vector<NoiseWarning> warnings;  // this repeat's own
};

struct Repeats {
  int requested = 0;         // N
  std::vector<Repeat> runs;  // the completed ones, in the order run
  int shown = 0;             // index of the repeat whose details the result holds (the median)
};

// ConfigError("repeat", ...) unless 1 <= n <= kMaxRepeats.
void check_repeat(long long n);
// A whole number from 1 to kMaxRepeats as typed ("3"); ConfigError for anything else ("x",
// "1.5", "0", " 3").
int parse_repeat(const std::string& text);

struct SpreadStats {
  int count = 0;
  double median = 0;  // the lower middle one for an even count
  double min = 0, max = 0;
  double mean = 0;
  double range = 0;                 // (max - min) / median
  double stddev = std::nan("");     // sample standard deviation / mean; NaN for one value
  double std_error = std::nan("");  // stddev / sqrt(count): the mean's relative uncertainty
};

SpreadStats spread_stats(std::vector<double> values);

// The throughputs of a run's repeats, as stored in its document ("repeats"); empty without.
std::vector<double> repeat_throughputs(const nlohmann::json& run_document);

// Combines completed repeats (at least one, none interrupted) into one result: the median
// repeat's, with the repeats' throughputs, the median as throughput and metrics of the spread.
RunResult combine_repeats(std::vector<RunResult> runs, int requested);

// Runs `measure(k)` for k = 1..n and combines the results. A repeat that comes back
// interrupted ends the loop: the result is then the completed repeats' (or, when none
// completed, the interrupted one's), marked interrupted with the repeat it stopped in. n == 1
// returns measure(1) as it is.
RunResult run_repeated(int n, const std::function<RunResult(int repeat)>& measure);

// B / A of two throughputs, with an uncertainty when both sides have at least two repeats.
//
// ratio = b / a (the stored figures, the medians). uncertainty: one standard error of the
// ratio, propagated to first order from each side's standard error of the mean:
//   (u / ratio)^2 = (s_a / (mean_a sqrt(n_a)))^2 + (s_b / (mean_b sqrt(n_b)))^2
// with s the sample standard deviation of a side's repeats. NaN when either side has fewer
// than two repeats (one measurement says nothing of its own spread).
struct RatioEstimate {
  double ratio = std::nan("");
  double uncertainty = std::nan("");
};

RatioEstimate throughput_ratio(double a, const std::vector<double>& a_repeats, double b,
                               const std::vector<double>& b_repeats);

}  // namespace dlbench::result
