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

void MeasuredWindow::prepare() {
  if (!enabled_ || began_ || sources_) return;
  sources_ = std::make_unique<SourceSet>(make_sources({root_, selection_, nvml_}));
}

void MeasuredWindow::begin() {
  if (!enabled_ || began_) return;
  prepare();
  began_ = true;
  gpus_ = std::move(sources_->gpus);
  gpus_none_reason_ = std::move(sources_->gpus_none_reason);
  notes_ = std::move(sources_->notes);
  sampler_ = std::make_unique<Sampler>(std::move(sources_->sources), interval_s_);
  sources_.reset();
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
