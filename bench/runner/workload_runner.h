// Runs a workload: build the model for the configuration, warm up, measure, summarize.
//
// Throughput = samples processed in the measured steps / wall time from the start of the
// first measured step to the end of the last (device synchronized) — never the mean of
// per-step rates. Each step is also timed on its own for the step-time statistics.
#pragma once

#include <functional>
#include <string>

#include "bench/result/run_result.h"

namespace dlbench::runner {

// The progress phase of a translation test set's batches (--test-data), after the measured steps.
inline constexpr const char* kTestSetPhase = "test set";

struct RunHooks {
  // Progress for the terminal: (phase, step, total steps or -1 when time-bounded): "warm-up",
  // "measure", "profile", or kTestSetPhase (its batches; a stop asked then abandons it).
  std::function<void(const std::string& phase, int step, int total)> on_step;
  // Around the measured phase, for the telemetry sampler.
  std::function<void()> on_measure_begin, on_measure_end;
  // Asked before every step (warm-up, measured, profiled): empty to go on, or why to stop
  // ("SIGINT"). A stop ends the run after the step in progress; the result then says so
  // (RunResult::interrupted) and keeps the measured steps so far. Single-device runs only: the
  // replicas of a data-parallel run would have to agree on the step to stop at (a collective
  // per step), so they do not ask.
  std::function<std::string()> stop;
};

result::RunResult run_workload(const result::RunConfig& config, const RunHooks& hooks = {});

}  // namespace dlbench::runner
