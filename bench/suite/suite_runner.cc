#include "bench/suite/suite_runner.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <set>

#include "bench/nvml/nvml.h"
#include "bench/result/repeats.h"
#include "bench/runner/workload_runner.h"
#include "bench/store/run_mfu.h"
#include "bench/store/run_record.h"
#include "bench/sysinfo/machine_info.h"
#include "engine/core/error.h"

namespace dlbench::suite {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Step work of an entry, to spread the time estimate over runs of different size.
double weight(const SuiteEntry& e) {
  double steps = e.config.seconds > 0 ? e.config.seconds : e.config.warmup_steps + e.config.steps;
  return std::max(1.0, steps) * std::max(1, e.config.repeat);
}

}  // namespace

SuiteOutcome run_suite(const SuiteSpec& spec, store::Store& store, const SuiteOptions& options,
                       const SuiteEvents& events) {
  SuiteOutcome outcome;
  outcome.planned = int(spec.entries.size());
  std::set<std::string> landed;
  if (options.resume) {
    std::vector<store::SuiteRecord> earlier = store.suites(spec.name);
    if (!earlier.empty()) {
      outcome.invocation = earlier.front().invocation;
      store::RunFilter f;
      f.suite_invocation = outcome.invocation;
      for (const store::RunRecord& r : store.list_runs(f))
        if (r.status == "ok" && r.suite) landed.insert(r.suite->key);
    }
  }
  if (outcome.invocation.empty()) {
    outcome.invocation = new_invocation(spec.name);
    store.save_suite(
        {outcome.invocation, spec.name, spec.file, std::time(nullptr), outcome.planned, 0});
  }

  std::vector<int> todo;
  for (int i = 0; i < outcome.planned; ++i) {
    if (landed.count(spec.entries[i].key))
      ++outcome.skipped;
    else
      todo.push_back(i);
  }
  double total_weight = 0;
  for (int i : todo) total_weight += weight(spec.entries[i]);

  std::shared_ptr<const nvml::Nvml> nvml = nvml::Nvml::open();
  nlohmann::json environment = sysinfo::to_json(sysinfo::query_machine(*nvml));
  Clock::time_point suite_start = Clock::now();
  double done_weight = 0;

  std::string stopped_by;  // why the suite stops; empty while it goes on
  auto stop_reason = [&] {
    if (events.stop && stopped_by.empty()) stopped_by = events.stop();
    return stopped_by;
  };
  for (std::size_t n = 0; n < todo.size(); ++n) {
    if (!stop_reason().empty()) {
      // Between runs (while the last one was stored, say): the next one does not start.
      outcome.interrupted = "interrupted by " + stopped_by + " between runs";
      for (std::size_t rest = n; rest < todo.size(); ++rest)
        outcome.not_run.push_back(&spec.entries[todo[rest]]);
      break;
    }
    const SuiteEntry& entry = spec.entries[todo[n]];
    SuiteProgress p;
    p.position = int(n) + 1;
    p.total = int(todo.size());
    p.entry = &entry;
    p.throughput = NAN;
    auto estimate = [&] {
      p.elapsed_s = seconds_since(suite_start);
      // Time per unit of step work so far, times the work left; unknown before any finished.
      p.remaining_s =
          done_weight > 0 ? p.elapsed_s / done_weight * (total_weight - done_weight) : NAN;
    };

    Clock::time_point measure_start;
    std::int64_t batch = entry.config.batch.value_or(0);
    runner::RunHooks hooks;
    hooks.on_measure_begin = [&] { measure_start = Clock::now(); };
    hooks.on_step = [&](const std::string& phase, int step, int) {
      p.phase = phase;
      if (phase == "measure" && step > 1)
        p.throughput = double(batch) * (step - 1) / seconds_since(measure_start);
      estimate();
      if (events.on_progress) events.on_progress(p);
    };
    if (events.stop) hooks.stop = stop_reason;

    store::SuiteLink link{outcome.invocation, spec.name, todo[n], entry.key};
    store::RunRecord record;
    std::string error;
    try {
      result::RunConfig config = entry.config;
      config.telemetry_interval_s = options.telemetry_interval_s;
      result::RunResult result = result::run_repeated(
          config.repeat, [&](int) { return runner::run_workload(config, hooks); });
      outcome.interrupted = result.interrupted;
      store::add_mfu_metric(result, store);
      record = store::run_record(result);
    } catch (const Error& e) {
      error = e.what();
      record = store::failed_run_record(entry.config, environment, error);
      ++outcome.failed;
      if (!outcome.first_failure_exit_code) outcome.first_failure_exit_code = exit_code(e.kind());
    }
    record.suite = link;
    record.id = store.save_run(record);
    ++outcome.ran;
    outcome.run_ids.push_back(record.id);
    done_weight += weight(entry);
    if (events.on_run_done) events.on_run_done(entry, record);
    if (!outcome.interrupted.empty()) {
      outcome.interrupted_run = record.id;
      for (std::size_t rest = n + 1; rest < todo.size(); ++rest)
        outcome.not_run.push_back(&spec.entries[todo[rest]]);
      break;
    }
  }
  return outcome;
}

std::string new_invocation(const std::string& name) {
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", std::gmtime(&now));
  return name + "-" + stamp + "-" + std::to_string(getpid());
}

}  // namespace dlbench::suite
