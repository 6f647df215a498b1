#include "bench/result/noise.h"

#include <algorithm>
#include <cstdio>

#include "bench/result/repeats.h"
#include "bench/result/run_result.h"
#include "bench/telemetry/telemetry_json.h"

namespace dlbench::result {
namespace {

using nlohmann::json;

std::string percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", 100 * share);
  return text;
}

// A threshold as people say it: "5 %".
std::string threshold(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%g %%", 100 * share);
  return text;
}

std::string whole(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", value);
  return text;
}

double number_or_nan(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return std::nan("");
  return object[key].get<double>();
}

// A counter's mean rate over the window: the source's whole-window figure where it gave one.
double window_mean(const json& metrics, const char* name) {
  if (!metrics.contains(name) || !metrics[name].is_object()) return std::nan("");
  const json& m = metrics[name];
  const double window = number_or_nan(m, "window");
  return std::isfinite(window) ? window : number_or_nan(m, "mean");
}

bool is_clock_events(const std::string& name) {
  const std::string suffix = ".clock_events";
  return name.rfind("gpu", 0) == 0 && name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Per throttle reason set on any GPU: its largest share of the window.
std::vector<Throttle> throttles_of(const json& metrics) {
  std::vector<Throttle> out;
  for (const auto& [flag, said] : throttle_reasons()) {
    bool seen = false;
    double share = std::nan("");
    for (const auto& [name, m] : metrics.items()) {
      if (!is_clock_events(name) || !m.is_object()) continue;
      const json flags = m.value("flags", json::array());
      if (!flags.is_array() || std::find(flags.begin(), flags.end(), flag) == flags.end()) continue;
      seen = true;
      // Runs stored before the shares were recorded have none; since then, a flag without a
      // share was set for no measurable time (a window of one sample).
      const json shares = m.value("share_percent", json());
      if (!shares.is_object()) continue;
      const double p = std::isfinite(number_or_nan(shares, flag.c_str()))
                           ? shares[flag].get<double>() / 100
                           : 0.0;
      share = std::isnan(share) ? p : std::max(share, p);
    }
    if (seen) out.push_back({said, share});
  }
  return out;
}

void read_telemetry(const json& telemetry, NoiseInputs& in) {
  if (!telemetry.is_object() || !telemetry.contains("metrics")) return;
  const json& metrics = telemetry["metrics"];
  if (!metrics.is_object()) return;
  in.process_cpu_percent = window_mean(metrics, "process.cpu");
  in.cgroup_cpu_percent = window_mean(metrics, "cgroup.cpu");
  in.throttles = throttles_of(metrics);
}

void add_unique(std::vector<NoiseWarning>& to, const NoiseWarning& w) {
  for (const NoiseWarning& have : to)
    if (have.code == w.code) return;
  to.push_back(w);
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& throttle_reasons() {
  static const std::vector<std::pair<std::string, std::string>> reasons = {
      {"sw_power_cap", "power cap"},
      {"hw_power_brake", "power brake"},
      {"sw_thermal_slowdown", "thermal (software)"},
      {"hw_thermal_slowdown", "thermal (hardware)"},
      {"hw_slowdown", "hardware slowdown"},
  };
  return reasons;
}

std::vector<NoiseWarning> noise_warnings(const NoiseInputs& in) {
  std::vector<NoiseWarning> out;
  if (in.measured_steps <= 0) return out;
  if (std::isfinite(in.step_cv) && in.step_cv > kHighStepCv)
    out.push_back({"high-cv", "step time varies " + percent(in.step_cv) + " (CV), above " +
                                  threshold(kHighStepCv)});
  const double others = in.cgroup_cpu_percent - in.process_cpu_percent;
  if (std::isfinite(others) && in.cgroup_cpu_percent > 0 && others >= kContentionFloorPercent &&
      in.process_cpu_percent < kContendedShare * in.cgroup_cpu_percent)
    out.push_back({"cpu-contention", "the process got " +
                                         percent(in.process_cpu_percent / in.cgroup_cpu_percent) +
                                         " of its cgroup's CPU (" + whole(in.process_cpu_percent) +
                                         " of " + whole(in.cgroup_cpu_percent) +
                                         " % of a core): other processes competed for the cores"});
  std::string throttled;
  for (const Throttle& t : in.throttles) {
    if (std::isfinite(t.share) && t.share < kThrottledShare) continue;
    throttled += throttled.empty() ? "" : ", ";
    throttled += t.reason + (std::isfinite(t.share)
                                 ? " during " + percent(t.share) + " of the measured phase"
                                 : " at some point in the run");
  }
  if (!throttled.empty()) out.push_back({"gpu-throttled", "GPU clocks held down: " + throttled});
  if (in.measured_steps < kFewSteps)
    out.push_back({"few-steps", "only " + std::to_string(in.measured_steps) + " measured step" +
                                    (in.measured_steps == 1 ? "" : "s") + ", fewer than " +
                                    std::to_string(kFewSteps) +
                                    ": too few for a stable median and CV"});
  if (in.searched_shapes > 0)
    out.push_back({"late-search",
                   std::to_string(in.searched_shapes) + " op shape" +
                       (in.searched_shapes == 1 ? "'s algorithms were" : "s' algorithms were") +
                       " chosen by measuring during the measured steps: the "
                       "warm-up ended before the search did, and its time is in "
                       "the throughput"});
  if (in.repeat_throughputs.size() >= 2) {
    const SpreadStats s = spread_stats(in.repeat_throughputs);
    if (s.range > kRepeatSpread)
      out.push_back({"repeat-spread", "throughput varies " + percent(s.range) + " between the " +
                                          std::to_string(s.count) +
                                          " repeats (max - min over the median), above " +
                                          threshold(kRepeatSpread)});
  }
  return out;
}

NoiseInputs noise_inputs(const json& doc) {
  NoiseInputs in;
  if (!doc.is_object()) return in;
  if (doc.value("measured_steps", json()).is_number_integer())
    in.measured_steps = doc["measured_steps"].get<int>();
  in.step_cv = number_or_nan(doc.value("step_time_ms", json::object()), "cv");
  read_telemetry(doc.value("telemetry", json()), in);
  in.repeat_throughputs = repeat_throughputs(doc);
  for (const json& m : doc.value("metrics", json::array()))
    if (m.is_object() && m.value("tag", std::string()) == kSearchedShapesMetric &&
        m.value("value", json()).is_number())
      in.searched_shapes = m["value"].get<int>();
  return in;
}

NoiseInputs noise_inputs(const RunResult& r) {
  NoiseInputs in;
  in.measured_steps = r.measured_steps;
  in.step_cv = r.step.cv;
  if (r.telemetry) read_telemetry(telemetry::to_json(r.telemetry->summary), in);
  if (r.repeats)
    for (const Repeat& each : r.repeats->runs) in.repeat_throughputs.push_back(each.throughput);
  if (const Metric* m = find_metric(r, kSearchedShapesMetric))
    in.searched_shapes = static_cast<int>(m->value);
  return in;
}

std::vector<NoiseWarning> noise_warnings(const RunResult& r) {
  std::vector<NoiseWarning> out = noise_warnings(noise_inputs(r));
  if (!r.repeats) return out;
  // The repeat-spread warning goes last: first what other repeats saw that the shown one did not.
  std::vector<NoiseWarning> spread;
  for (auto it = out.begin(); it != out.end();)
    if (it->code == "repeat-spread") {
      spread.push_back(*it);
      it = out.erase(it);
    } else {
      ++it;
    }
  const std::vector<Repeat>& runs = r.repeats->runs;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (static_cast<int>(i) != r.repeats->shown)
      for (const NoiseWarning& w : runs[i].warnings)
        add_unique(out, {w.code, "repeat " + std::to_string(i + 1) + ": " + w.text});
  for (const NoiseWarning& w : spread) out.push_back(w);
  return out;
}

std::vector<NoiseWarning> stored_noise_warnings(const json& doc) {
  if (!doc.is_object() || !doc.contains("warnings") || !doc["warnings"].is_array())
    return noise_warnings(noise_inputs(doc));
  std::vector<NoiseWarning> out;
  for (const json& w : doc["warnings"])
    if (w.is_object() && w.value("code", json()).is_string())
      out.push_back({w["code"].get<std::string>(), w.value("text", std::string())});
  return out;
}

json to_json(const std::vector<NoiseWarning>& warnings) {
  json out = json::array();
  for (const NoiseWarning& w : warnings) out.push_back({{"code", w.code}, {"text", w.text}});
  return out;
}

std::string warning_codes(const std::vector<NoiseWarning>& warnings) {
  std::string out;
  for (const NoiseWarning& w : warnings) out += (out.empty() ? "" : ", ") + w.code;
  return out;
}

}  // namespace dlbench::result
