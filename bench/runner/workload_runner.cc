#include "bench/runner/workload_runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <optional>

#include "bench/nvml/nvml.h"
#include "bench/result/efficiency.h"
#include "bench/runner/dice_eval.h"
#include "bench/runner/launch_plan.h"
#include "bench/runner/layer_profiler.h"
#include "bench/runner/peak_rss.h"
#include "bench/runner/ranking_eval.h"
#include "bench/runner/sampled_gpus.h"
#include "bench/runner/stepped_model.h"
#include "bench/runner/trainer_setup.h"
#include "bench/runner/translation_eval.h"
#include "bench/runner/validated_config.h"
#include "bench/runner/word_neighbours.h"
#include "bench/sysinfo/interconnect.h"
#include "bench/sysinfo/machine_info.h"
#include "bench/telemetry/window.h"
#include "engine/backend/backend.h"
#include "engine/core/hash.h"
#include "engine/data/synthetic.h"
#include "engine/dist/mpi_session.h"
#include "engine/dist/replicas.h"
#include "engine/models/registry.h"
#include "engine/nn/trainer.h"

namespace dlbench::runner {
namespace {

using Clock = std::chrono::steady_clock;

// Every replica's measured steps, their starts on the machine's monotonic clock made relative to
// the first start of the first step. Gathered after the window, two numbers a step, so the timed
// steps hold no extra collective; up to the fewest steps any replica measured (none: empty).
// `origin_ms` gets the first start on the clock (the telemetry sampler's too).
std::vector<result::ReplicaSteps> gather_replica_steps(dist::Communicator& comm,
                                                       const std::vector<double>& start_ms,
                                                       const std::vector<double>& step_ms,
                                                       double& origin_ms) {
  const std::vector<double> counts = comm.allgather(static_cast<double>(step_ms.size()));
  const auto steps = static_cast<std::size_t>(*std::min_element(counts.begin(), counts.end()));
  std::vector<result::ReplicaSteps> out(static_cast<std::size_t>(comm.size()));
  for (std::size_t i = 0; i < steps; ++i) {
    const std::vector<double> starts = comm.allgather(start_ms[i]);
    const std::vector<double> times = comm.allgather(step_ms[i]);
    for (std::size_t r = 0; r < out.size(); ++r) {
      out[r].start_ms.push_back(starts[r]);
      out[r].ms.push_back(times[r]);
    }
  }
  if (steps == 0) return {};
  double origin = out.front().start_ms.front();
  for (const result::ReplicaSteps& r : out) origin = std::min(origin, r.start_ms.front());
  origin_ms = origin;
  // To the microsecond: a long --seconds run stores every step of every replica.
  auto microseconds = [](double ms) { return std::round(ms * 1000.0) / 1000.0; };
  for (result::ReplicaSteps& r : out) {
    for (double& t : r.start_ms) t = microseconds(t - origin);
    for (double& t : r.ms) t = microseconds(t);
  }
  return out;
}

// Ranks of an MPI job on this node (1 outside MPI): each drives cuda:<local rank>.
int mpi_local_ranks() {
  const dist::MpiSession* mpi = dist::MpiSession::current();
  return mpi != nullptr ? mpi->local_size() : 1;
}

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

void add_metrics(result::RunResult& r, const nn::MemoryReport& mem, std::size_t allocated_peak,
                 std::size_t workspace, const PeakRss& rss) {
  auto add = [&](std::string tag, double value, std::string unit, std::string what) {
    r.metrics.push_back({std::move(tag), value, std::move(unit), std::move(what)});
  };
  const double gib = 1024.0 * 1024.0 * 1024.0;
  result::add_timing_metrics(
      r, "their synchronized wall time",
      "2 x multiply-accumulates of convolutions and matmuls per sample per step");
  add("memory/planned_gib", static_cast<double>(mem.total()) / gib, "GiB",
      "device memory the trainer holds: weights, optimizer, state, planned activations");
  add("memory/activations_gib", static_cast<double>(mem.activations) / gib, "GiB",
      "the planned activation arena (activations and their gradients)");
  add("memory/allocated_peak_gib", static_cast<double>(allocated_peak) / gib, "GiB",
      "the most device memory dlbench's own allocations held at once during the measured "
      "steps: the planned memory plus library workspaces and data (no CUDA context)");
  if (r.config.launch.device.type != DeviceType::kCpu)
    add("memory/workspace_gib", static_cast<double>(workspace) / gib, "GiB",
        "of the peak, the backend's workspace after the run (convolution algorithms, fused "
        "plans, im2col columns)");
  if (mem.lent_workspace > 0)
    add("memory/workspace_in_activations_gib", static_cast<double>(mem.lent_workspace) / gib, "GiB",
        "the most workspace one layer's ops took from activation memory that no value held "
        "while they ran (inside the activations, not beside them)");
  if (r.config.launch.device.type == DeviceType::kCpu)
    add("memory/process_peak_rss_gib", rss.bytes / gib, "GiB",
        rss.since_reset ? "peak resident memory of the dlbench process during this run (VmHWM)"
                        : "peak resident memory of the dlbench process since it started");
  if (r.config.precision == Precision::kFp16 && r.config.mode == Mode::kTrain) {
    add("loss_scaling/skipped_steps", r.skipped_steps, "steps",
        "steps skipped (warm-up included) because fp16 gradients were not finite");
    add("loss_scaling/final_scale", r.loss_scale, "factor", "the dynamic loss scale at the end");
  }
  if (r.data_parallel) {
    const result::DataParallel& dp = *r.data_parallel;
    add("data_parallel/replicas", dp.replicas, "replicas", "replicas (GPUs or processes)");
    add("data_parallel/samples_per_s_per_replica", r.throughput / dp.replicas, "samples/s",
        "throughput divided by the replicas");
    add("data_parallel/replicas_identical", dp.replicas_identical ? 1 : 0, "bool",
        "1 when every replica's weights hashed the same after the last step");
  }
  if (r.config.mode == Mode::kTrain) {
    add("loss/first", r.first_loss, "nats", "training loss of the first measured step");
    add("loss/last", r.last_loss, "nats", "training loss of the last measured step");
  }
}

// "1 measured step", "3 measured steps".
std::string count(int n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// What stopped a run early and when, for the terminal and the store's note.
// `cut`: the stop came inside the measured window; else after it, before the profiled steps.
std::string interruption_note(const std::string& why, const result::RunConfig& c, int warmed,
                              int measured, int planned, bool cut) {
  const std::string by = "interrupted by " + why;
  if (measured == 0 && c.warmup_steps == 0) return by + " before its first measured step";
  if (measured == 0)
    return by + " during warm-up (after " + std::to_string(warmed) + " of " +
           count(c.warmup_steps, "step") + "), before any measured step";
  if (!cut)
    return by + " after its " + count(measured, "measured step") + ", before the " +
           count(c.profile_steps, "profiled step");
  if (planned < 0) {
    char window[32];
    std::snprintf(window, sizeof window, "%g", c.seconds);
    return by + " after " + count(measured, "measured step") + " of a " + window + " s window";
  }
  return by + " after " + std::to_string(measured) + " of " + count(planned, "measured step");
}

struct StartUp {
  double build_ms = 0, first_step_ms = 0, warmup_ms = 0;
  backend::PlanningTime planning;  // by the end of the warm-up
};

void add_start_up_metrics(result::RunResult& r, const StartUp& s, int warmed) {
  result::add_metric(r, "startup/build_seconds", s.build_ms / 1000.0, "s",
                     "building the trainer: memory plan, allocations, weight initialization");
  if (warmed == 0) return;
  result::add_metric(r, "startup/warmup_seconds", s.warmup_ms / 1000.0, "s",
                     "the warm-up steps, not measured");
  result::add_metric(r, "startup/first_step_seconds", s.first_step_ms / 1000.0, "s",
                     "the first warm-up step: it chooses algorithms by measurement and plans");
  if (s.planning.shapes == 0) return;
  result::add_metric(r, "startup/planning_shapes", static_cast<double>(s.planning.shapes), "shapes",
                     "op shapes whose algorithm was chosen by measuring");
  result::add_metric(r, "startup/planning_seconds", s.planning.seconds(), "s",
                     "measuring those shapes' algorithms, all parts");
  for (const backend::PlanningTime::Part& part : s.planning.parts)
    result::add_metric(r, "startup/planning/" + part.tag + "_seconds", part.seconds, "s",
                       "measuring algorithms: " + part.label);
}

// One replica's part of a run; the root replica's result is the run's.
// `test_set`: the translation test set to score after training (--test-data), or null.
result::RunResult run_replica(const result::RunConfig& config,
                              const std::shared_ptr<const data::Dataset>& data,
                              const data::SentencePairs* test_set, dist::Replica& replica,
                              const RunHooks& hooks) {
  const bool rss_reset = reset_peak_rss();  // this run's peak, not an earlier run's
  const models::ModelSpec& model = models::find_model(config.model);
  const models::ModelConfig mc = model_config(model, config, *config.batch, data);
  const std::int64_t samples_per_step = models::samples_per_step(model, mc);

  backend::Backend& be = replica.backend;
  if (config.memory_limit_bytes > 0) be.allocator().set_limit(config.memory_limit_bytes);
  const Clock::time_point build_start = Clock::now();
  SteppedModel net(model, mc, config, be, replica.communicator);
  nn::Trainer* trainer = net.trainer();  // null when the model decodes
  if (test_set != nullptr) check_test_set(*test_set, net.input_specs());
  // Each replica reads its own part of the data, as a distributed sampler would give it.
  const std::uint64_t data_seed = config.seed + 7 + static_cast<std::uint64_t>(replica.rank);
  std::unique_ptr<data::DataSource> source =
      mc.data ? mc.data->source(net.input_specs(), data_seed)
              : std::make_unique<data::SyntheticSource>(net.input_specs(), data_seed);

  result::RunResult r;
  r.config = config;
  r.config.input_size = mc.size;
  // Start-up, outside the throughput: building (planning memory, initializing weights) and the
  // warm-up, whose first step chooses every convolution's algorithm by measurement.
  StartUp start_up;
  start_up.build_ms = elapsed_ms(build_start);
  if (config.launch.mode == LaunchMode::kMpi) r.config.launch.device = be.device();
  r.model_description = model.description;
  if (mc.data) r.data_description = mc.data->describe();
  r.sample_unit = models::to_string(models::sample_unit(model, config.mode));
  r.backend = be.name();
  r.parameters = net.parameter_count();
  r.passes = net.pass_rewrites();
  for (const nn::LayerSummary& l : net.layer_summaries())
    r.layers.push_back({l.name, l.kind, l.output, l.parameters, l.forward_macs});
  const bool train = config.mode == Mode::kTrain;
  r.flops_per_sample =
      2.0 * static_cast<double>(net.step_macs()) / static_cast<double>(samples_per_step);

  auto step = [&] {
    source->fill(be, net.inputs());
    net.step();
  };
  // A stop is honoured between steps, and only where no other replica waits in a collective.
  const bool can_stop = hooks.stop && replica.communicator == nullptr;
  std::string stopped_by;  // why the run ends early; empty while it goes on
  auto stop_requested = [&] {
    if (can_stop && stopped_by.empty()) stopped_by = hooks.stop();
    return !stopped_by.empty();
  };
  int warmed = 0;
  const Clock::time_point warmup_start = Clock::now();
  for (; warmed < config.warmup_steps && !stop_requested(); ++warmed) {
    if (hooks.on_step) hooks.on_step("warm-up", warmed + 1, config.warmup_steps);
    step();
    be.synchronize();
    if (warmed == 0) start_up.first_step_ms = elapsed_ms(warmup_start);
  }
  start_up.warmup_ms = elapsed_ms(warmup_start);
  start_up.planning = be.planning_time();
  be.allocator().reset_peak();
  auto nvml = nvml::Nvml::open();
  // The root describes the machine (for the result) before the barrier, so that it starts
  // measuring with the others; its sampler follows dlbench's own process and the GPUs this
  // node's replicas drive.
  const std::optional<sysinfo::MachineInfo> machine =
      replica.root() ? std::optional(sysinfo::query_machine(*nvml)) : std::nullopt;
  const bool sampling = config.telemetry && replica.root();
  const telemetry::GpuSelection sampled =
      sampling ? sampled_gpus(config.launch, mpi_local_ranks(), machine->gpu)
               : telemetry::GpuSelection{};
  dist::Communicator* comm = replica.communicator;
  if (comm != nullptr) comm->barrier();  // every replica starts measuring together

  std::vector<double> step_ms, step_start_ms;
  std::int64_t produced = 0;  // decoding: the tokens the measured steps translated into
  bool cut = false;           // the stop ended the measured window early
  // With --seconds, replicas must agree on the step count (each step is a collective): after
  // the first measured step they share its slowest time once and all run the steps that fill
  // the time, instead of asking each other after every step inside the timed window.
  int planned = config.seconds > 0 ? -1 : config.steps;
  // The data read in the measured steps, where the source counts it in a unit of its own.
  std::optional<data::DataSource::ReadCount> read_before, read_after;
  // Stopped during warm-up: nothing is measured, so there is no window to time or sample.
  if (!stop_requested()) {
    telemetry::MeasuredWindow window(sampling, getpid(), config.telemetry_interval_s, nvml,
                                     sampled);
    window.begin();
    if (hooks.on_measure_begin) hooks.on_measure_begin();
    read_before = source->read_count();
    const Clock::time_point start = Clock::now();
    for (int i = 0; planned < 0 || i < planned; ++i) {
      if (planned < 0 && i > 0) {
        if (comm != nullptr) {
          const std::vector<double> first = comm->allgather(step_ms[0]);
          const double slowest = *std::max_element(first.begin(), first.end());
          planned = std::max(1, static_cast<int>(std::ceil(config.seconds * 1000.0 / slowest)));
          if (i >= planned) break;
        } else if (elapsed_ms(start) >= config.seconds * 1000.0) {
          break;
        }
      }
      // Once measuring began, at least one step is measured: a run never has an empty window.
      if (i > 0 && stop_requested()) {
        cut = true;
        break;
      }
      if (hooks.on_step) hooks.on_step("measure", i + 1, planned);
      Clock::time_point t = Clock::now();
      step();
      be.synchronize();
      step_ms.push_back(elapsed_ms(t));
      step_start_ms.push_back(
          std::chrono::duration<double, std::milli>(t.time_since_epoch()).count());
      if (net.decodes()) produced += net.decoder()->produced_tokens();
      if (train && i == 0) r.first_loss = trainer->loss();
    }
    r.measured_seconds = elapsed_ms(start) / 1000.0;
    read_after = source->read_count();
    if (hooks.on_measure_end) hooks.on_measure_end();
    r.telemetry = window.take();
    if (train) r.last_loss = trainer->loss();
  }

  r.measured_steps = static_cast<int>(step_ms.size());
  r.step = result::summarize_steps(step_ms);
  r.graphs = net.graph_status();
  // Algorithm searches inside the measured steps (a warm-up too short for them, or a shape first
  // seen late): on any replica, since each searches its own.
  double searched = static_cast<double>(be.planning_time().shapes - start_up.planning.shapes);
  if (comm != nullptr) {
    const std::vector<double> each = comm->allgather(searched);
    searched = *std::max_element(each.begin(), each.end());
  }
  result::add_metric(r, result::kSearchedShapesMetric, searched, "shapes",
                     "op shapes whose algorithms were chosen by measuring during the measured "
                     "steps (0: the warm-up chose them all)");
  if (trainer != nullptr) r.skipped_steps = trainer->skipped_steps();
  if (trainer != nullptr) r.loss_scale = trainer->loss_scale();
  // Per-layer time: extra steps after the measured ones (the marks add work), run by every
  // replica (a step holds collectives) and observed on the root only. A stop asked by now
  // leaves them out; one asked while they run waits for them (a handful of steps).
  auto profiled_step = [&](int i) {
    if (hooks.on_step) hooks.on_step("profile", i + 1, config.profile_steps);
    step();
    be.synchronize();
  };
  const bool profile = config.profile_steps > 0 && !stop_requested();
  if (profile && replica.root())
    r.layer_profile = profile_layers(*trainer, be, config.profile_steps, profiled_step);
  else if (profile)
    for (int i = 0; i < config.profile_steps; ++i) profiled_step(i);
  if (!stopped_by.empty())
    r.interrupted = interruption_note(stopped_by, config, warmed, r.measured_steps, planned, cut);
  std::int64_t samples = static_cast<std::int64_t>(r.measured_steps) * samples_per_step;
  if (comm != nullptr) {
    // The job is as fast as its slowest replica: its wall time counts.
    result::DataParallel dp;
    dp.replicas = comm->size();
    dp.launch = to_string(config.launch.mode);
    dp.communicator = comm->name();
    dp.global_batch = mc.batch * comm->size();
    dp.buckets = trainer ? static_cast<std::int64_t>(trainer->gradient_buckets().size()) : 0;
    dp.replica_seconds = comm->allgather(r.measured_seconds);
    dp.replica_steps =
        gather_replica_steps(*comm, step_start_ms, step_ms, dp.replica_steps_origin_ms);
    const std::vector<std::uint64_t> hashes = comm->allgather(net.weights_hash(be));
    dp.replicas_identical =
        std::all_of(hashes.begin(), hashes.end(), [&](std::uint64_t h) { return h == hashes[0]; });
    r.measured_seconds = *std::max_element(dp.replica_seconds.begin(), dp.replica_seconds.end());
    samples *= comm->size();
    r.data_parallel = std::move(dp);
  }
  // Nothing measured, no rate: never a made-up number.
  if (r.measured_steps > 0) r.throughput = static_cast<double>(samples) / r.measured_seconds;
  // The data's own unit read in the measured steps (a text's words), over all replicas. Decoding
  // counts what it translated into instead, not what the data held: the source and the reference
  // translation are no work of a translator.
  double read = read_before && read_after && !net.decodes()
                    ? double(read_after->count - read_before->count)
                    : -1;
  if (comm != nullptr && read >= 0) {
    const std::vector<double> each = comm->allgather(read);
    read = std::accumulate(each.begin(), each.end(), 0.0);
  }
  double translated = static_cast<double>(produced);
  if (comm != nullptr && net.decodes()) {
    const std::vector<double> each = comm->allgather(translated);
    translated = std::accumulate(each.begin(), each.end(), 0.0);
  }
  if (replica.root()) {
    if (r.measured_steps > 0) {
      add_metrics(r, net.memory(), be.allocator().peak_bytes(), be.workspace_bytes(),
                  read_peak_rss(rss_reset));
      add_start_up_metrics(r, start_up, warmed);
      if (model.tokens_per_sample) result::add_padded_tokens_metric(r, model.tokens_per_sample(mc));
      if (net.decodes())
        result::add_decoding_metrics(r, translated, static_cast<double>(samples),
                                     net.decoder()->max_length());
      // Under MPI the sampler sees rank 0's node: its ranks' share of the samples.
      const dist::MpiSession* mpi = dist::MpiSession::current();
      result::add_energy_metrics(
          r, mpi != nullptr ? static_cast<double>(mpi->local_size()) / mpi->size() : 1.0);
      // A model's tokens/s is its samples' padded length where it has one (BERT), else the
      // tokens its data counted (the Transformer's sentence pairs, padding left out).
      if (read >= 0) {
        const bool model_tokens = read_after->unit == "tokens" && !model.tokens_per_sample;
        result::add_metric(
            r, model_tokens ? "throughput/tokens_per_s" : "data/" + read_after->unit + "_per_s",
            read / r.measured_seconds, read_after->unit + "/s",
            read_after->what + ", per second of the measured steps");
      }
      // After the memory's peak is read: the evaluation's trainer is not the run's.
      if (train) {
        if (const auto quality = evaluate_ranking(model, mc, config, *trainer, be))
          add_ranking_metrics(r, *quality);
        if (const auto quality = evaluate_segmentation(model, mc, config, *trainer, be))
          add_segmentation_metrics(r, *quality);
        r.neighbours = nearest_neighbours(model, mc.data.get(), *trainer, be);
        // Not after a stop (a stop during it abandons it too), and a failure of its own
        // (out of memory beside the trained model) leaves the run's measurement standing.
        if (test_set != nullptr && stopped_by.empty()) {
          const bool scored = add_test_set_quality(r, config.test_data, [&] {
            return evaluate_translation(model, mc, config, *trainer, be, *test_set,
                                        [&](std::int64_t batch, std::int64_t batches) {
                                          if (hooks.on_step)
                                            hooks.on_step(kTestSetPhase, static_cast<int>(batch),
                                                          static_cast<int>(batches));
                                          return !stop_requested();
                                        });
          });
          if (!scored)
            r.interrupted = "interrupted by " + stopped_by +
                            " while translating the test set, after the measured steps: no BLEU";
        }
      }
    }
    r.environment = sysinfo::to_json(*machine);
    if (r.data_parallel && be.device().type == DeviceType::kCuda) {
      // An empty mapping would describe every GPU: say nothing rather than something wrong.
      const std::vector<int> indices = sysinfo::nvml_indices_of_cuda_devices(
          machine->gpu, node_cuda_devices(config.launch, mpi_local_ranks()));
      if (!indices.empty())
        r.data_parallel->interconnect = sysinfo::describe_interconnect(*nvml, indices).summary;
      if (const dist::MpiSession* mpi = dist::MpiSession::current();
          mpi != nullptr && mpi->size() > mpi->local_size())
        r.data_parallel->interconnect += "; nodes over the network NCCL chose";
    }
  }
  return r;
}

}  // namespace

result::RunResult run_workload(const result::RunConfig& requested, const RunHooks& hooks) {
  const result::RunConfig config = validated(requested);
  const dist::LaunchPlan plan = launch_plan(config.launch);
  // A data file is read once, before the replicas start, and shared by all of them.
  const std::shared_ptr<const data::Dataset> data =
      config.data.empty() ? nullptr
                          : models::read_data(models::find_model(config.model), config.data);
  const std::optional<data::SentencePairs> test_set =
      config.test_data.empty() ? std::nullopt
                               : std::optional(data::read_sentence_pairs(config.test_data));
  result::RunResult result;
  dist::run_replicas(plan, [&](dist::Replica& replica) {
    // Only the root replica reports progress and keeps its result.
    result::RunResult r = run_replica(config, data, test_set ? &*test_set : nullptr, replica,
                                      replica.root() ? hooks : RunHooks{});
    if (replica.root()) result = std::move(r);
  });
  return result;
}

}  // namespace dlbench::runner
