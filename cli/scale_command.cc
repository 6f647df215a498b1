// dlbench scale MODEL --gpus 1,2,4,8: the same per-GPU batch on more and more GPUs (a thread
// per GPU), stored as one sweep, with speedup and scaling efficiency per GPU count.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "bench/runner/scaling.h"
#include "bench/runner/validated_config.h"
#include "bench/store/run_record.h"
#include "bench/suite/suite_runner.h"
#include "cli/commands.h"
#include "cli/gpu_list.h"
#include "cli/output_file.h"
#include "cli/scale_table.h"
#include "cli/store_options.h"
#include "cli/workload_options.h"
#include "engine/backend/backend.h"
#include "engine/core/json_text.h"

namespace dlbench::cli {
namespace {

struct ScaleOptions {
  WorkloadOptions workload;
  std::string gpus;  // empty: 1, 2, 4, ... up to every GPU present
  bool no_store = false;
  std::optional<std::string> json_path;
};

std::vector<int> default_counts() {
  const int present = backend::cuda_device_count();
  if (present == 0)
    throw Error(ErrorKind::kResource, "dlbench scale needs GPUs; this machine has none",
                "data parallelism on CPUs: mpirun -np 2 dlbench run ... --device cpu --dist mpi");
  std::vector<int> counts;
  for (int n = 1; n < present; n *= 2) counts.push_back(n);
  counts.push_back(present);
  return counts;
}

std::string sweep_name(const result::RunConfig& c) {
  return "scale-" + c.model + "-" + to_string(c.mode) + "-" + to_string(c.precision);
}

}  // namespace

void add_scale_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<ScaleOptions>();
  CLI::App* cmd = app.add_subcommand(
      "scale", "Data-parallel scaling: the same per-GPU batch on 1..N GPUs, speedup, efficiency");
  opts->workload.precision = "fp16";
  add_workload_options(*cmd, opts->workload,
                       {"Samples per step per GPU", "Input size", "Warm-up steps per run",
                        "Measured steps per run", "Measure each run this long instead of --steps",
                        "Sample telemetry during each run's measured steps (default on)"});
  cmd->add_option("--gpus", opts->gpus,
                  "GPU counts to run, increasing: 1,2,4,8 (default: 1, 2, 4, ... all)");
  cmd->add_flag("--no-store", opts->no_store, "Do not store the runs");
  cmd->add_option("--json", opts->json_path,
                  "Write the sweep as JSON to FILE (stdout when FILE is '-' or left out)")
      ->expected(0, 1)
      ->default_str("-")
      ->type_name("FILE");
  cmd->callback([opts, &global] {
    result::RunConfig base;
    apply_workload_options(opts->workload, base);
    base.launch.device = Device::cuda(0);
    base = runner::validated(base);
    const std::vector<int> counts =
        opts->gpus.empty() ? default_counts() : parse_gpu_counts(opts->gpus);
    // Every count must exist before the first minute of measuring.
    parse_gpus(std::to_string(counts.back()));

    // The output and the database open first, so a typo fails before minutes of measuring.
    const std::string json_path = opts->json_path.value_or(global.json ? "-" : "");
    OutputFile json_file(json_path != "-" ? json_path : "");
    std::unique_ptr<store::Store> db = opts->no_store ? nullptr : open_store(global);
    store::SuiteRecord sweep;
    if (db) {
      sweep = {suite::new_invocation(sweep_name(base)),
               sweep_name(base),
               "dlbench scale",
               std::time(nullptr),
               static_cast<int>(counts.size()),
               0};
      db->save_suite(sweep);
    }
    runner::RunHooks hooks;
    int index = 0;
    auto on_run = [&](const result::RunResult& r) {
      const int gpus = r.data_parallel ? r.data_parallel->replicas : 1;
      if (!global.quiet)
        std::cerr << "  " << gpus << (gpus == 1 ? " GPU: " : " GPUs: ") << r.throughput
                  << " samples/s\n";
      if (!db) return;
      store::RunRecord record = store::run_record(r);
      record.suite =
          store::SuiteLink{sweep.invocation, sweep.name, index++, "gpus=" + std::to_string(gpus)};
      db->save_run(record);
    };
    std::vector<result::RunResult> results = runner::run_scaling(base, counts, hooks, on_run);
    std::vector<double> throughputs;
    for (const auto& r : results) throughputs.push_back(r.throughput);
    const std::vector<result::ScalingPoint> points = result::scaling_points(counts, throughputs);

    nlohmann::json doc{{"schema", "dlbench.scale/1"}, {"points", nlohmann::json::array()}};
    for (std::size_t i = 0; i < points.size(); ++i)
      doc["points"].push_back({{"gpus", points[i].gpus},
                               {"throughput_samples_per_s", points[i].throughput},
                               {"speedup", points[i].speedup},
                               {"efficiency", points[i].efficiency},
                               {"run", result::to_json(results[i])}});
    if (db) doc["sweep"] = sweep.invocation;
    if (json_path == "-") {
      std::cout << dump_json(doc, 2) << "\n";
      return;
    }
    if (json_file.is_file()) {
      json_file.stream() << dump_json(doc, 2) << "\n";
      json_file.commit();
    }
    print_scale_table(std::cout, results, points);
    if (db)
      std::cerr << "stored as sweep " << sweep.invocation << " in " << db->location()
                << " (dlbench report --suite " << sweep.invocation << ")\n";
  });
}

}  // namespace dlbench::cli
