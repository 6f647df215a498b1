#include "bench/runner/workload_runner.h"

#include <sys/resource.h>

#include <unistd.h>

#include <chrono>
#include <memory>

#include "bench/nvml/nvml.h"
#include "bench/sysinfo/machine_info.h"
#include "bench/telemetry/sampler.h"
#include "bench/telemetry/sources.h"
#include "engine/backend/backend.h"
#include "engine/data/synthetic.h"
#include "engine/models/registry.h"
#include "engine/nn/network.h"

namespace dlbench::runner {
namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

double peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports KiB
}

void add_metrics(RunResult& r, const nn::MemoryReport& mem) {
  auto add = [&](std::string tag, double value, std::string unit, std::string what) {
    r.metrics.push_back({std::move(tag), value, std::move(unit), std::move(what)});
  };
  const double gib = 1024.0 * 1024.0 * 1024.0;
  add_timing_metrics(r, "their synchronized wall time",
                     "2 x multiply-accumulates of convolutions and matmuls per sample per step");
  add("memory/planned_gib", static_cast<double>(mem.total()) / gib, "GiB",
      "device memory the network holds: weights, optimizer, state, planned activations");
  add("memory/activations_gib", static_cast<double>(mem.activations) / gib, "GiB",
      "the planned activation arena (activations and their gradients)");
  if (r.config.device.type == DeviceType::kCpu)
    add("memory/process_peak_rss_gib", peak_rss_bytes() / gib, "GiB",
        "peak resident memory of the dlbench process (getrusage)");
  if (r.config.precision == nn::Precision::kFp16 && r.config.mode == nn::Mode::kTrain) {
    add("loss_scaling/skipped_steps", r.skipped_steps, "steps",
        "steps skipped (warm-up included) because fp16 gradients were not finite");
    add("loss_scaling/final_scale", r.loss_scale, "factor", "the dynamic loss scale at the end");
  }
  if (r.config.mode == nn::Mode::kTrain) {
    add("loss/first", r.first_loss, "nats", "training loss of the first measured step");
    add("loss/last", r.last_loss, "nats", "training loss of the last measured step");
  }
}

}  // namespace

RunResult run_workload(const RunConfig& requested, const RunHooks& hooks) {
  RunConfig config = validated(requested);
  const models::ModelInfo& model = models::find_model(config.model);
  models::ModelConfig mc;
  mc.batch = *config.batch;
  mc.input_size = config.input_size;
  mc = models::resolve(model, mc);
  config.input_size = mc.input_size;

  auto backend = backend::make_backend(config.device);
  nn::NetworkConfig nc;
  nc.mode = config.mode;
  nc.precision = config.precision;
  nc.seed = config.seed;
  nc.sgd.learning_rate = config.learning_rate;
  nc.sgd.momentum = config.momentum;
  nn::Graph graph = model.build(mc);
  Shape input_shape = graph.value(graph.input()).shape;
  nn::Network net(std::move(graph), *backend, nc);
  data::SyntheticSource source(*backend, input_shape, mc.classes, config.seed + 7, net.dtype());

  RunResult r;
  r.config = config;
  r.model_description = model.description;
  r.backend = backend->name();
  r.parameters = net.parameter_count();
  r.layers = net.layer_summaries();
  const bool train = config.mode == nn::Mode::kTrain;
  r.flops_per_sample =
      2.0 * static_cast<double>(train ? net.train_macs() : net.forward_macs()) / mc.batch;

  auto step = [&] {
    data::Batch b = source.next();
    if (train)
      net.train_step(b.images, b.labels);
    else
      net.infer_step(b.images);
  };
  for (int i = 0; i < config.warmup_steps; ++i) {
    if (hooks.on_step) hooks.on_step("warm-up", i + 1, config.warmup_steps);
    step();
    backend->synchronize();
  }

  // The sampler follows dlbench's own process and every GPU during the measured steps only.
  auto nvml = nvml::Nvml::open();
  std::unique_ptr<telemetry::Sampler> sampler;
  telemetry::SourceSet sources;
  if (config.telemetry) {
    sources = telemetry::make_sources({getpid(), {}, nvml});
    sampler = std::make_unique<telemetry::Sampler>(std::move(sources.sources),
                                                   config.telemetry_interval_s);
    sampler->start();
  }
  if (hooks.on_measure_begin) hooks.on_measure_begin();
  std::vector<double> step_ms;
  const int planned = config.seconds > 0 ? -1 : config.steps;
  const Clock::time_point start = Clock::now();
  for (int i = 0; planned < 0 || i < planned; ++i) {
    if (planned < 0 && elapsed_ms(start) >= config.seconds * 1000.0 && i > 0) break;
    if (hooks.on_step) hooks.on_step("measure", i + 1, planned);
    Clock::time_point t = Clock::now();
    step();
    backend->synchronize();
    step_ms.push_back(elapsed_ms(t));
    if (train && i == 0) r.first_loss = net.loss();
  }
  r.measured_seconds = elapsed_ms(start) / 1000.0;
  if (hooks.on_measure_end) hooks.on_measure_end();
  if (sampler) {
    sampler->stop();
    r.telemetry = sampler->summary();
    for (const std::string& note : sources.notes) r.telemetry->notes.push_back(note);
    r.telemetry_metrics = sampler->metrics();
    r.telemetry_samples = sampler->samples();
    r.telemetry_gpus = sources.gpus;
  }
  if (train) r.last_loss = net.loss();

  r.measured_steps = static_cast<int>(step_ms.size());
  r.throughput = static_cast<double>(r.measured_steps * mc.batch) / r.measured_seconds;
  r.step = summarize_steps(step_ms);
  r.skipped_steps = net.skipped_steps();
  r.loss_scale = net.loss_scale();
  add_metrics(r, net.memory());
  r.environment = sysinfo::to_json(sysinfo::query_machine(*nvml));
  return r;
}

}  // namespace dlbench::runner
