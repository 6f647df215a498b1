#include "bench/telemetry/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace dlbench::telemetry {
namespace {

double seconds_between(const Sample& a, const Sample& b) {
  return static_cast<double>(b.tick.monotonic_ns - a.tick.monotonic_ns) * 1e-9;
}

// Between the times metric m was read in two rows (a counter's interval).
double read_seconds_between(const Sample& a, const Sample& b, std::size_t m) {
  return static_cast<double>(read_time_ns(b, m) - read_time_ns(a, m)) * 1e-9;
}

void set_stats(MetricSummary& s, const std::vector<double>& values, double mean) {
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.mean = Reported<double>::of(mean);
  s.min = Reported<double>::of(*lo);
  s.max = Reported<double>::of(*hi);
  s.p95 = Reported<double>::of(quantile(values, 0.95));
}

void mark_missing(MetricSummary& s, std::string reason) {
  s.reason = std::move(reason);
  s.mean = s.min = s.max = s.p95 = Reported<double>::missing(s.reason);
  s.total = Reported<double>::missing(s.reason);
  s.mask = Reported<std::uint64_t>::missing(s.reason);
}

// Trapezoid rule between consecutive samples that both have a value; a lone value counts as
// itself when no interval has two.
void summarize_level(MetricSummary& s, const std::vector<Sample>& rows, std::size_t m) {
  std::vector<double> values;
  double area = 0, covered = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    double v = rows[i].values[m];
    if (std::isnan(v)) continue;
    values.push_back(v);
    if (i == 0 || std::isnan(rows[i - 1].values[m])) continue;
    double dt = seconds_between(rows[i - 1], rows[i]);
    area += 0.5 * (rows[i - 1].values[m] + v) * dt;
    covered += dt;
  }
  if (values.empty()) return;
  s.samples = values.size();
  double mean = 0;
  if (covered > 0) {
    mean = area / covered;
  } else {
    for (double v : values) mean += v;
    mean /= static_cast<double>(values.size());
  }
  set_stats(s, values, mean);
}

// Each value weighs the time since the previous value (a source that skipped a tick measured
// across it). The first sample's interval lies before the window, so it is used only when it
// is the only value there is.
void summarize_interval_average(MetricSummary& s, const std::vector<Sample>& rows, std::size_t m) {
  std::vector<double> values;
  double weighted = 0, covered = 0;
  std::size_t since = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    double v = rows[i].values[m];
    if (std::isnan(v)) continue;
    double dt = seconds_between(rows[since], rows[i]);
    since = i;
    values.push_back(v);
    weighted += v * dt;
    covered += dt;
  }
  if (values.empty()) {
    if (rows.empty() || std::isnan(rows[0].values[m])) return;
    values.push_back(rows[0].values[m]);
    weighted = values[0];
    covered = 1;
  }
  s.samples = values.size();
  set_stats(s, values, covered > 0 ? weighted / covered : values.back());
}

// Counters tick in coarse steps (CPU time in 10 ms jiffies), so the rate over a sliver of an
// interval (stop() just after a tick) is mostly rounding: intervals shorter than half the
// sampling interval are merged into the next one, or the last one, for min/max/p95. The mean
// is the exact total over the covered time either way.
void summarize_counter(MetricSummary& s, const std::vector<Sample>& rows, std::size_t m,
                       double interval_s) {
  // Each reading is differenced against the previous reading, which need not be the previous
  // row: costly counters are read less often than the sampler ticks.
  std::vector<double> rates;
  double total = 0, covered = 0;
  double pending = 0, pending_s = 0, last = 0, last_s = 0;
  std::size_t readings = 0;
  const Sample* previous = nullptr;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (std::isnan(rows[i].values[m])) continue;
    ++readings;
    const Sample* before = previous;
    previous = &rows[i];
    if (before == nullptr || std::isnan(interval_rate(s.spec, *before, rows[i], m))) continue;
    double increase = rows[i].values[m] - before->values[m];
    double dt = read_seconds_between(*before, rows[i], m);
    total += increase;
    covered += dt;
    pending += increase;
    pending_s += dt;
    if (pending_s < 0.5 * interval_s) continue;
    rates.push_back(pending / pending_s * s.spec.rate_scale);
    last = pending;
    last_s = pending_s;
    pending = pending_s = 0;
  }
  if (pending_s > 0) {
    if (!rates.empty()) {
      rates.pop_back();
      pending += last;
      pending_s += last_s;
    }
    rates.push_back(pending / pending_s * s.spec.rate_scale);
  }
  if (readings == 0) return;
  s.samples = readings;
  if (rates.empty()) {
    mark_missing(s, "a counter needs two readings in a row; there were none");
    s.samples = readings;
    return;
  }
  set_stats(s, rates, total / covered * s.spec.rate_scale);
  s.total = Reported<double>::of(total);
}

