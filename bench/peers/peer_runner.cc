#include "bench/peers/peer_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "bench/nvml/nvml.h"
#include "bench/peers/protocol.h"
#include "bench/peers/worker_process.h"
#include "bench/result/efficiency.h"
#include "bench/result/run_config.h"
#include "bench/runner/sampled_gpus.h"
#include "bench/runner/validated_config.h"
#include "bench/sysinfo/machine_info.h"
#include "bench/telemetry/window.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "engine/models/registry.h"
#include "engine/nn/graph.h"

namespace dlbench::peers {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// After the summary the worker only has to exit; a framework tearing down CUDA may take a few
// seconds, never this long.
constexpr auto kExitGrace = std::chrono::seconds(30);
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// How to install each framework, for the missing-package message.
std::string install_hint(const std::string& package) {
  if (package == "torch" || package == "torchvision")
    return "install PyTorch for this python: pip install torch torchvision (pick the CUDA build "
           "at https://pytorch.org/get-started/locally/)";
  if (package == "jax" || package == "jaxlib")
    return "install JAX for this python: pip install -U \"jax[cuda12]\" (see "
           "https://docs.jax.dev/en/latest/installation.html)";
  if (package == "flax") return "install Flax for this python: pip install flax";
  return "install it for this python: pip install " + package;
}

std::string with_tail(std::string message, const WorkerProcess& worker) {
  std::string tail = worker.stderr_tail();
  if (!tail.empty()) message += "; its stderr ended with:\n" + tail;
  return message;
}

Error worker_error(const std::string& framework, const WorkerError& e,
                   const WorkerProcess& worker) {
  std::string who = framework + " worker";
  switch (e.kind) {
    case WorkerErrorKind::kMissingPackage:
      return Error(ErrorKind::kExternal,
                   "the " + framework + " peer needs the Python package '" + e.package +
                       "', which is not installed: " + e.message,
                   install_hint(e.package));
    case WorkerErrorKind::kUsage:
      return Error(ErrorKind::kUsage, who + ": " + e.message,
                   "run this configuration with --framework native, or change it");
    case WorkerErrorKind::kOutOfMemory:
      return Error(ErrorKind::kResource, who + " ran out of device memory: " + e.message,
                   "try a smaller --batch");
    case WorkerErrorKind::kMismatch:
      return Error(ErrorKind::kExternal, who + " built a different workload: " + e.message,
                   "the worker must build the same architecture as dlbench "
                   "(docs/commands.md 'Framework peers')");
    case WorkerErrorKind::kRuntime:
      break;
  }
  return Error(ErrorKind::kExternal, with_tail(who + " failed: " + e.message, worker),
               "rerun with the same flags and -v, or run the worker by hand "
               "(docs/commands.md 'Framework peers')");
}

std::vector<std::string> worker_argv(const result::RunConfig& c, const PeerOptions& o,
                                     const std::string& worker, const std::string& inputs,
                                     std::int64_t parameters) {
  // Shortest text that reads back as the same double (std::to_string keeps 6 decimals, so
  // --lr 1e-7 would reach the worker as 0.000000).
  auto num = [](double v) { return dump_json(nlohmann::json(v)); };
  std::vector<std::string> argv = {o.python,
                                   worker,
                                   "--model",
                                   c.model,
                                   "--mode",
                                   to_string(c.mode),
                                   "--batch",
                                   std::to_string(*c.batch),
                                   "--precision",
                                   to_string(c.precision),
                                   "--device",
                                   to_string(c.launch.device),
                                   "--input",
                                   std::to_string(c.input_size),
                                   "--inputs",
                                   inputs,
                                   "--warmup",
                                   std::to_string(c.warmup_steps),
                                   "--steps",
                                   std::to_string(c.steps),
                                   "--seconds",
                                   num(c.seconds),
                                   "--seed",
                                   std::to_string(c.seed),
                                   "--lr",
                                   num(c.learning_rate),
                                   "--momentum",
                                   num(c.momentum),
                                   "--expect-parameters",
                                   std::to_string(parameters)};
  if (c.beam > 1) argv.insert(argv.end(), {"--beam", std::to_string(c.beam)});
  if (!c.class_weights.empty()) {
    std::string weights;
    for (float w : c.class_weights) {
      if (!weights.empty()) weights += ',';
      weights += num(w);
    }
    argv.insert(argv.end(), {"--class-weights", weights});
  }
  return argv;
}

void add_metrics(result::RunResult& r, const Summary& s) {
  auto add = [&](std::string tag, double value, std::string unit, std::string what) {
    r.metrics.push_back({std::move(tag), value, std::move(unit), std::move(what)});
  };
  result::add_timing_metrics(
      r, "the worker's synchronized wall time of them",
      "2 x multiply-accumulates of the architecture per sample per step (dlbench's count)");
  if (s.compile_seconds)
    add("compile/seconds", *s.compile_seconds, "s",
        "the first step, compilation included (torch.compile), before the warm-up; not in the "
        "measured steps");
  if (s.peak_memory_bytes)
    add("memory/peak_gib", *s.peak_memory_bytes / kGiB, "GiB",
        "the framework allocator's peak during the measured steps (not its cached pool)");
  if (r.config.mode == Mode::kTrain && s.first_loss && s.last_loss) {
    add("loss/first", r.first_loss, "nats", "training loss of the first measured step");
    add("loss/last", r.last_loss, "nats", "training loss of the last measured step");
  }
}

std::string backend_text(const Hello& h) {
  std::string text = h.framework;
  if (h.versions.contains(h.framework) && h.versions[h.framework].is_string())
    text += " " + h.versions[h.framework].get<std::string>();
  return text + " on " + h.device;
}

}  // namespace

