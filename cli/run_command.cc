// dlbench run MODEL: train or infer one model on one device and report what it measured.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "bench/runner/validated_config.h"
#include "bench/runner/workload_runner.h"
#include "bench/store/run_mfu.h"
#include "bench/store/run_record.h"
#include "cli/commands.h"
#include "cli/compare_frameworks.h"
#include "cli/launch_options.h"
#include "cli/layer_profile_table.h"
#include "cli/noise_rows.h"
#include "cli/number_text.h"
#include "cli/output_file.h"
#include "cli/quality_rows.h"
#include "cli/run_progress.h"
#include "cli/stop_signals.h"
#include "cli/store_options.h"
#include "cli/telemetry_table.h"
#include "cli/text_table.h"
#include "cli/workload_options.h"
#include "engine/core/json_text.h"
#include "engine/models/registry.h"

namespace dlbench::cli {
namespace {

struct RunOptions {
  WorkloadOptions workload;
  LaunchOptions launch;
  std::int64_t seed = 42;  // signed, so "-1" is refused instead of wrapping to 2^64 - 1
  float lr = result::RunConfig{}.learning_rate;
  float momentum = result::RunConfig{}.momentum;
  bool layers = false;
  int profile_layers = 0;  // extra profiled steps; 0: none
  double interval = result::RunConfig{}.telemetry_interval_s;
  std::optional<std::string> json_path;
  bool no_store = false;  // the results database is skipped
  std::string framework = "native";
  peers::PeerOptions peer;
  std::string repeat = "1";  // parsed by result::parse_repeat, which words its own error
  std::optional<std::string> data;
  std::optional<std::string> test_data;
  std::optional<std::string> class_weights;  // "1,2,4", parsed by parse_class_weights
};

// "bert-base, ncf, ...": the models that train with Adam or AdamW, for --lr's help.
std::string adam_models() {
  std::string names;
  for (const models::ModelSpec* m : models::ModelRegistry::instance().all())
    if (m->default_optimizer.kind == nn::OptimizerConfig::Kind::kAdam ||
        m->default_optimizer.kind == nn::OptimizerConfig::Kind::kAdamW)
      names += (names.empty() ? "" : ", ") + m->name;
  return names;
}

// A last loss this many times the first counts as diverging.
constexpr double kDivergedRatio = 10.0;

// The coefficient of variation needs two steps; one step has no spread to measure.
std::string cv_text(const result::StepStats& step) {
  return std::isfinite(step.cv) ? fixed(100 * step.cv, 1) + " %" : "n/a: one step";
}

using result::find_metric;

// "fuse_matmul_relu 2 rewrites"; "none applied" when every pass found nothing to do.
std::string passes_text(const result::RunResult& r) {
  std::string text;
  for (const auto& [name, rewrites] : r.passes)
    if (rewrites > 0)
      text += (text.empty() ? "" : ", ") + name + " " + std::to_string(rewrites) +
              (rewrites == 1 ? " rewrite" : " rewrites");
  return text.empty() ? "none applied" : text;
}

// The end of the Achieved row: the share of the measured peak, or why there is none.
std::string mfu_text(const std::optional<store::RunMfu>& mfu) {
  if (!mfu) return "; MFU not looked up (--no-store: no results database)";
  if (!mfu->peak)
    return "; MFU: no measured " + mfu->precision + " peak of " + mfu->device +
           " on this machine; run `dlbench micro gemm --device " + mfu->device + "`";
  if (!std::isfinite(mfu->mfu)) return "";
  const double percent = 100 * mfu->mfu;
  const int digits = percent >= 10 ? 0 : percent >= 1 ? 1 : 2;
  // Above 100 % the stored peak is wrong, not the run: micro gemm ran shapes too small to fill
  // the device (a quick test sweep, say).
  const std::string doubt = mfu->mfu > 1 ? "; above 100 %: that peak was measured on shapes too "
                                           "small, rerun `dlbench micro gemm` with its defaults"
                                         : "";
  return ", " + fixed(percent, digits) + " % of the measured " + mfu->precision + " peak" +
         (mfu->replicas > 1 ? " (per replica)" : "") + " (micro gemm run " +
         std::to_string(mfu->peak->run_id) + ")" + doubt;
}

// Samples per joule and mean board power, when the GPUs' energy counters were sampled.
std::string energy_text(const result::RunResult& r) {
  const auto* per_joule = find_metric(r, "energy/samples_per_joule");
  if (per_joule == nullptr) return "";
  std::string text = significant(per_joule->value, 4) + " " + r.sample_unit + "/J";
  if (const auto* power = find_metric(r, "power/mean_w"))
    text += ", mean board power " + fixed(power->value, 0) + " W";
  return text;
}

// fp16's dynamic loss scaling: how many steps it skipped and where the scale ended. A skipped
// step still counts in the throughput (as PyTorch's GradScaler skips it), so a reader should
// see when many did.
std::string loss_scaling_text(const result::RunResult& r) {
  const auto* skipped = find_metric(r, "loss_scaling/skipped_steps");
  const auto* scale = find_metric(r, "loss_scaling/final_scale");
  if (skipped == nullptr || scale == nullptr) return "";
  const long long steps = r.measured_steps + r.config.warmup_steps;
  return "dynamic: " + count_text(static_cast<long long>(skipped->value), "step") + " of " +
         std::to_string(steps) + " skipped for non-finite gradients (warm-up included), scale " +
         significant(scale->value, 6) + " at the end";
}

// Time before the measured steps, as the compiled peer's compilation time is shown: building,
// and the warm-up whose first step measures the algorithms.
std::string start_up_text(const result::RunResult& r) {
  const auto* build = find_metric(r, "startup/build_seconds");
  if (build == nullptr) return "";
  std::string text = "built in " + fixed(build->value, 2) + " s";
  if (const auto* warmup = find_metric(r, "startup/warmup_seconds")) {
    text += ", warm-up " + fixed(warmup->value, 2) + " s";
    if (const auto* first = find_metric(r, "startup/first_step_seconds"))
      text += " (first step " + fixed(first->value, 2) + " s)";
  }
  const auto* shapes = find_metric(r, "startup/planning_shapes");
  const auto* planning = find_metric(r, "startup/planning_seconds");
  if (shapes != nullptr && planning != nullptr) {
    text += "; " + fixed(shapes->value, 0) + " shapes' algorithms measured in " +
            fixed(planning->value, 2) + " s (";
    const std::string prefix = "startup/planning/";
    bool first_part = true;
    for (const result::Metric& m : r.metrics) {
      if (m.tag.rfind(prefix, 0) != 0) continue;
      // The description is "measuring algorithms: LABEL" (workload_runner.cc).
      const std::size_t colon = m.description.find(": ");
      const std::string label = colon == std::string::npos ? m.tag.substr(prefix.size())
                                                           : m.description.substr(colon + 2);
      text += (first_part ? "" : ", ") + label + " " + fixed(m.value, 2) + " s";
      first_part = false;
    }
    text += ")";
  }
  return text + "; not in the throughput";
}

void print_text(const result::RunResult& r, std::ostream& out,
                const std::optional<store::RunMfu>& mfu) {
  const result::RunConfig& c = r.config;
  std::string title = c.model + " " + to_string(c.mode) + " " + to_string(c.precision) + " on " +
                      to_string(c.launch.device) + ", batch " + std::to_string(*c.batch);
  // Models without an input size (NCF's pairs) have none to name. Volumes (3D U-Net's patches)
  // have three sides of that size, images two; the language models' size is a length in tokens.
  if (c.input_size > 0) {
    const std::string side = std::to_string(c.input_size);
    const result::InputSizeKind kind = result::input_size_kind(r.sample_unit);
    if (kind == result::InputSizeKind::kSequenceLength)
      title += ", length " + side + " tokens";
    else
      title += ", input " + side + "x" + side +
               (kind == result::InputSizeKind::kVolumeSide ? "x" + side : "");
  }
  if (c.beam > 1 && c.mode == Mode::kInfer) title += ", beam " + std::to_string(c.beam);
  const std::string per_second = " " + r.sample_unit + "/s";  // images/s, pairs/s
  Section s(title);
  s.row("Model", r.model_description);
  if (!r.data_description.empty()) s.row("Data", r.data_description);
  if (!c.class_weights.empty()) {
    std::string weights;
    for (std::size_t i = 0; i < c.class_weights.size(); ++i)
      weights += std::string(i ? ", " : "") + significant(c.class_weights[i], 6);
    s.row("Class weights", weights + " (classes 0 to " +
                               std::to_string(c.class_weights.size() - 1) +
                               "; the cross-entropy is their weighted mean)");
  }
  s.row("Backend", r.backend)
      .row("Parameters", std::to_string(r.parameters))
      .row("FLOPs per sample", fixed(r.flops_per_sample / 1e9, 3) + " GFLOP" +
                                   (c.mode == Mode::kTrain ? " (forward + backward)" : ""))
      .row("Measured", count_text(r.measured_steps, "step") + " in " +
                           fixed(r.measured_seconds, 2) + " s after " +
                           count_text(c.warmup_steps, "warm-up step"))
      .row("Throughput", fixed(r.throughput, 2) + per_second + median_note(r));
  // Rates of another unit beside the samples': a language model's tokens, the data's own unit
  // (a text's words for Word2Vec, a corpus's tokens for BERT).
  for (const result::Metric& m : r.metrics)
    if ((m.tag.rfind("data/", 0) == 0 || m.tag == "throughput/tokens_per_s") &&
        m.unit.ends_with("/s"))
      s.row("", fixed(m.value, 2) + " " + m.unit + ": " + m.description);
  add_repeats_row(s, r);
  s.row("Step time", "mean " + fixed(r.step.mean_ms, 1) + " ms, median " +
                         fixed(r.step.median_ms, 1) + ", p5 " + fixed(r.step.p5_ms, 1) + ", p95 " +
                         fixed(r.step.p95_ms, 1) + ", CV " + cv_text(r.step));
  add_warning_rows(s, r);
  if (!r.graphs.empty()) s.row("Device graphs", r.graphs);
  if (!r.passes.empty()) s.row("Graph passes", passes_text(r));
  if (const auto* m = find_metric(r, "compute/achieved_gflops")) {
    // TFLOP/s from 1000 GFLOP/s on: a GPU's "119893.2 GFLOP/s" reads as 119.9 TFLOP/s.
    const std::string rate =
        m->value >= 1000 ? fixed(m->value / 1000, 1) + " TFLOP/s" : fixed(m->value, 1) + " GFLOP/s";
    s.row("Achieved", rate + mfu_text(mfu));
  }
  if (const std::string energy = energy_text(r); !energy.empty()) s.row("Energy", energy);
  if (const auto* m = find_metric(r, "memory/planned_gib")) {
    std::string mem = format_bytes(m->value * (1 << 30)) + " planned";
    if (const auto* a = find_metric(r, "memory/activations_gib"))
      mem += " (activations " + format_bytes(a->value * (1 << 30)) + ")";
    if (const auto* a = find_metric(r, "memory/allocated_peak_gib"))
      mem += ", " + format_bytes(a->value * (1 << 30)) + " allocated at peak";
    if (const auto* ws = find_metric(r, "memory/workspace_gib")) {
      mem += " (workspace " + format_bytes(ws->value * (1 << 30));
      if (const auto* lent = find_metric(r, "memory/workspace_in_activations_gib"))
        mem +=
            ", and up to " + format_bytes(lent->value * (1 << 30)) + " in free activation memory";
      mem += ")";
    }
    if (const auto* rss = find_metric(r, "memory/process_peak_rss_gib"))
      mem += ", process peak RSS " + format_bytes(rss->value * (1 << 30));
    s.row("Memory", mem);
  }
  if (const auto* m = find_metric(r, "memory/peak_gib"))
    s.row("Memory", format_bytes(m->value * (1 << 30)) + " peak in the framework's allocator");
  if (const std::string start_up = start_up_text(r); !start_up.empty()) s.row("Start-up", start_up);
  if (const auto* c = find_metric(r, "compile/seconds"))
    s.row("Compilation", fixed(c->value, 1) +
                             " s (the first step, before the warm-up; not in the "
                             "throughput)");
  if (r.data_parallel) {
    const result::DataParallel& dp = *r.data_parallel;
    const char* launch = dp.launch == "mpi" ? "a process each" : "a thread each";
    s.row("Data parallel", std::to_string(dp.replicas) + " replicas (" + launch + "; " +
                               dp.communicator + "), global batch " +
                               std::to_string(dp.global_batch) + ", " + std::to_string(dp.buckets) +
                               " all-reduce buckets per step");
    if (!dp.interconnect.empty()) s.row("Interconnect", dp.interconnect);
    s.row("Replicas", std::string(dp.replicas_identical ? "identical" : "DIFFERENT") +
                          " weights after the last step; throughput per replica " +
                          fixed(r.throughput / dp.replicas, 2) + per_second);
    if (!dp.replica_steps.empty())
      s.row("Slow steps", result::stragglers_text(
                              result::run_stragglers(dp.replica_steps, dp.replica_steps_origin_ms,
                                                     r.telemetry ? &*r.telemetry : nullptr)));
  }
  if (c.mode == Mode::kTrain) {
    std::string loss = significant(r.first_loss, 5) + " (first measured step) -> " +
                       significant(r.last_loss, 5) + " (last)";
    // Throughput does not depend on the loss, but a reader must not mistake divergence for
    // a bug: say what happened and what to do.
    if (!std::isfinite(r.first_loss) || !std::isfinite(r.last_loss) ||
        r.last_loss > kDivergedRatio * r.first_loss)
      loss += "; diverged at --lr " + significant(c.learning_rate, 6) +
              " on this synthetic batch " +
              "(throughput is unaffected; a smaller --lr keeps it finite)";
    s.row("Loss", loss);
    if (const std::string scaling = loss_scaling_text(r); !scaling.empty())
      s.row("Loss scaling", scaling);
  }
  add_quality_rows(s, r);
  s.print(out);
}

// Where the work is: one row per layer, with its share of the forward multiply-accumulates.
void print_layers(const result::RunResult& r, std::ostream& out) {
  std::int64_t total = 0;
  for (const auto& l : r.layers) total += l.forward_macs;
  std::size_t width = 5;
  for (const auto& l : r.layers) width = std::max(width, l.name.size());
  out << "\nLayers (forward MACs per batch)\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-*s  %-10s  %-20s  %12s  %10s  %6s\n",
                static_cast<int>(width), "layer", "kind", "output", "parameters", "GMAC", "share");
  out << line;
  for (const auto& l : r.layers) {
    std::snprintf(line, sizeof line, "  %-*s  %-10s  %-20s  %12lld  %10.3f  %5.1f%%\n",
                  static_cast<int>(width), l.name.c_str(), l.kind.c_str(), l.output.str().c_str(),
                  static_cast<long long>(l.parameters), l.forward_macs / 1e9,
                  total > 0 ? 100.0 * static_cast<double>(l.forward_macs) / total : 0.0);
    out << line;
  }
}

}  // namespace

