#include "cli/compare_frameworks.h"

#include <ctime>
#include <iostream>
#include <sstream>

#include "bench/nvml/nvml.h"
#include "bench/report/framework_table.h"
#include "bench/report/table_formats.h"
#include "bench/runner/validated_config.h"
#include "bench/store/run_mfu.h"
#include "bench/store/run_record.h"
#include "bench/suite/suite_runner.h"
#include "bench/sysinfo/machine_info.h"
#include "cli/store_options.h"
#include "cli/workload_options.h"
#include "engine/core/error.h"

namespace dlbench::cli {
namespace {

// The group a comparison's runs are stored under, so `dlbench report --last-suite` shows it.
constexpr const char* kCompareGroup = "compare-frameworks";

std::vector<std::string> split_frameworks(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    peers::check_framework(item);
    for (const std::string& n : names)
      if (n == item)
        throw Error(ErrorKind::kUsage, "--frameworks names " + item + " twice",
                    "e.g. --frameworks native,pytorch,jax");
    names.push_back(item);
  }
  if (names.size() < 2)
    throw Error(ErrorKind::kUsage, "--frameworks needs at least two frameworks, not '" + text + "'",
                "e.g. --frameworks native,pytorch,jax");
  return names;
}

}  // namespace

void add_peer_options(CLI::App& cmd, peers::PeerOptions& o) {
  if (const char* env = std::getenv("DLBENCH_PYTHON"); env && *env) o.python = env;
  cmd.add_option("--python", o.python,
                 "Python interpreter of the framework peers (default: $DLBENCH_PYTHON, else "
                 "python3)");
  cmd.add_option("--peer-worker", o.worker,
                 "Run this worker script instead of peers/FRAMEWORK_worker.py (custom or test "
                 "workers)");
  cmd.add_option("--peer-timeout", o.timeout_s,
                 "Seconds a peer worker may take in all, start-up included, before it is killed")
      ->capture_default_str();
}

std::shared_ptr<FrameworkCompareOptions> add_framework_compare_options(CLI::App& c) {
  auto o = std::make_shared<FrameworkCompareOptions>();
  c.add_option("--frameworks", o->frameworks,
               "Run MODEL (the first argument) in these frameworks back to back: e.g. "
               "native,pytorch,pytorch-compile,jax");
  c.add_option("--mode", o->mode, "With --frameworks: train or infer")->capture_default_str();
  c.add_option("--batch", o->batch, "With --frameworks: samples per step");
  c.add_option("--precision", o->precision, "With --frameworks: fp32, tf32, fp16 or bf16")
      ->capture_default_str();
  add_device_option(c, o->launch, "compare", "With --frameworks: cpu or cuda:N (default: cuda:0)");
  c.add_option(
      "--input", o->input,
      "With --frameworks: input size (an image side in pixels, a sequence length in tokens)");
  c.add_option("--warmup", o->warmup, "With --frameworks: warm-up steps")->capture_default_str();
  c.add_option("--steps", o->steps, "With --frameworks: measured steps")->capture_default_str();
  c.add_option("--beam", o->beam,
               "With --frameworks: translation inference's hypotheses per sentence (1: greedy)")
      ->capture_default_str();
  c.add_flag("--telemetry,!--no-telemetry", o->telemetry,
             "With --frameworks: sample telemetry (default on)");
  c.add_flag("--no-store", o->no_store, "With --frameworks: do not store the runs");
  add_class_weights_option(c, o->class_weights, "With --frameworks: ");
  add_peer_options(c, o->peer);
  return o;
}

void run_framework_compare(const FrameworkCompareOptions& o, const std::string& model,
                           const GlobalOptions& global) {
  std::vector<std::string> frameworks = split_frameworks(o.frameworks);
  result::RunConfig base;
  base.model = model;
  base.mode = result::parse_mode(o.mode);
  base.batch = o.batch;
  base.precision = parse_precision(o.precision);
  // Peers among the frameworks: one process on one device, so --device alone.
  base.launch = resolve_launch(o.launch, LaunchTarget::kPeer).launch;
  base.input_size = o.input;
  base.warmup_steps = o.warmup;
  base.steps = o.steps;
  base.telemetry = o.telemetry;
  base.beam = o.beam;
  if (o.class_weights) base.class_weights = parse_class_weights(*o.class_weights);
  base = runner::validated(base);

  std::unique_ptr<store::Store> db = o.no_store ? nullptr : open_store(global);
  std::string invocation = suite::new_invocation(std::string(kCompareGroup) + "-" + model);
  if (db)
    db->save_suite({invocation, kCompareGroup, "", std::time(nullptr),
                    static_cast<int>(frameworks.size()), 0});

  std::vector<store::RunRecord> records;
  std::optional<Error> first_failure;
  nlohmann::json environment;  // for failed runs' machine, queried once when needed
  for (std::size_t i = 0; i < frameworks.size(); ++i) {
    result::RunConfig config = base;
    config.framework = frameworks[i];
    if (!global.quiet)
      std::cerr << "[" << i + 1 << "/" << frameworks.size() << "] " << model << " in "
                << config.framework << "\n";
    store::RunRecord record;
    try {
      result::RunResult r = peers::is_peer(config.framework) ? peers::run_peer(config, o.peer)
                                                             : runner::run_workload(config);
      if (db) store::add_mfu_metric(r, *db);
      record = store::run_record(r);
    } catch (const Error& e) {
      if (!global.quiet) std::cerr << "  " << config.framework << " failed: " << e.what() << "\n";
      if (!first_failure) first_failure = e;
      if (environment.is_null())
        environment = sysinfo::to_json(sysinfo::query_machine(*nvml::Nvml::open()));
      std::string message = e.what();
      record = store::failed_run_record(config, environment, message.substr(0, message.find('\n')));
    }
    record.suite =
        store::SuiteLink{invocation, kCompareGroup, static_cast<int>(i), config.framework};
    if (db) record.id = db->save_run(record);
    records.push_back(std::move(record));
  }

  report::Table table = report::framework_table(records);
  std::string title = model + " " + to_string(base.mode) + " " + to_string(base.precision) +
                      ", batch " + std::to_string(*base.batch) + " on " +
                      to_string(base.launch.device) +
                      (base.beam > 1 ? ", beam " + std::to_string(base.beam) : "");
  if (global.json) {
    report::write_tables(title, {table}, report::TableFormat::kJson, std::cout);
  } else {
    std::cout << table.title << ": " << title << "\n\n";
    report::write_text_table(table, std::cout);
    std::cout << "\n" << table.note << "\n";
  }
  if (db)
    std::cerr << "stored as group " << invocation << " in " << db->location()
              << " (dlbench report --suite " << invocation << ")\n";
  if (first_failure) throw *first_failure;
}

}  // namespace dlbench::cli
