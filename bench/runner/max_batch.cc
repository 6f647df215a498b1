#include "bench/runner/max_batch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "bench/runner/stepped_model.h"
#include "bench/runner/trainer_setup.h"
#include "bench/runner/validated_config.h"
#include "bench/runner/workload_runner.h"
#include "engine/backend/backend.h"
#include "engine/models/registry.h"

namespace dlbench::runner {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// MemAvailable of /proc/meminfo: what the host can give without swapping; 0 when unknown.
double available_host_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    double kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

// What the model for `batch` holds before its first step, in the engine's own accounting: the
// trainer, or a translation model's decoder (its two graphs and a beam's state) as its inference
// runs; nullopt when even that does not fit.
std::optional<double> planned_bytes(backend::Backend& be, const result::RunConfig& config,
                                    std::int64_t batch) {
  const models::ModelSpec& model = models::find_model(config.model);
  const std::size_t before = be.allocator().bytes_in_use();
  try {
    const SteppedModel net(model, model_config(model, config, batch), config, be, nullptr);
    return static_cast<double>(be.allocator().bytes_in_use() - before);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kResource) throw;
    return std::nullopt;
  }
}

// The probes, and the budget measured while their backend is gone again (it freed everything)
// but the process's device context stays: the memory the attempts can have.
void predict(result::MaxBatchResult& r) {
  const result::RunConfig& c = r.config;
  std::optional<double> small, large;
  {
    auto be = backend::make_backend(c.launch.device);
    r.backend = be->name();
    if (c.memory_limit_bytes > 0) be->allocator().set_limit(c.memory_limit_bytes);
    small = planned_bytes(*be, c, kProbeBatchSmall);
    if (small) large = planned_bytes(*be, c, kProbeBatchLarge);
    const std::optional<std::size_t> free = be->allocator().free_bytes();
    if (free) {
      r.budget_bytes = static_cast<double>(*free);
      r.budget_source = "free device memory";
    } else {
      r.budget_bytes = available_host_bytes();
      r.budget_source = "available host memory";
    }
    if (c.memory_limit_bytes > 0 &&
        (r.budget_bytes <= 0 || double(c.memory_limit_bytes) < r.budget_bytes)) {
      r.budget_bytes = static_cast<double>(c.memory_limit_bytes);
      r.budget_source = "the memory limit";
    }
  }
  if (!small) return;  // not even the smallest probe fits
  r.predicted = true;
  if (!large) {  // batch 1 fits, 2 does not: nothing to extrapolate
    r.prediction = {*small, 0};
    r.predicted_batch = kProbeBatchSmall;
    return;
  }
  const double per_sample = (*large - *small) / double(kProbeBatchLarge - kProbeBatchSmall);
  r.prediction = {*small - per_sample * double(kProbeBatchSmall), per_sample};
  const double room = r.budget_bytes - r.prediction.fixed_bytes;
  if (per_sample <= 0 || room <= 0) {
    r.predicted_batch = per_sample <= 0 ? r.max_batch_cap : 0;
    return;
  }
  const double fits = std::floor(room / per_sample);
  r.predicted_batch =
      fits >= double(r.max_batch_cap) ? r.max_batch_cap : static_cast<std::int64_t>(fits);
}

// On a GPU, one step at the smallest batch before anything else. CUDA loads a kernel on its
// first launch, and a first launch that finds the device full fails for the rest of the process:
// without this, the attempt after an out-of-memory one died with cudaErrorUnknown at a kernel the
// full attempt had not reached (transformer fp16 on an H200, 2026-11-29). Kernels a larger batch
// picks for the first time (other library engines) can still meet that; this covers the model's
// own. It runs before the budget is measured, so the kernels' memory is not counted as free.
// Returns the out-of-memory error of a batch of 1, which is then the search's answer; other
// errors end the search, saying where they came from.
std::optional<result::BatchAttempt> load_kernels(const result::RunConfig& config) {
  if (config.launch.device.type != DeviceType::kCuda) return std::nullopt;
  result::RunConfig c = config;
  c.batch = kProbeBatchSmall;
  c.warmup_steps = 0;
  c.steps = 1;
  const Clock::time_point start = Clock::now();
  try {
    run_workload(c);
    return std::nullopt;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kResource)
      throw Error(e.kind(),
                  std::string("one step at batch 1 before the search (loading the model's "
                              "kernels): ") +
                      e.what(),
                  e.hint(), e.setting());
    result::BatchAttempt a;
    a.batch = kProbeBatchSmall;
    a.error = e.what();
    a.seconds = seconds_since(start);
    return a;
  }
}

