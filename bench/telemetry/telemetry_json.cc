#include "bench/telemetry/telemetry_json.h"

namespace dlbench::telemetry {
namespace {

using nlohmann::json;

template <class T>
json value_or_null(const Reported<T>& r) {
  return r.available() ? json(r.value()) : json(nullptr);
}

}  // namespace

json to_json(const MetricSummary& m) {
  json j;
  j["label"] = m.spec.label;
  j["unit"] = m.spec.unit;
  j["kind"] = to_string(m.spec.kind);
  j["samples"] = m.samples;
  if (m.spec.kind == MetricKind::kBitmask) {
    j["mask"] = value_or_null(m.mask);
    j["flags"] = m.mask.available() ? json(bit_names(m.spec, m.mask.value())) : json(nullptr);
    // Per flag that was ever set: the percentage of the window it was set for.
    json share = json::object();
    for (std::size_t bit = 0; bit < m.bit_share.size(); ++bit)
      if (m.bit_share[bit] > 0)
        share[bit_names(m.spec, std::uint64_t{1} << bit).front()] = 100.0 * m.bit_share[bit];
    if (m.mask.available()) j["share_percent"] = std::move(share);
  } else {
    j["mean"] = value_or_null(m.mean);
    j["min"] = value_or_null(m.min);
    j["max"] = value_or_null(m.max);
    j["p95"] = value_or_null(m.p95);
  }
  if (m.spec.kind == MetricKind::kCounter) {
    j["total"] = value_or_null(m.total);
    j["total_unit"] = m.spec.total_unit;
  }
  if (m.window.available()) j["window"] = m.window.value();
  if (!m.available()) j["unavailable"] = m.reason;
  return j;
}

json to_json(const Summary& s) {
  json j;
  j["schema"] = "dlbench.telemetry/1";
  j["interval_s"] = s.interval_s;
  j["start_unix_s"] = static_cast<double>(s.start_unix_ns) * 1e-9;
  j["duration_s"] = s.duration_s;
  j["samples"] = s.samples;
  j["sampler_cpu_s"] = s.sampler_cpu_s;
  j["sampler_cpu_percent"] = s.duration_s > 0 ? 100.0 * s.sampler_cpu_s / s.duration_s : 0.0;
  json metrics = json::object();
  for (const MetricSummary& m : s.metrics) metrics[m.spec.name] = to_json(m);
  j["metrics"] = std::move(metrics);
  j["notes"] = s.notes;
  return j;
}

json to_json(const GpuIdentity& gpu) {
  json j;
  j["index"] = gpu.index;
  j["name"] = gpu.name;
  j["uuid"] = value_or_null(gpu.uuid);
  j["pci_bus_id"] = value_or_null(gpu.pci_bus_id);
  json unavailable = json::object();
  if (!gpu.uuid.available()) unavailable["uuid"] = gpu.uuid.reason();
  if (!gpu.pci_bus_id.available()) unavailable["pci_bus_id"] = gpu.pci_bus_id.reason();
  if (!unavailable.empty()) j["unavailable"] = unavailable;
  return j;
}

}  // namespace dlbench::telemetry
