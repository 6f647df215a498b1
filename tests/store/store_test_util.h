// Made-up runs for the store tests: every field set, so a round trip checks every column.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "bench/store/records.h"

namespace dlbench::testing {

inline store::RunRecord sample_run(const std::string& model = "resnet50",
                                   double throughput = 812.5) {
  store::RunRecord r;
  r.created_unix_s = 1'790'000'000;
  r.model = model;
  r.mode = "train";
  r.precision = "fp16";
  r.device = "cuda:0";
  r.batch = 128;
  r.input_size = 224;
  r.throughput = throughput;
  r.config = {{"model", model}, {"batch", 128}};
  r.result = {{"measured_seconds", 2.0}, {"step_time_ms", {{"median", 157.5}}}};
  r.machine.fingerprint = "00112233445566778899";
  r.machine.hostname = "box";
  r.machine.description = "test CPU, 1x test GPU";
  r.machine.environment = {{"host", {{"hostname", "box"}, {"cores", 8}}},
                           {"gpus", nlohmann::json::array()}};
  r.metrics = {{"throughput/samples_per_s", throughput, "samples/s", "samples / measured time"},
               {"step_time/p95_ms", 160.25, "ms", "95th percentile"}};
  store::TelemetryMetricRecord t;
  t.name = "gpu0.sm_active";
  t.label = "SM activity";
  t.unit = "%";
  t.kind = "interval_average";
  t.samples = 3;
  t.mean = 71.5;
  t.max = 90;
  store::TelemetryMetricRecord missing;
  missing.name = "gpu0.energy";
  missing.unit = "W";
  missing.kind = "counter";
  missing.reason = "not supported";
  r.telemetry = {t, missing};
  r.samples = {{"gpu0.sm_active", "%", {0, 0.5, 1.0}, {60, 70, 90}}};
  return r;
}

// A fresh folder under the test temp dir.
inline std::string temp_folder(const std::string& name) {
  std::filesystem::path p = std::filesystem::path(::testing::TempDir()) /
                            ("dlbench-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

}  // namespace dlbench::testing
