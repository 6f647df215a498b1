// dlbench suite FILE|NAME [--resume] [--interval S] [--check]: run a TOML suite, store each run
// as it completes, with a progress bar on stderr (a live line on a terminal, one line per run
// otherwise). The flags and then the whole file are checked before the database is opened;
// --check stops there and lists the runs.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "bench/nvml/nvml.h"
#include "bench/report/report_data.h"
#include "bench/suite/suite_runner.h"
#include "bench/sysinfo/gpu_info.h"
#include "bench/telemetry/sampler.h"
#include "cli/commands.h"
#include "cli/number_text.h"
#include "cli/run_progress.h"
#include "cli/stop_signals.h"
#include "cli/store_options.h"
#include "engine/core/error.h"
#include "engine/models/registry.h"

namespace dlbench::cli {
namespace {

constexpr int kBarWidth = 20;

struct SuiteCommandOptions {
  std::string suite;
  bool resume = false;
  bool check = false;
  double interval = 0.5;
};

// "pairs/s" for NCF, "images/s" for the classifiers: what a model's throughput counts.
std::string rate_unit(const std::string& model) {
  return std::string(models::to_string(models::find_model(model).unit)) + "/s";
}

std::string bar(int done, int total) {
  int filled = total ? kBarWidth * done / total : 0;
  return "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "]";
}

// `quick` means the GPU suite where NVML sees a GPU, else the CPU-sized one.
std::string resolve_name(const std::string& name) {
  if (name != "quick") return name;
  auto nvml = nvml::Nvml::open();
  return sysinfo::query_gpus(*nvml).gpus.empty() ? "quick-cpu" : "quick";
}

}  // namespace

