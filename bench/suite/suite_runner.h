// Runs a suite: each entry in order, under the telemetry sampler, stored as soon as it
// completes (one transaction per run), so an interrupted suite keeps every run that finished;
// one stopped through SuiteEvents::stop also keeps the run it was in, as interrupted.
// With resume, the newest invocation of the same suite is continued: entries whose
// configuration already landed there with status ok are skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/store/store.h"
#include "bench/suite/suite_file.h"

namespace dlbench::suite {

// A unique name for one invocation of a suite (or a sweep): NAME-YYYYMMDDTHHMMSS-PID.
std::string new_invocation(const std::string& name);

struct SuiteOptions {
  bool resume = false;
  double telemetry_interval_s = 0.5;
};

// What the progress bar shows; times in seconds, NaN where not known yet.
struct SuiteProgress {
  int position = 0;  // 1-based among the runs this invocation executes
  int total = 0;
  const SuiteEntry* entry = nullptr;
  std::string phase;       // "warmup", "measure"
  double throughput = 0;   // samples/s of the current run so far (measure phase), NaN before
  double elapsed_s = 0;    // since the suite started
  double remaining_s = 0;  // estimate for the runs left, current one included
};

struct SuiteEvents {
  std::function<void(const SuiteProgress&)> on_progress;
  // After a run is stored (ok, failed or interrupted), with its id.
  std::function<void(const SuiteEntry&, const store::RunRecord&)> on_run_done;
  // Asked before each run and between the steps of a run (runner::RunHooks::stop): empty to go
  // on, or why to stop ("SIGINT"). The run in progress is stored as interrupted, and no later
  // run starts.
  std::function<std::string()> stop;
};

struct SuiteOutcome {
  std::string invocation;
  int planned = 0;
  int skipped = 0;  // already landed (resume)
  int ran = 0;
  int failed = 0;
  int first_failure_exit_code = 0;
  std::vector<std::int64_t> run_ids;
  // Empty when the suite went through; else what stopped it: the interrupted run's note
  // ("interrupted by SIGINT after 3 of 20 measured steps"), or one saying it stopped between
  // runs. `not_run` then holds the entries that did not start, in order; --resume runs them
  // and the interrupted one again (only runs stored as ok count as landed).
  std::string interrupted;
  std::int64_t interrupted_run = 0;  // the run stored as interrupted; 0: stopped between runs
  std::vector<const SuiteEntry*> not_run;
};

SuiteOutcome run_suite(const SuiteSpec& spec, store::Store& store, const SuiteOptions& options,
                       const SuiteEvents& events = {});

}  // namespace dlbench::suite
