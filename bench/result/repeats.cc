#include "bench/result/repeats.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "bench/result/run_result.h"

namespace dlbench::result {
namespace {

using nlohmann::json;

// "1 repeat", "3 repeats"
std::string repeats_text(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " repeat" : " repeats");
}

}  // namespace

void check_repeat(long long n) {
  if (n < 1 || n > kMaxRepeats)
    throw ConfigError(
        "repeat", "must be from 1 to " + std::to_string(kMaxRepeats) + ", not " + std::to_string(n),
        "3");
}

int parse_repeat(const std::string& text) {
  long long n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw ConfigError(
        "repeat",
        "must be a whole number from 1 to " + std::to_string(kMaxRepeats) + ", not '" + text + "'",
        "3");
  check_repeat(n);
  return static_cast<int>(n);
}

SpreadStats spread_stats(std::vector<double> values) {
  SpreadStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = static_cast<int>(values.size());
  s.median = values[(values.size() - 1) / 2];
  s.min = values.front();
  s.max = values.back();
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / s.count;
  s.range = s.median > 0 ? (s.max - s.min) / s.median : 0;
  if (s.count < 2 || s.mean <= 0) return s;
  double var = 0;
  for (double v : values) var += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(var / (s.count - 1)) / s.mean;
  s.std_error = s.stddev / std::sqrt(static_cast<double>(s.count));
  return s;
}

std::vector<double> repeat_throughputs(const json& doc) {
  std::vector<double> out;
  if (!doc.is_object() || !doc.contains("repeats") || !doc["repeats"].is_object()) return out;
  const json& list = doc["repeats"].value("throughputs_samples_per_s", json());
  if (!list.is_array()) return out;
  for (const json& v : list)
    if (v.is_number()) out.push_back(v.get<double>());
  return out;
}

RunResult combine_repeats(std::vector<RunResult> runs, int requested) {
  DLBENCH_CHECK(!runs.empty(), "combine_repeats needs at least one repeat");
  Repeats repeats;
  repeats.requested = requested;
  std::vector<double> rates;
  for (const RunResult& r : runs) {
    repeats.runs.push_back({r.throughput, r.measured_steps, r.measured_seconds, noise_warnings(r)});
    rates.push_back(r.throughput);
  }
  const SpreadStats s = spread_stats(rates);
  // The first repeat at the median rate (a tie keeps the earlier one).
  const auto at = std::find(rates.begin(), rates.end(), s.median);
  repeats.shown = static_cast<int>(at - rates.begin());
  RunResult out = std::move(runs[static_cast<std::size_t>(repeats.shown)]);
  const std::string n = repeats_text(rates.size());
  for (Metric& m : out.metrics)
    if (m.tag == "throughput/samples_per_s")
      m.description = "the median throughput of " + n + " (each: " + m.description + ")";
  add_metric(out, "throughput/repeats", s.count, "repeats",
             "whole measurements (built, warmed up, measured) of this configuration");
  add_metric(out, "throughput/repeat_min_samples_per_s", s.min, "samples/s",
             "the lowest throughput of " + n);
  add_metric(out, "throughput/repeat_max_samples_per_s", s.max, "samples/s",
             "the highest throughput of " + n);
  add_metric(out, "throughput/repeat_range", s.range, "ratio",
             "(max - min) / median of the throughputs of " + n);
  if (std::isfinite(s.stddev))
    add_metric(out, "throughput/repeat_stddev", s.stddev, "ratio",
               "sample standard deviation / mean of the throughputs of " + n);
  out.repeats = std::move(repeats);
  return out;
}

RunResult run_repeated(int n, const std::function<RunResult(int repeat)>& measure) {
  if (n <= 1) return measure(1);
  std::vector<RunResult> done;
  for (int k = 1; k <= n; ++k) {
    RunResult r = measure(k);
    if (r.interrupted.empty()) {
      done.push_back(std::move(r));
      continue;
    }
    const std::string where = " (in repeat " + std::to_string(k) + " of " + std::to_string(n);
    if (done.empty()) {
      r.interrupted += where + ")";
      return r;
    }
    RunResult out = combine_repeats(std::move(done), n);
    out.interrupted = r.interrupted + where + "; the result is the median of the " +
                      repeats_text(out.repeats->runs.size()) + " before it)";
    return out;
  }
  return combine_repeats(std::move(done), n);
}

RatioEstimate throughput_ratio(double a, const std::vector<double>& a_repeats, double b,
                               const std::vector<double>& b_repeats) {
  RatioEstimate e;
  if (!(a > 0 && b > 0)) return e;
  e.ratio = b / a;
  const SpreadStats sa = spread_stats(a_repeats), sb = spread_stats(b_repeats);
  if (std::isfinite(sa.std_error) && std::isfinite(sb.std_error))
    e.uncertainty = e.ratio * std::hypot(sa.std_error, sb.std_error);
  return e;
}

}  // namespace dlbench::result
