// dlbench maxbatch MODEL: the largest batch that trains (or infers) without running out of
// device memory, predicted by the planner and confirmed by real steps (bench/runner/max_batch.h).
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include "bench/nvml/nvml.h"
#include "bench/runner/allreduce_bench.h"
#include "bench/runner/max_batch.h"
#include "bench/store/max_batch.h"
#include "bench/sysinfo/machine_info.h"
#include "cli/commands.h"
#include "cli/launch_options.h"
#include "cli/micro_commands.h"
#include "cli/output_file.h"
#include "cli/store_options.h"
#include "cli/text_table.h"
#include "cli/workload_options.h"
#include "engine/backend/backend.h"
#include "engine/core/json_text.h"
#include "engine/models/registry.h"

namespace dlbench::cli {
namespace {

struct MaxBatchOptions {
  WorkloadOptions workload;
  LaunchOptions launch;  // --device only: a search runs on one device
  std::string memory_limit;
  std::optional<std::int64_t> max_batch;    // unset: the device's default cap
  std::optional<std::int64_t> first_batch;  // unset: the prediction
  std::string within;  // percent, runner::kDefaultWithinPercent unless given; within_percent()
  std::optional<std::string> json_path;
  bool no_store = false;
};

std::string rate_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

void print_prediction(const result::MaxBatchResult& r, std::ostream& out) {
  const result::RunConfig& c = r.config;
  out << "# dlbench maxbatch: " << c.model << " " << to_string(c.mode) << " "
      << to_string(c.precision) << (c.beam > 1 ? ", beam " + std::to_string(c.beam) : "") << " on "
      << r.backend << ", input " << c.input_size << "\n"
      << "# budget: " << format_bytes(r.budget_bytes) << " (" << r.budget_source
      << "); batches up to " << r.max_batch_cap << "; each attempt " << c.warmup_steps
      << " warm-up + " << c.steps << " measured steps\n";
  if (!r.predicted)
    out << "# planner: even batch " << runner::kProbeBatchSmall
        << " does not fit; trying it anyway\n";
  else if (r.prediction.per_sample_bytes <= 0 && r.predicted_batch == runner::kProbeBatchSmall)
    out << "# planner: batch " << runner::kProbeBatchSmall << " needs "
        << format_bytes(r.prediction.fixed_bytes) << ", batch " << runner::kProbeBatchLarge
        << " does not fit -> predicted batch " << r.predicted_batch << "\n";
  else
    out << "# planner: " << format_bytes(r.prediction.fixed_bytes) << " fixed + "
        << format_bytes(r.prediction.per_sample_bytes) << " per sample -> predicted batch "
        << r.predicted_batch << "\n";
  out << "#\n#  batch  result          time(s)  samples/s  peak\n" << std::flush;
}

void print_attempt(const result::BatchAttempt& a, std::ostream& out) {
  char line[200];
  std::snprintf(line, sizeof line, "%8lld  %-14s %8.2f  %9s  %s\n", static_cast<long long>(a.batch),
                a.fits ? "fits" : "out of memory", a.seconds,
                a.fits ? rate_text(a.throughput).c_str() : "-",
                a.fits ? format_bytes(a.peak_bytes).c_str() : "-");
  out << line << std::flush;
}

void print_answer(const result::MaxBatchResult& r, std::ostream& out) {
  out << "#\n";
  if (r.batch == 0) {
    out << "# largest batch: none (does not fit even at batch 1)";
  } else {
    out << "# largest batch: " << r.batch
        << (r.capped ? " (the --max-batch cap; more may fit)" : "");
    if (r.predicted) out << " (predicted " << r.predicted_batch << ")";
    if (r.smallest_failure > r.batch + 1)
      out << "\n# resolution: " << r.smallest_failure << " did not fit; the "
          << r.smallest_failure - r.batch - 1 << " batches between were not tried (--within "
          << r.within_percent << " %)";
    out << "\n# peak at it: " << format_bytes(r.measured_peak_bytes) << " measured";
    if (r.predicted) out << " vs " << format_bytes(r.predicted_peak_bytes) << " predicted";
    out << "; " << rate_text(r.throughput) << " " << r.sample_unit << "/s";
  }
  char line[120];
  std::snprintf(line, sizeof line, "\n# search: %zu attempt%s in %.1f s\n", r.attempts.size(),
                r.attempts.size() == 1 ? "" : "s", r.search_seconds);
  out << line << std::flush;
}

// A batch flag's value, checked; 0 when the flag was left out.
std::int64_t batch_flag(const std::optional<std::int64_t>& value, const char* field,
                        const char* example) {
  if (value && (*value < 1 || *value > result::kMaxBatch))
    throw result::ConfigError(field,
                              "must be from 1 to " + std::to_string(result::kMaxBatch) + ", not " +
                                  std::to_string(*value),
                              example);
  return value.value_or(0);
}

// --within's value: a percent from 0 to kMaxWithinPercent.
constexpr double kMaxWithinPercent = 50;
double within_percent(const std::string& text) {
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= 0 && v <= kMaxWithinPercent))
    throw Error(ErrorKind::kUsage, "--within must be a percent from 0 to 50, not '" + text + "'",
                "e.g. --within 1 (the default), or --within 0 for the exact batch");
  return v;
}