void summarize_bitmask(MetricSummary& s, const std::vector<Sample>& rows, std::size_t m) {
  std::vector<const Sample*> read;
  for (const Sample& row : rows)
    if (!std::isnan(row.values[m])) read.push_back(&row);
  s.samples = read.size();
  if (s.samples == 0) return;
  constexpr unsigned kBits = 64;
  std::uint64_t mask = 0;
  std::vector<double> set_time(kBits, 0.0);
  double total_time = 0;
  for (std::size_t i = 0; i < read.size(); ++i) {
    const auto bits = static_cast<std::uint64_t>(read[i]->values[m]);
    mask |= bits;
    double weight = read.size() == 1 ? 1.0 : 0.0;
    if (i > 0) weight += 0.5 * seconds_between(*read[i - 1], *read[i]);
    if (i + 1 < read.size()) weight += 0.5 * seconds_between(*read[i], *read[i + 1]);
    total_time += weight;
    for (unsigned bit = 0; bit < kBits; ++bit)
      if (bits & (std::uint64_t{1} << bit)) set_time[bit] += weight;
  }
  s.bit_share.assign(kBits, 0.0);
  for (unsigned bit = 0; bit < kBits; ++bit)
    s.bit_share[bit] = total_time > 0 ? set_time[bit] / total_time : 0.0;
  s.mask = Reported<std::uint64_t>::of(mask);
  const std::string not_a_number = "a bit mask has no mean; see mask";
  s.mean = s.min = s.max = s.p95 = Reported<double>::missing(not_a_number);
}

}  // namespace

MetricSpec level_metric(std::string name, std::string label, std::string unit) {
  MetricSpec spec;
  spec.name = std::move(name);
  spec.label = std::move(label);
  spec.unit = std::move(unit);
  return spec;
}

MetricSpec interval_metric(std::string name, std::string label, std::string unit) {
  MetricSpec spec = level_metric(std::move(name), std::move(label), std::move(unit));
  spec.kind = MetricKind::kIntervalAverage;
  return spec;
}

MetricSpec counter_metric(std::string name, std::string label, std::string rate_unit,
                          std::string total_unit, double rate_scale) {
  MetricSpec spec = level_metric(std::move(name), std::move(label), std::move(rate_unit));
  spec.kind = MetricKind::kCounter;
  spec.total_unit = std::move(total_unit);
  spec.rate_scale = rate_scale;
  return spec;
}

MetricSpec bitmask_metric(std::string name, std::string label, std::vector<std::string> bits) {
  MetricSpec spec = level_metric(std::move(name), std::move(label), "flags");
  spec.kind = MetricKind::kBitmask;
  spec.bits = std::move(bits);
  return spec;
}

const char* to_string(MetricKind kind) {
  switch (kind) {
    case MetricKind::kLevel:
      return "level";
    case MetricKind::kIntervalAverage:
      return "interval_average";
    case MetricKind::kCounter:
      return "counter";
    case MetricKind::kBitmask:
      return "bitmask";
  }
  return "unknown";
}

const MetricSummary* Summary::find(const std::string& name) const {
  for (const MetricSummary& m : metrics)
    if (m.spec.name == name) return &m;
  return nullptr;
}

double quantile(std::vector<double> values, double p) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  double position = p * static_cast<double>(values.size() - 1);
  auto below = static_cast<std::size_t>(std::floor(position));
  std::size_t above = std::min(below + 1, values.size() - 1);
  double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

double interval_rate(const MetricSpec& spec, const Sample& previous, const Sample& current,
                     std::size_t metric) {
  double before = previous.values[metric], after = current.values[metric];
  double dt = read_seconds_between(previous, current, metric);
  if (std::isnan(before) || std::isnan(after) || dt <= 0 || after < before) return std::nan("");
  return (after - before) / dt * spec.rate_scale;
}

std::vector<std::string> bit_names(const MetricSpec& spec, std::uint64_t mask) {
  std::vector<std::string> names;
  for (unsigned bit = 0; bit < 64; ++bit) {
    if (!(mask & (std::uint64_t{1} << bit))) continue;
    if (bit < spec.bits.size() && !spec.bits[bit].empty()) {
      names.push_back(spec.bits[bit]);
    } else {
      char text[24];
      std::snprintf(text, sizeof text, "0x%llx", 1ull << bit);
      names.push_back(text);
    }
  }
  return names;
}

std::vector<MetricSummary> summarize(const std::vector<MetricSpec>& specs,
                                     const std::vector<Sample>& samples,
                                     const std::vector<std::string>& reasons,
                                     const std::vector<double>& window, double interval_s) {
  std::vector<MetricSummary> out;
  out.reserve(specs.size());
  for (std::size_t m = 0; m < specs.size(); ++m) {
    MetricSummary s;
    s.spec = specs[m];
    s.total = Reported<double>::missing("only counters have a total");
    s.mask = Reported<std::uint64_t>::missing("only bit masks have a mask");
    s.window = Reported<double>::missing("this metric has no whole-window figure");
    switch (s.spec.kind) {
      case MetricKind::kLevel:
        summarize_level(s, samples, m);
        break;
      case MetricKind::kIntervalAverage:
        summarize_interval_average(s, samples, m);
        break;
      case MetricKind::kCounter:
        summarize_counter(s, samples, m, interval_s);
        break;
      case MetricKind::kBitmask:
        summarize_bitmask(s, samples, m);
        break;
    }
    if (s.samples == 0) {
      mark_missing(s, m < reasons.size() && !reasons[m].empty() ? reasons[m] : "no reading");
    } else if (s.available() && m < window.size() && !std::isnan(window[m])) {
      // The source's own difference of the first and last counters is the better mean.
      s.window = Reported<double>::of(window[m]);
      s.mean = s.window;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace dlbench::telemetry