void add_suite_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<SuiteCommandOptions>();
  CLI::App* cmd =
      app.add_subcommand("suite", "Run a suite of runs from a TOML file and store them");
  cmd->add_option("suite", opts->suite,
                  "Suite file, or a name: quick (quick-cpu without a GPU), quick-cpu")
      ->required();
  cmd->add_flag("--resume", opts->resume,
                "Continue the newest invocation of this suite: skip the runs that landed");
  cmd->add_option("--interval", opts->interval, "Telemetry sampling interval in seconds")
      ->capture_default_str();
  cmd->add_flag("--check", opts->check,
                "Check the suite file and list its runs; open no database, run nothing");
  cmd->callback([opts, &global] {
    telemetry::check_interval(opts->interval);
    suite::SuiteSpec spec = suite::load_suite(suite::find_suite_file(resolve_name(opts->suite)));
    if (opts->check) {
      if (!global.quiet)
        std::cerr << "suite " << spec.name << " (" << spec.file
                  << "): " << count_text(static_cast<long long>(spec.entries.size()), "run")
                  << ", all valid\n";
      for (const suite::SuiteEntry& e : spec.entries) std::cout << e.label << "\n";
      return;
    }
    auto db = open_store(global);
    // SIGINT and SIGTERM stop the run in progress after its current step; it is stored as
    // interrupted and no later run starts. Installed before the first line is printed.
    StopSignals stop;
    bool live = isatty(STDERR_FILENO) && !global.quiet;
    if (!global.quiet)
      std::cerr << "suite " << spec.name << " (" << spec.file
                << "): " << count_text(static_cast<long long>(spec.entries.size()), "run")
                << ", stored in " << db->location() << "\n";
    suite::SuiteEvents events;
    std::string last_line;
    std::string last_phase;
    events.on_progress = [&](const suite::SuiteProgress& p) {
      if (!live) {
        // In a log, --verbose gives a line when a run enters a phase.
        std::string phase = std::to_string(p.position) + " " + p.phase;
        if (global.verbose && !global.quiet && phase != last_phase)
          std::cerr << "  run " << p.position << "/" << p.total << " " << p.entry->label << ": "
                    << p.phase << "\n";
        last_phase = phase;
        return;
      }
      std::string line = bar(p.position - 1, p.total) + " run " + std::to_string(p.position) + "/" +
                         std::to_string(p.total) + " " + p.entry->label + "  " + p.phase;
      if (std::isfinite(p.throughput)) {
        char tp[32];
        std::snprintf(tp, sizeof tp, "  %.1f ", p.throughput);
        line += tp + rate_unit(p.entry->config.model);
      }
      line += "  elapsed " + clock_text(p.elapsed_s) + "  left ~" + clock_text(p.remaining_s);
      std::string pad(last_line.size() > line.size() ? last_line.size() - line.size() : 0, ' ');
      std::cerr << "\r" << line << pad << std::flush;
      last_line = line;
    };
    int done = 0;
    events.on_run_done = [&](const suite::SuiteEntry& e, const store::RunRecord& r) {
      ++done;
      if (global.quiet) return;
      if (live) std::cerr << "\r" << std::string(last_line.size(), ' ') << "\r";
      last_line.clear();
      char number[32];
      std::snprintf(number, sizeof number, "%.2f ", r.throughput);
      const std::string tp = number + rate_unit(e.config.model);
      std::string what = r.status == "ok"            ? std::string(tp)
                         : r.status != "interrupted" ? "failed: " + r.error
                         : r.measured()              ? r.error + " (" + tp + " over those steps)"
                                                     : r.error;
      // A noisy run says so by its number; 'dlbench runs show ID' gives the figures.
      const std::string noise = result::warning_codes(report::run_warnings(r));
      if (!noise.empty()) what += " (warnings: " + noise + ")";
      std::cerr << "  run " << r.id << ": " << e.label << ": " << what << "\n";
    };
    events.stop = [&stop] { return stop.reason(); };
    suite::SuiteOptions options;
    options.resume = opts->resume;
    options.telemetry_interval_s = opts->interval;
    suite::SuiteOutcome out = suite::run_suite(spec, *db, options, events);
    if (!global.quiet) {
      std::cerr << "suite " << out.invocation << ": " << out.ran << " ran";
      if (out.interrupted_run) std::cerr << " (the last one interrupted)";
      if (out.skipped) std::cerr << ", " << out.skipped << " already landed (skipped)";
      if (out.failed) std::cerr << ", " << out.failed << " failed";
      if (!out.interrupted.empty()) std::cerr << ", " << out.not_run.size() << " did not run";
      std::cerr << "\n";
    }
    if (!out.interrupted.empty()) {
      // Said even with --quiet: it is why the suite ended early.
      std::cerr << "dlbench: suite " << spec.name << " " << out.interrupted;
      if (out.interrupted_run)
        std::cerr << "; stored as run " << out.interrupted_run << " (interrupted)";
      std::cerr << "\n";
      if (!out.not_run.empty()) {
        std::cerr << "  did not run:";
        for (std::size_t i = 0; i < out.not_run.size(); ++i)
          std::cerr << (i ? "; " : " ") << out.not_run[i]->label;
        std::cerr << "\n";
      }
      std::cerr << "hint: 'dlbench suite " << opts->suite
                << " --resume' continues it: runs what did not run, and the interrupted run "
                   "again\n";
      std::cout << out.invocation << "\n";
      db.reset();  // closed before the process ends
      throw Interrupted(stop.signal());
    }
    std::cout << out.invocation << "\n";
    if (out.failed)
      throw Error(ErrorKind(out.first_failure_exit_code),
                  std::to_string(out.failed) + " of " + count_text(out.ran, "run") + " of suite " +
                      spec.name + " failed (stored with their error)",
                  "see 'dlbench runs list'; 'dlbench suite " + opts->suite +
                      " --resume' runs only those again");
    // A signal after the last run: the suite is complete; the process still ends by it.
    if (stop.signal() != 0) {
      std::cerr << "dlbench: " << stop.reason() << " came after the last run; suite " << spec.name
                << " completed\n";
      db.reset();
      throw Interrupted(stop.signal());
    }
  });
}

}  // namespace dlbench::cli