void run_maxbatch(const MaxBatchOptions& o, const GlobalOptions& global) {
  runner::MaxBatchSearch search;
  apply_workload_options(o.workload, search.config);
  search.config.launch = resolve_launch(o.launch, LaunchTarget::kEngine).launch;
  search.config.telemetry = false;
  if (!o.memory_limit.empty()) {
    const std::int64_t limit = runner::parse_bytes(o.memory_limit, "--memory-limit");
    if (limit <= 0)
      throw Error(ErrorKind::kUsage, "--memory-limit must be above 0, not " + o.memory_limit,
                  "give a size such as --memory-limit 512M");
    search.config.memory_limit_bytes = static_cast<std::size_t>(limit);
  }
  search.max_batch_cap = batch_flag(o.max_batch, "max-batch", "256");
  search.first_batch = batch_flag(o.first_batch, "first-batch", "64");
  search.within_percent = within_percent(o.within);

  const std::string json_path = o.json_path.value_or(global.json ? "-" : "");
  OutputFile json_file(json_path);  // a mistyped path fails before the search
  std::unique_ptr<store::Store> db = o.no_store ? nullptr : open_store(global);
  const bool table = json_path != "-";
  runner::MaxBatchHooks hooks;
  if (table) {
    hooks.on_predicted = [](const result::MaxBatchResult& r) { print_prediction(r, std::cout); };
    hooks.on_attempt = [](const result::BatchAttempt& a) { print_attempt(a, std::cout); };
  }
  result::MaxBatchResult r = runner::find_max_batch(search, hooks);
  if (r.batch == 0 || r.environment.empty() || r.environment.is_null()) {
    auto nvml = nvml::Nvml::open();
    r.environment = sysinfo::to_json(sysinfo::query_machine(*nvml));
  }
  if (table) print_answer(r, std::cout);
  if (db) {
    const std::int64_t id = db->save_run(store::max_batch_record(r));
    if (!global.quiet) std::cerr << "stored as run " << id << " in " << db->location() << "\n";
  }
  if (!json_path.empty()) {
    json_file.stream() << dump_json(result::to_json(r), 2) << "\n";
    if (json_file.is_file()) json_file.commit();
  }
}

}  // namespace

void add_maxbatch_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<MaxBatchOptions>();
  opts->workload.precision = "fp32";
  opts->workload.warmup = runner::kMaxBatchWarmupSteps;
  opts->workload.steps = runner::kMaxBatchMeasuredSteps;
  char within[16];
  std::snprintf(within, sizeof within, "%g", runner::kDefaultWithinPercent);
  opts->within = within;
  CLI::App* cmd = app.add_subcommand(
      "maxbatch",
      "Find the largest batch that fits in memory: the planner's prediction, confirmed by runs");
  add_workload_options(*cmd, opts->workload,
                       {"", "Input size", "Warm-up steps of each attempt",
                        "Measured steps of each attempt", "", ""});
  // A search chooses the batch, counts steps and leaves telemetry and all-reduce out.
  for (const char* flag : {"--batch", "--seconds", "--telemetry", "--bucket-mb"})
    cmd->remove_option(cmd->get_option(flag));
  add_device_option(*cmd, opts->launch, "maxbatch",
                    "cpu or cuda[:N] (default: cuda:0 when a GPU is present, else cpu)");
  cmd->add_option("--memory-limit", opts->memory_limit,
                  "Let the device hold at most this much (K, M, G: powers of 1024), as if it "
                  "had no more; on CPUs it keeps the search small");
  cmd->add_option(
      "--max-batch", opts->max_batch,
      "The largest batch to try (default: " + std::to_string(runner::kDefaultMaxBatchCap) +
          " on GPUs, " + std::to_string(runner::kDefaultCpuMaxBatchCap) + " on CPUs)");
  cmd->add_option("--first-batch", opts->first_batch,
                  "The first batch to try (default: the planner's prediction)");
  cmd->add_option("--within", opts->within,
                  "Stop once the smallest batch that failed is at most this percent (0 to 50) "
                  "above the largest that fit; 0 searches to the exact batch")
      ->type_name("PERCENT")
      ->capture_default_str();
  add_output_flags(*cmd, opts->json_path, opts->no_store);  // --json [FILE], --no-store
  cmd->callback([opts, &global] { run_maxbatch(*opts, global); });
}

}  // namespace dlbench::cli