void check_framework(const std::string& name) {
  for (const char* f : kFrameworks)
    if (name == f) return;
  throw Error(ErrorKind::kUsage, "unknown framework '" + name + "'",
              "use --framework native, pytorch, pytorch-compile or jax");
}

std::string variant_flag(const std::string& framework) {
  const std::size_t dash = framework.find('-');
  return dash == std::string::npos ? "" : "--" + framework.substr(dash + 1);
}

bool is_peer(const std::string& framework) {
  return framework != "native";
}

std::string peers_dir() {
  if (const char* env = std::getenv("DLBENCH_PEERS_DIR"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const fs::path& candidate :
         {exe.parent_path() / "peers", exe.parent_path().parent_path() / "peers"})
      if (fs::exists(candidate / "protocol.py", ec)) return candidate.string();
  return DLBENCH_PEERS_SOURCE_DIR;
}

result::RunResult run_peer(const result::RunConfig& requested, const PeerOptions& options,
                           const runner::RunHooks& hooks) {
  result::RunConfig config = runner::validated(requested);
  check_framework(config.framework);
  DLBENCH_CHECK(is_peer(config.framework), "run_peer runs frameworks other than native");
  if (!(options.timeout_s > 0))
    throw Error(ErrorKind::kUsage, "--peer-timeout must be positive", "e.g. --peer-timeout 600");

  // The native architecture is the reference: its parameter count is what the worker must
  // build, its FLOP count what the result reports.
  const models::ModelSpec& model = models::find_model(config.model);
  models::ModelConfig mc;
  mc.batch = *config.batch;
  mc.size = config.input_size;
  mc.compute = compute_dtype(config.precision);  // so --inputs names the dtypes of this run
  mc.mode = config.mode;
  mc.seed = config.seed;
  mc = models::resolve(model, mc);
  config.input_size = mc.size;
  const std::int64_t samples_per_step = models::samples_per_step(model, mc);
  nn::Graph graph = model.build(mc);
  const std::int64_t parameters = nn::parameter_count(graph);
  const bool train = config.mode == Mode::kTrain;
  double macs = static_cast<double>(train ? nn::train_macs(graph) : nn::forward_macs(graph));
  // A translation model's inference decodes: the worker is given the sources only, and the work
  // is the encoder's and up to max_length positions of the decoder's.
  const bool decodes = !train && model.build_decoding;
  std::vector<data::InputSpec> specs = graph.input_specs();
  std::int64_t max_length = 0;
  if (decodes) {
    const nn::DecodingGraphs decoding = model.build_decoding(mc, config.beam);
    specs = decoding.encoder.input_specs();
    max_length = decoding.max_length;
    macs = static_cast<double>(nn::forward_macs(decoding.encoder) +
                               max_length * nn::forward_macs(decoding.step));
  }

  std::string worker_path =
      options.worker.empty()
          ? peers_dir() + "/" + result::base_framework(config.framework) + "_worker.py"
          : options.worker;
  if (!fs::exists(worker_path))
    throw Error(ErrorKind::kExternal, "no " + config.framework + " worker at " + worker_path,
                "set DLBENCH_PEERS_DIR to the peers/ folder of the dlbench source tree");

  result::RunResult r;
  r.config = config;
  r.model_description = model.description;
  r.sample_unit = models::to_string(models::sample_unit(model, config.mode));
  r.flops_per_sample = 2.0 * macs / static_cast<double>(samples_per_step);

  auto nvml = nvml::Nvml::open();
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<long long>(options.timeout_s * 1000));
  std::vector<std::string> argv =
      worker_argv(config, options, worker_path, inputs_argument(specs), parameters);
  if (const std::string flag = variant_flag(config.framework); !flag.empty()) argv.push_back(flag);
  WorkerProcess worker(argv);

  // The worker's process tree and its GPU, from its first measured step on.
  const sysinfo::MachineInfo machine = sysinfo::query_machine(*nvml);
  telemetry::MeasuredWindow window(config.telemetry, worker.pid(), config.telemetry_interval_s,
                                   nvml, runner::sampled_gpus(config.launch, 1, machine.gpu));
  auto begin_window = [&] {
    if (!config.telemetry || window.began()) return;
    window.begin();
    if (hooks.on_measure_begin) hooks.on_measure_begin();
  };

  SessionChecker checker;
  Hello hello;
  std::optional<Summary> summary;
  std::optional<WorkerError> reported;
  std::vector<double> step_ms;
  const int planned = config.seconds > 0 ? -1 : config.steps;
  int line_number = 0;
  bool in_time = worker.read_lines(deadline, [&](const std::string& line) {
    Message m = parse_message(line, ++line_number);
    checker.accept(m, line_number);
    switch (m.type) {
      case MessageType::kHello:
        hello = m.hello;
        if (hello.parameters != parameters)
          throw Error(ErrorKind::kExternal,
                      config.framework + " worker built " + config.model + " with " +
                          std::to_string(hello.parameters) + " parameters; dlbench's has " +
                          std::to_string(parameters),
                      "the worker must build the same architecture "
                      "(docs/commands.md 'Framework peers')");
        break;
      case MessageType::kMeasure:
        begin_window();
        break;
      case MessageType::kStep:
        begin_window();  // a worker that skips "measure" is sampled from its first step on
        step_ms.push_back(m.step.duration_ms);
        if (hooks.on_step) hooks.on_step("measure", static_cast<int>(step_ms.size()), planned);
        break;
      case MessageType::kSummary:
        summary = m.summary;
        return false;  // all the harness needs; the worker now only exits
      case MessageType::kError:
        reported = m.error;
        break;
    }
    return true;
  });
  if (window.began()) {
    window.end();
    if (hooks.on_measure_end) hooks.on_measure_end();
  }
  if (!in_time) {
    worker.kill_group();
    throw Error(ErrorKind::kExternal,
                with_tail(config.framework + " worker did not finish within --peer-timeout " +
                              std::to_string(static_cast<long long>(options.timeout_s)) +
                              " s and was killed with its process group",
                          worker),
                "raise --peer-timeout if the framework is only slow to start (compilation)");
  }
  WorkerExit exit = worker.finish(std::min(deadline, Clock::now() + kExitGrace));
  if (reported) throw worker_error(config.framework, *reported, worker);
  if (!summary) {
    std::string how = exit.timed_out     ? "did not exit within --peer-timeout"
                      : exit.signal != 0 ? "was killed by signal " + std::to_string(exit.signal)
                      : exit.code != 0   ? "exited with code " + std::to_string(exit.code)
                                         : "exited";
    throw Error(ErrorKind::kExternal,
                with_tail(config.framework + " worker " + how + " before its summary (" +
                              std::to_string(line_number) + " protocol lines)",
                          worker),
                "run the worker by hand to see the whole error: " + options.python + " " +
                    worker_path + " --help");
  }

  r.backend = backend_text(hello);
  r.parameters = hello.parameters;
  r.measured_steps = static_cast<int>(step_ms.size());
  r.measured_seconds = summary->measured_seconds;
  r.throughput = static_cast<double>(r.measured_steps * samples_per_step) / r.measured_seconds;
  r.step = result::summarize_steps(step_ms);
  if (summary->first_loss) r.first_loss = *summary->first_loss;
  if (summary->last_loss) r.last_loss = *summary->last_loss;
  add_metrics(r, *summary);
  // tokens/s as the native run counts them: a padded length's (BERT) from the model, sentence
  // pairs' (padding left out) from the worker's count of its batch.
  if (model.tokens_per_sample)
    result::add_padded_tokens_metric(r, model.tokens_per_sample(mc));
  else if (!decodes && summary->tokens_per_step)
    result::add_metric(r, "throughput/tokens_per_s",
                       *summary->tokens_per_step * r.measured_steps / r.measured_seconds,
                       "tokens/s",
                       "source and target tokens of the sentence pairs, [EOS] included, padding "
                       "left out, per second of the measured steps (the worker's count)");
  if (decodes) {
    if (!summary->translated_tokens)
      throw Error(ErrorKind::kExternal,
                  config.framework + " worker did not say how many tokens it translated into",
                  "a decoding worker sends translated_tokens in its summary");
    result::add_decoding_metrics(r, *summary->translated_tokens,
                                 static_cast<double>(r.measured_steps * samples_per_step),
                                 max_length);
  }
  r.peer = {{"framework", hello.framework}, {"versions", hello.versions},
            {"device", hello.device},       {"worker", worker_path},
            {"protocol", kProtocolVersion}, {"exit_code", exit.code}};
  r.telemetry = window.take();
  if (r.telemetry) result::add_energy_metrics(r);
  r.environment = sysinfo::to_json(machine);
  return r;
}

}  // namespace dlbench::peers
