#include "bench/telemetry/window.h"

#include "bench/telemetry/sampler.h"
#include "bench/telemetry/sources.h"

namespace dlbench::telemetry {

MeasuredWindow::MeasuredWindow(bool enabled, pid_t root, double interval_s,
                               std::shared_ptr<const nvml::Nvml> nvml, GpuSelection gpus)
    : enabled_(enabled),
      root_(root),
      interval_s_(interval_s),
      nvml_(std::move(nvml)),
      selection_(std::move(gpus)) {}

MeasuredWindow::~MeasuredWindow() = default;  // ~Sampler stops it without throwing

void MeasuredWindow::begin() {
  if (!enabled_ || began_) return;
  began_ = true;
  SourceSet sources = make_sources({root_, selection_, nvml_});
  gpus_ = std::move(sources.gpus);
  gpus_none_reason_ = std::move(sources.gpus_none_reason);
  notes_ = std::move(sources.notes);
  sampler_ = std::make_unique<Sampler>(std::move(sources.sources), interval_s_);
  sampler_->start();
}

void MeasuredWindow::end() {
  if (sampler_) sampler_->stop();
}

std::optional<Recording> MeasuredWindow::take() {
  if (!sampler_) return std::nullopt;
  sampler_->stop();
  Recording r{sampler_->summary(), sampler_->metrics(), sampler_->samples(), std::move(gpus_),
              std::move(gpus_none_reason_)};
  for (std::string& note : notes_) r.summary.notes.push_back(std::move(note));
  sampler_.reset();
  return r;
}

}  // namespace dlbench::telemetry
