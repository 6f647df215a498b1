#include "bench/result/replica_steps.h"

#include <algorithm>
#include <cstdio>

#include "bench/result/step_stats.h"

namespace dlbench::result {

Stragglers find_stragglers(const std::vector<ReplicaSteps>& replicas, double ratio,
                           const std::optional<std::vector<Span>>& samples) {
  Stragglers s;
  s.ratio = ratio;
  if (replicas.empty()) return s;
  std::size_t steps = replicas.front().ms.size();
  for (const ReplicaSteps& r : replicas) steps = std::min({steps, r.ms.size(), r.start_ms.size()});
  s.steps = static_cast<int>(steps);
  s.started_last.assign(replicas.size(), 0);
  if (samples) s.steps_with_sample = s.slow_with_sample = 0;
  if (steps == 0) return s;
  std::vector<double> all;
  for (const ReplicaSteps& r : replicas) all.insert(all.end(), r.ms.begin(), r.ms.begin() + steps);
  std::sort(all.begin(), all.end());
  s.median_ms = percentile(all, 0.5);
  for (std::size_t i = 0; i < steps; ++i) {
    std::size_t late = 0, early = 0, slowest = 0;
    for (std::size_t r = 1; r < replicas.size(); ++r) {
      if (replicas[r].start_ms[i] > replicas[late].start_ms[i]) late = r;
      if (replicas[r].start_ms[i] < replicas[early].start_ms[i]) early = r;
      if (replicas[r].ms[i] > replicas[slowest].ms[i]) slowest = r;
    }
    ++s.started_last[late];
    const double ms = replicas[slowest].ms[i];
    const bool slow = ms > ratio * s.median_ms;
    if (slow)
      s.slow.push_back({static_cast<int>(i), ms, static_cast<int>(late),
                        replicas[late].start_ms[i] - replicas[early].start_ms[i]});
    if (!samples) continue;
    const double begin = replicas[early].start_ms[i];
    double end = begin;
    for (const ReplicaSteps& r : replicas) end = std::max(end, r.start_ms[i] + r.ms[i]);
    const bool sampled = std::any_of(samples->begin(), samples->end(), [&](const Span& read) {
      return read.begin_ms < end && begin < read.end_ms;
    });
    s.steps_with_sample += sampled;
    s.slow_with_sample += sampled && slow;
  }
  return s;
}

Stragglers run_stragglers(const std::vector<ReplicaSteps>& replicas, double origin_ms,
                          const telemetry::Recording* telemetry) {
  if (telemetry == nullptr) return find_stragglers(replicas);
  std::vector<Span> reads;
  for (const telemetry::Sample& sample : telemetry->samples) {
    const double begin = static_cast<double>(sample.tick.monotonic_ns) / 1e6 - origin_ms;
    double end = begin;
    for (std::int64_t ns : sample.read_ns)
      end = std::max(end, static_cast<double>(ns) / 1e6 - origin_ms);
    reads.push_back({begin, end});
  }
  return find_stragglers(replicas, kSlowStepRatio, reads);
}

std::vector<ReplicaSteps> replica_steps_from_json(const nlohmann::json& data_parallel) {
  if (!data_parallel.is_object()) return {};
  const auto list = data_parallel.find("replica_steps");
  if (list == data_parallel.end() || !list->is_array()) return {};
  std::vector<ReplicaSteps> out;
  auto numbers = [](const nlohmann::json& replica, const char* key, std::vector<double>& to) {
    const auto it = replica.find(key);
    if (it == replica.end() || !it->is_array()) return false;
    for (const nlohmann::json& v : *it) {
      if (!v.is_number()) return false;
      to.push_back(v.get<double>());
    }
    return true;
  };
  for (const nlohmann::json& replica : *list) {
    ReplicaSteps steps;
    if (!replica.is_object() || !numbers(replica, "start_ms", steps.start_ms) ||
        !numbers(replica, "ms", steps.ms) || steps.start_ms.size() != steps.ms.size())
      return {};
    out.push_back(std::move(steps));
  }
  return out;
}

namespace {

std::string number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

std::string slow_steps_cell(const Stragglers& s) {
  return std::to_string(s.slow.size()) + "/" + std::to_string(s.steps);
}

std::string stragglers_text(const Stragglers& s, int listed) {
  const std::string over = "over " + number("%.2f", s.ratio) + "x the median step (" +
                           number("%.1f", s.median_ms) + " ms)";
  if (s.slow.empty())
    return "none of " + std::to_string(s.steps) + " steps " + over + " on any replica";
  std::string text = std::to_string(s.slow.size()) + " of " + std::to_string(s.steps) +
                     (s.steps == 1 ? " step " : " steps ") + over + ": ";
  for (std::size_t i = 0; i < s.slow.size() && i < static_cast<std::size_t>(listed); ++i) {
    const SlowStep& slow = s.slow[i];
    text += (i ? "; step " : "step ") + std::to_string(slow.step + 1) + " " +
            number("%.1f", slow.ms) + " ms (replica " + std::to_string(slow.late_replica) +
            " started it " + number("%.1f", slow.late_by_ms) + " ms after the first)";
  }
  if (s.slow.size() > static_cast<std::size_t>(listed)) text += "; ...";
  const auto most = std::max_element(s.started_last.begin(), s.started_last.end());
  text += "; replica " + std::to_string(most - s.started_last.begin()) + " started " +
          std::to_string(*most) + " of the " + std::to_string(s.steps) + " steps last";
  if (s.slow_with_sample >= 0)
    text += "; a telemetry sample fell in " + std::to_string(s.slow_with_sample) + " of the " +
            std::to_string(s.slow.size()) + " slow steps (in " +
            std::to_string(s.steps_with_sample) + " of all " + std::to_string(s.steps) + ")";
  return text;
}

}  // namespace dlbench::result