double peak_bytes(const result::RunResult& run) {
  for (const result::Metric& m : run.metrics)
    if (m.tag == "memory/allocated_peak_gib") return m.value * 1024.0 * 1024.0 * 1024.0;
  return 0;
}

}  // namespace

result::MaxBatchResult find_max_batch(const MaxBatchSearch& search, const MaxBatchHooks& hooks) {
  const Clock::time_point start = Clock::now();
  result::MaxBatchResult r;
  r.config = search.config;
  r.config.batch.reset();
  r.config.repeat = 1;
  r.config.profile_steps = 0;
  r.config.seconds = 0;
  r.config.launch.mode = LaunchMode::kSingle;
  // The size the model is built at (0 in the configuration means the model's default).
  r.config.input_size =
      model_config(models::find_model(r.config.model), validated(r.config), 1).size;
  r.max_batch_cap = search.max_batch_cap > 0                          ? search.max_batch_cap
                    : r.config.launch.device.type == DeviceType::kCpu ? kDefaultCpuMaxBatchCap
                                                                      : kDefaultMaxBatchCap;
  r.sample_unit =
      models::to_string(models::sample_unit(models::find_model(r.config.model), r.config.mode));
  const std::optional<result::BatchAttempt> no_room = load_kernels(r.config);
  predict(r);
  if (hooks.on_predicted) hooks.on_predicted(r);

  std::optional<result::RunResult> best;
  auto attempt = [&](std::int64_t batch) {
    if (hooks.on_attempt_start) hooks.on_attempt_start(batch);
    result::RunConfig c = r.config;
    c.batch = batch;
    result::BatchAttempt a;
    a.batch = batch;
    const Clock::time_point t = Clock::now();
    try {
      result::RunResult run = run_workload(c);
      a.fits = true;
      a.throughput = run.throughput;
      a.peak_bytes = peak_bytes(run);
      if (!best || *best->config.batch < batch) best = std::move(run);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kResource) throw;
      a.error = e.what();
    }
    a.seconds = seconds_since(t);
    r.attempts.push_back(a);
    if (hooks.on_attempt) hooks.on_attempt(a);
    return a.fits;
  };

  // fit: the largest batch known to fit (0: none yet); fail: the smallest known not to.
  const std::int64_t cap = r.max_batch_cap;
  std::int64_t fit = 0, fail = cap + 1;
  if (no_room) {  // not even batch 1 ran: nothing to search
    r.attempts.push_back(*no_room);
    if (hooks.on_attempt) hooks.on_attempt(*no_room);
    fail = kProbeBatchSmall;
  }
  r.within_percent = search.within_percent;
  auto settled = [&] {
    const auto gap = static_cast<std::int64_t>(std::floor(double(fit) * r.within_percent / 100));
    return fail - fit <= std::max<std::int64_t>(1, gap);
  };
  std::int64_t batch = std::clamp<std::int64_t>(
      search.first_batch > 0 ? search.first_batch : r.predicted_batch, 1, cap);
  std::int64_t step = std::max<std::int64_t>(1, batch / kFirstStepDivisor);
  while (!settled()) {
    if (attempt(batch))
      fit = batch;
    else
      fail = batch;
    if (settled()) break;
    if (fit > 0 && fail <= cap) {
      batch = fit + (fail - fit) / 2;  // bisect
    } else if (fit > 0) {
      batch = std::min(cap, fit + step);  // gallop up
      step *= 2;
    } else {
      batch = std::max<std::int64_t>(1, fail - step);  // gallop down
      step *= 2;
    }
  }
  r.batch = fit;
  r.capped = fit == cap;
  r.smallest_failure = fail <= cap ? fail : 0;
  r.config.batch = fit > 0 ? std::optional<std::int64_t>(fit) : std::nullopt;
  if (best) {
    r.throughput = best->throughput;
    r.measured_peak_bytes = peak_bytes(*best);
    r.environment = best->environment;
  }
  if (r.predicted && fit > 0) r.predicted_peak_bytes = r.prediction.at(fit);
  r.search_seconds = seconds_since(start);
  return r;
}

}  // namespace dlbench::runner
