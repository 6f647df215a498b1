// Noise warnings: what makes a run's number less trustworthy than it looks, said next to it.
//
// A run is flagged when its step times scatter (high CV), when other processes in its cgroup
// took CPU it could have used (contention), when a GPU's clocks were held down (power cap,
// thermal or hardware slowdown), when it measured too few steps for a stable median, when its
// measured steps still searched for algorithms (the warm-up ended too soon), or when its
// repeats (--repeat N) disagree. Each warning is a short code for filters and a line for
// people with the measured figure: "step time varies 8.2 % (CV), above 5 %".
//
// The warnings are a pure function of what a run stored, so a report can derive them for runs
// stored before they existed, from the run's JSON document (dlbench.run/1).
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dlbench::result {

struct RunResult;

struct NoiseWarning {
  // "high-cv", "cpu-contention", "gpu-throttled", "few-steps", "late-search", "repeat-spread"
  std::string code;
  std::string text;  // one line with the figure: "step time varies 8.2 % (CV), above 5 %"
  bool operator==(const NoiseWarning&) const = default;
};

// A steady benchmark on a quiet machine times its steps within 1-2 % of each other; above 5 %
// the median and the throughput move by whole percents from one run to the next.
constexpr double kHighStepCv = 0.05;
// Below 10 steps the 5th and 95th percentiles are interpolations between the extremes and the
// CV's own relative error is about 1 / sqrt(2 n), more than a fifth.
constexpr int kFewSteps = 10;
// The process tree's CPU below this share of the cgroup's means something else in the cgroup
// ran beside it (a build, another benchmark) and took cores the run needed.
constexpr double kContendedShare = 0.75;
// ... and only when the others used at least this much (% of one core): a shell or a daemon
// waking up now and then takes a few percent of a core and steals nothing that matters.
constexpr double kContentionFloorPercent = 25;
// A clock-event reason set for at least this share of the measured phase counts: one 0.5 s
// sample at a window's edge is not a throttled run, a twentieth of the window moves the rate.
constexpr double kThrottledShare = 0.05;
// Repeats whose throughputs span more than this share of their median disagree beyond what a
// comparison between runs can take for a difference.
constexpr double kRepeatSpread = 0.05;

// The clock-event reasons that mean the clocks were held down, as NVML names them and as a
// reader would say them. (gpu_idle, applications_clocks, sync_boost and display_clock are not
// throttling.)
const std::vector<std::pair<std::string, std::string>>& throttle_reasons();

// One throttle reason of a run: the largest share over its GPUs.
struct Throttle {
  std::string reason;           // "power cap"
  double share = std::nan("");  // 0..1 of the measured phase; NaN: only known to have been set
};

// The metric a run stores the searched shapes of its measured steps under.
inline constexpr const char* kSearchedShapesMetric = "measure/searched_shapes";

// What the warnings are derived from; NaN or empty where the run does not know.
struct NoiseInputs {
  int measured_steps = 0;  // 0: nothing measured, nothing to warn about
  double step_cv = std::nan("");
  double process_cpu_percent = std::nan("");  // the process tree, % of one core
  double cgroup_cpu_percent = std::nan("");   // everything in its cgroup, % of one core
  std::vector<Throttle> throttles;            // the reasons that were set at all
  std::vector<double> repeat_throughputs;     // samples/s of each repeat; empty without repeats
  // Op shapes whose algorithms were chosen by measuring during the measured steps (on any
  // replica): the search's time is then in the throughput.
  int searched_shapes = 0;
};

std::vector<NoiseWarning> noise_warnings(const NoiseInputs& inputs);

// The inputs a run document (dlbench.run/1, as stored) holds: its step statistics, its
// telemetry summary (process and cgroup CPU, clock-event reasons) and its repeats. Runs stored
// before clock-event shares were recorded give only the flags (share NaN).
NoiseInputs noise_inputs(const nlohmann::json& run_document);
// The same of a run in memory, read through the same telemetry JSON the store keeps.
NoiseInputs noise_inputs(const RunResult& run);

// A run's warnings: its own (of the repeat it shows) and, with repeats, those only other
// repeats had ("repeat 3: ..."), then whether the repeats disagree.
std::vector<NoiseWarning> noise_warnings(const RunResult& run);

// The warnings of a stored run document: its "warnings" when it was stored with them, else
// derived from what it holds (runs stored before warnings existed).
std::vector<NoiseWarning> stored_noise_warnings(const nlohmann::json& run_document);

nlohmann::json to_json(const std::vector<NoiseWarning>& warnings);

// "high-cv, few-steps"
std::string warning_codes(const std::vector<NoiseWarning>& warnings);

}  // namespace dlbench::result