void add_run_command(CLI::App& app, const GlobalOptions& global) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "Train or run inference on one model and measure it");
  opts->workload.precision = "fp32";
  add_workload_options(*run, opts->workload,
                       {"Samples per step, per replica with --gpus or --dist", "Input size",
                        "Warm-up steps, not measured", "Measured steps",
                        "Measure for this many seconds instead of --steps",
                        "Sample GPU/CPU/memory telemetry during the measured steps (default on)"});
  add_launch_options(*run, opts->launch,
                     {.command = "run",
                      .device = "cpu or cuda:N (default: cuda:0 when a GPU is present)",
                      .gpus = "Data parallel over this machine's GPUs, a thread each: N or all "
                              "(--batch is per GPU)",
                      .gpus_names = "--gpus"});
  run->add_option("--data", opts->data,
                  "Train or infer on this data file instead of synthetic data (" +
                      models::data_formats() + ")")
      ->type_name("FILE");
  run->add_option("--test-data", opts->test_data,
                  "After training on --data, translate this test set (sentence pairs as --data "
                  "holds them) and score BLEU against its targets (gnmt; greedy, or --beam)")
      ->type_name("FILE");
  run->add_option("--seed", opts->seed, "Seed of the weights and the synthetic data")
      ->capture_default_str();
  run->add_option(
         "--lr", opts->lr,
         "Learning rate (training): SGD's, or Adam's for the models that train with Adam or "
         "AdamW (" +
             adam_models() + ")")
      ->capture_default_str();
  run->add_option("--momentum", opts->momentum, "SGD momentum (training; Adam has none)")
      ->capture_default_str();
  add_class_weights_option(*run, opts->class_weights);
  run->add_flag("--layers", opts->layers,
                "Also print every layer: output shape, parameters, share of the MACs");
  run->add_option("--profile-layers", opts->profile_layers,
                  "Off unless given: after the measured steps, run N more (5 when N is left "
                  "out) with device events around every layer and print where a step's time "
                  "goes")
      ->expected(0, 1)
      ->default_str("5")
      ->type_name("N");
  run->add_option("--interval", opts->interval, "Telemetry sampling interval in seconds")
      ->capture_default_str();
  run->add_option("--json", opts->json_path,
                  "Write the result as JSON to FILE (stdout when FILE is '-' or left out)")
      ->expected(0, 1)
      ->default_str("-")
      ->type_name("FILE");
  run->add_flag("--no-store", opts->no_store, "Do not store the result in the results database");
  run->add_option("--framework", opts->framework,
                  "native (dlbench's engine), or a peer run by peers/FRAMEWORK_worker.py: "
                  "pytorch, pytorch-compile (torch.compile), jax")
      ->capture_default_str();
  add_peer_options(*run, opts->peer);
  run->add_option("--repeat", opts->repeat,
                  "Measure N times (1 to 100), each built, warmed up and measured anew; report "
                  "the median and the spread")
      ->type_name("N")
      ->capture_default_str();
  run->callback([opts, &global] {
    result::RunConfig config;
    peers::check_framework(opts->framework);
    config.framework = opts->framework;
    apply_workload_options(opts->workload, config);
    // MPI, when asked for, lives as long as the run; ranks other than 0 measure but neither
    // print nor store.
    const LaunchContext where =
        resolve_launch(opts->launch, peers::is_peer(config.framework) ? LaunchTarget::kPeer
                                                                      : LaunchTarget::kEngine);
    config.launch = where.launch;
    if (opts->seed < 0)
      throw result::ConfigError("seed", "must not be negative, not " + std::to_string(opts->seed),
                                "42");
    config.seed = static_cast<std::uint64_t>(opts->seed);
    config.learning_rate = opts->lr;
    config.momentum = opts->momentum;
    config.profile_steps = opts->profile_layers;
    config.telemetry_interval_s = opts->interval;
    config.repeat = result::parse_repeat(opts->repeat);
    if (opts->data && opts->data->empty())
      throw result::ConfigError("data", "must name a file", "ml-1m/ratings.dat");
    config.data = opts->data.value_or("");
    if (opts->test_data && opts->test_data->empty())
      throw result::ConfigError("test-data", "must name a file", "newstest2014.ids");
    config.test_data = opts->test_data.value_or("");
    if (opts->class_weights) config.class_weights = parse_class_weights(*opts->class_weights);
    const bool root = where.root();
    // Every value checked before the database or an output file is touched.
    config = runner::validated(config);

    // The output's folder is checked now, so a typo in the path fails before minutes of
    // measuring; the file itself is replaced only when the run succeeds.
    std::string json_path = root ? opts->json_path.value_or(global.json ? "-" : "") : "";
    OutputFile json_file(json_path);

    runner::RunHooks hooks;
    RunProgress progress({config.warmup_steps, config.steps, config.seconds, config.profile_steps,
                          *config.batch * where.replicas(), config.repeat},
                         isatty(STDERR_FILENO) != 0, global.verbose, std::cerr);
    if (!global.quiet && root)
      hooks.on_step = [&progress](const std::string& phase, int step, int total) {
        progress.step(phase, step, total);
      };
    // Opened before measuring, so a bad --db fails first.
    std::unique_ptr<store::Store> db = opts->no_store || !root ? nullptr : open_store(global);
    // SIGINT and SIGTERM stop a native run on one device after its current step, and what it
    // measured is stored as interrupted. Not covered, so ended by the signal at once as before:
    // data-parallel runs (the replicas would have to agree on the step) and peers (the worker,
    // in the terminal's process group, gets the signal too).
    std::optional<StopSignals> stop;
    if (config.launch.mode == LaunchMode::kSingle && !peers::is_peer(config.framework)) {
      stop.emplace();
      hooks.stop = [&stop] { return stop->reason(); };
    }
    result::RunResult result = result::run_repeated(config.repeat, [&](int repeat) {
      progress.repeat(repeat);
      return peers::is_peer(config.framework) ? peers::run_peer(config, opts->peer, hooks)
                                              : runner::run_workload(config, hooks);
    });
    progress.finish();
    std::optional<store::RunMfu> mfu;
    if (db) mfu = store::add_mfu_metric(result, *db);
    std::int64_t id = db ? db->save_run(store::run_record(result)) : 0;
    if (!result.interrupted.empty()) {
      // A partial run is in the database (or nowhere, with --no-store); no --json output is
      // written for it, so a file from an earlier run stays as it was.
      if (result.measured_steps > 0 && json_path != "-") print_text(result, std::cout, mfu);
      std::cout.flush();
      std::cerr << "dlbench: " << result.interrupted << "; "
                << (db ? "stored as run " + std::to_string(id) + " (interrupted) in " +
                             db->location()
                       : std::string("not stored (--no-store)"))
                << "\n";
      db.reset();  // closed before the process ends
      DLBENCH_CHECK(stop.has_value(), "only a stop signal interrupts a run");
      throw Interrupted(stop->signal());
    }
    if (db) std::cerr << "stored as run " << id << " in " << db->location() << "\n";
    if (!root) return;
    nlohmann::json doc = result::to_json(result);
    if (json_path == "-")
      std::cout << dump_json(doc, 2) << "\n";
    else {
      if (json_file.is_file()) {
        json_file.stream() << dump_json(doc, 2) << "\n";
        json_file.commit();
      }
      print_text(result, std::cout, mfu);
      if (opts->layers) print_layers(result, std::cout);
      if (result.layer_profile) print_layer_profile(std::cout, *result.layer_profile);
      if (result.telemetry && !global.quiet) {
        std::cout << "\nTelemetry of the measured steps\n";
        print_telemetry_table(std::cout, result.telemetry->summary, result.telemetry->gpus);
      }
    }
    // A signal that came after the last step: the run is complete and stored; the process
    // still ends by it, as the user asked.
    if (stop && stop->signal() != 0) {
      std::cerr << "dlbench: " << stop->reason() << " came after the last step; the run completed"
                << (db ? " and is stored as run " + std::to_string(id) : std::string()) << "\n";
      db.reset();
      throw Interrupted(stop->signal());
    }
  });
}

}  // namespace dlbench::cli
