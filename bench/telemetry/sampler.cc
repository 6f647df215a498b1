#include "bench/telemetry/sampler.h"

#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>

#include "engine/core/error.h"

namespace dlbench::telemetry {
namespace {

std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double thread_cpu_seconds() {
  return static_cast<double>(clock_ns(CLOCK_THREAD_CPUTIME_ID)) * 1e-9;
}

}  // namespace

Tick now_tick() {
  return {clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_REALTIME)};
}

void check_interval(double interval_s) {
  if (std::isfinite(interval_s) && interval_s >= kMinIntervalS && interval_s <= kMaxIntervalS)
    return;
  char text[160];
  std::snprintf(text, sizeof text, "sampling interval %g s is out of range", interval_s);
  char hint[160];
  std::snprintf(hint, sizeof hint,
                "use an interval from %g s to %g s (the default is %g s), e.g. --interval 0.5",
                kMinIntervalS, kMaxIntervalS, kDefaultIntervalS);
  throw Error(ErrorKind::kUsage, text, hint);
}

Sampler::Sampler(std::vector<std::unique_ptr<Source>> sources, double interval_s)
    : sources_(std::move(sources)), interval_s_(interval_s) {
  check_interval(interval_s);
  for (const auto& source : sources_) {
    offsets_.push_back(metrics_.size());
    for (const MetricSpec& spec : source->metrics()) metrics_.push_back(spec);
  }
}

Sampler::~Sampler() {
  try {
    stop();
  } catch (...) {
    // A destructor never throws; a source that fails in stop() loses only its last sample.
  }
}

void Sampler::take_sample(bool window_edge) {
  Sample row;
  row.tick = now_tick();
  row.tick.window_edge = window_edge;
  row.values.assign(metrics_.size(), std::nan(""));
  row.read_ns.assign(metrics_.size(), row.tick.monotonic_ns);
  for (std::size_t s = 0; s < sources_.size(); ++s) {
    std::size_t first = offsets_[s], count = sources_[s]->metrics().size();
    Readings out(std::span<double>(row.values).subspan(first, count),
                 std::span<std::string>(reasons_).subspan(first, count));
    const std::int64_t begin_ns = clock_ns(CLOCK_MONOTONIC);
    try {
      sources_[s]->read(row.tick, out);
    } catch (const std::exception& e) {
      // One broken source must not stop the others: its metrics say why they are missing.
      std::string why = std::string("reading failed: ") + e.what();
      for (std::size_t m = 0; m < count; ++m) out.missing(m, why);
    }
    const std::int64_t read_ns = begin_ns + (clock_ns(CLOCK_MONOTONIC) - begin_ns) / 2;
    for (std::size_t m = 0; m < count; ++m) row.read_ns[first + m] = read_ns;
  }
  std::lock_guard lock(mutex_);
  samples_.push_back(std::move(row));
}

void Sampler::start() {
  stop();
  {
    std::lock_guard lock(mutex_);
    samples_.clear();
    stopping_ = false;
  }
  reasons_.assign(metrics_.size(), std::string());
  window_.assign(metrics_.size(), std::nan(""));
  notes_.clear();
  cpu_seconds_ = 0;
  double cpu_before = thread_cpu_seconds();
  for (auto& source : sources_) source->begin();
  take_sample(true);
  cpu_seconds_ += thread_cpu_seconds() - cpu_before;
  thread_ = std::thread([this] { loop(); });
}

void Sampler::loop() {
  double cpu_before = thread_cpu_seconds();
  using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC
  const auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_s_));
  const auto first = Clock::now();
  auto next = first + interval;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (wake_.wait_until(lock, next, [this] { return stopping_; })) break;
    }
    take_sample(false);
    // Keep to the grid first + k * interval; when a read overran, skip the missed ticks
    // rather than sampling in a burst.
    auto now = Clock::now();
    next += interval;
    if (next <= now) next += ((now - next) / interval + 1) * interval;
  }
  cpu_seconds_ += thread_cpu_seconds() - cpu_before;
}

void Sampler::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  double cpu_before = thread_cpu_seconds();
  take_sample(true);
  finish_window();
  cpu_seconds_ += thread_cpu_seconds() - cpu_before;
}

void Sampler::finish_window() {
  for (std::size_t s = 0; s < sources_.size(); ++s) {
    std::size_t first = offsets_[s], count = sources_[s]->metrics().size();
    std::vector<std::string> ignored(count);
    Readings window(std::span<double>(window_).subspan(first, count), ignored);
    try {
      sources_[s]->end(window);
    } catch (const std::exception& e) {
      notes_.push_back(std::string("a telemetry source failed at the end of the window: ") +
                       e.what());
    }
  }
}

std::vector<Sample> Sampler::samples() const {
  std::lock_guard lock(mutex_);
  return samples_;
}

Summary Sampler::summary() const {
  std::lock_guard lock(mutex_);
  Summary summary;
  summary.interval_s = interval_s_;
  summary.samples = samples_.size();
  if (!samples_.empty()) {
    summary.start_unix_ns = samples_.front().tick.unix_ns;
    summary.duration_s = static_cast<double>(samples_.back().tick.monotonic_ns -
                                             samples_.front().tick.monotonic_ns) *
                         1e-9;
  }
  summary.sampler_cpu_s = cpu_seconds_;
  summary.metrics = summarize(metrics_, samples_, reasons_, window_, interval_s_);
  for (const auto& source : sources_)
    for (std::string& note : source->notes()) summary.notes.push_back(std::move(note));
  for (const std::string& note : notes_) summary.notes.push_back(note);
  return summary;
}

}  // namespace dlbench::telemetry
