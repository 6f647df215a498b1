#include "bench/result/run_result.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "bench/telemetry/telemetry_json.h"

namespace dlbench::result {

namespace {

// JSON has no NaN or infinity: a diverged loss is null.
nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// A float as the double its shortest decimal names: a learning rate of 0.001f is stored as
// 0.001, not as 0.0010000000474974513 (the float widened).
double decimal_value(float v) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text - 1, v);
  if (ec != std::errc()) return v;
  *end = '\0';
  return std::strtod(text, nullptr);
}

nlohmann::json telemetry_json(const RunResult& r) {
  if (!r.telemetry) return nullptr;
  nlohmann::json j = telemetry::to_json(r.telemetry->summary);
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : r.telemetry->gpus) gpus.push_back(telemetry::to_json(g));
  j["gpus"] = gpus;
  return j;
}

// Every repeat's figures, and the spread the terminal and compare read back.
nlohmann::json repeats_json(const Repeats& repeats) {
  nlohmann::json runs = nlohmann::json::array();
  std::vector<double> rates;
  for (const Repeat& each : repeats.runs) {
    rates.push_back(each.throughput);
    nlohmann::json codes = nlohmann::json::array();
    for (const NoiseWarning& w : each.warnings) codes.push_back(w.code);
    runs.push_back({{"throughput_samples_per_s", each.throughput},
                    {"measured_steps", each.measured_steps},
                    {"measured_seconds", each.measured_seconds},
                    {"warnings", codes}});
  }
  const SpreadStats s = spread_stats(rates);
  nlohmann::json doc{{"requested", repeats.requested},
                     {"count", s.count},
                     {"shown", repeats.shown + 1},
                     {"throughputs_samples_per_s", rates},
                     {"median_samples_per_s", s.median},
                     {"min_samples_per_s", s.min},
                     {"max_samples_per_s", s.max},
                     {"range_percent", 100 * s.range},
                     {"runs", runs}};
  if (std::isfinite(s.stddev)) doc["stddev_percent"] = 100 * s.stddev;
  return doc;
}

}  // namespace

InputSizeKind input_size_kind(const std::string& sample_unit) {
  if (sample_unit == "volumes") return InputSizeKind::kVolumeSide;
  if (sample_unit.empty() || sample_unit == "samples" || sample_unit == "images")
    return InputSizeKind::kImageSide;
  return InputSizeKind::kSequenceLength;
}

void add_metric(RunResult& r, std::string tag, double value, std::string unit,
                std::string description) {
  r.metrics.push_back({std::move(tag), value, std::move(unit), std::move(description)});
}

const Metric* find_metric(const RunResult& r, const std::string& tag) {
  for (const Metric& m : r.metrics)
    if (m.tag == tag) return &m;
  return nullptr;
}

void add_padded_tokens_metric(RunResult& r, std::int64_t tokens_per_sample) {
  add_metric(r, "throughput/tokens_per_s", r.throughput * static_cast<double>(tokens_per_sample),
             "tokens/s",
             "tokens per second, padding included (samples/s x " +
                 std::to_string(tokens_per_sample) + " tokens)");
}

void add_decoding_metrics(RunResult& r, double translated_tokens, double sentences,
                          std::int64_t max_length) {
  const std::string search =
      r.config.beam > 1 ? "beam search of " + std::to_string(r.config.beam) : "greedy decoding";
  add_metric(r, "throughput/tokens_per_s", translated_tokens / r.measured_seconds, "tokens/s",
             "translated tokens per second, " + search + " ([EOS] included, padding not)");
  add_metric(
      r, "decoding/tokens_per_sentence", translated_tokens / sentences, "tokens",
      "the translations' mean length, [EOS] included (at most " + std::to_string(max_length) + ")");
}

void add_timing_metrics(RunResult& r, const std::string& measured,
                        const std::string& flops_counted) {
  add_metric(r, "throughput/samples_per_s", r.throughput, "samples/s",
             "samples in the measured steps / " + measured);
  add_metric(r, "step_time/mean_ms", r.step.mean_ms, "ms", "mean time of one measured step");
  add_metric(r, "step_time/median_ms", r.step.median_ms, "ms", "median step time");
  add_metric(r, "step_time/p5_ms", r.step.p5_ms, "ms", "5th percentile step time");
  add_metric(r, "step_time/p95_ms", r.step.p95_ms, "ms", "95th percentile step time");
  if (std::isfinite(r.step.cv))  // one step has none
    add_metric(r, "step_time/cv", r.step.cv, "ratio",
               "coefficient of variation of step times (noise)");
  add_metric(r, "compute/flops_per_sample", r.flops_per_sample, "FLOP", flops_counted);
  add_metric(r, "compute/achieved_gflops", r.flops_per_sample * r.throughput / 1e9, "GFLOP/s",
             "flops per sample x throughput");
}

namespace {

nlohmann::json passes_json(const std::vector<std::pair<std::string, int>>& passes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, rewrites] : passes)
    out.push_back({{"pass", name}, {"rewrites", rewrites}});
  return out;
}

}  // namespace

nlohmann::json to_json(const RunResult& r) {
  using nlohmann::json;
  const RunConfig& c = r.config;
  json metrics = json::array();
  for (const Metric& m : r.metrics)
    metrics.push_back(
        {{"tag", m.tag}, {"value", m.value}, {"unit", m.unit}, {"description", m.description}});
  json doc{
      {"schema", "dlbench.run/1"},
      {"config",
       {{"model", c.model},
        {"framework", c.framework},
        {"mode", to_string(c.mode)},
        {"batch", c.batch.value_or(0)},
        {"precision", to_string(c.precision)},
        {"device", to_string(c.launch.device)},
        {"input_size", c.input_size},
        {"warmup_steps", c.warmup_steps},
        {"steps", c.steps},
        {"seconds", c.seconds},
        {"seed", c.seed},
        {"learning_rate", decimal_value(c.learning_rate)},
        {"momentum", decimal_value(c.momentum)},
        {"telemetry", c.telemetry},
        {"telemetry_interval_s", c.telemetry_interval_s},
        {"graphs", c.graphs},
        {"fusion", c.fusion},
        {"repeat", c.repeat}}},
      {"model_description", r.model_description},
      {"sample_unit", r.sample_unit},
      {"backend", r.backend},
      {"device_graphs", r.graphs},
      {"passes", passes_json(r.passes)},
      {"parameters", r.parameters},
      {"flops_per_sample", r.flops_per_sample},
      {"measured_steps", r.measured_steps},
      {"measured_seconds", r.measured_seconds},
      {"throughput_samples_per_s", r.throughput},
      {"step_time_ms",
       {{"mean", r.step.mean_ms},
        {"median", r.step.median_ms},
        {"p5", r.step.p5_ms},
        {"p95", r.step.p95_ms},
        {"min", r.step.min_ms},
        {"max", r.step.max_ms},
        {"cv", r.step.cv}}},
      {"loss", {{"first", finite_or_null(r.first_loss)}, {"last", finite_or_null(r.last_loss)}}},
      {"metrics", metrics},
      {"warnings", to_json(noise_warnings(r))},
      {"telemetry", telemetry_json(r)},
      {"environment", r.environment},
  };
  if (!c.class_weights.empty()) {  // only where given, so other runs' documents stay as they were
    json weights = json::array();
    for (float w : c.class_weights) weights.push_back(decimal_value(w));
    doc["config"]["class_weights"] = weights;
  }
  if (r.data_parallel) {
    const DataParallel& dp = *r.data_parallel;
    doc["config"]["launch"] = dp.launch;
    doc["config"]["replicas"] = dp.replicas;
    doc["config"]["global_batch"] = dp.global_batch;
    doc["config"]["bucket_mb"] = c.bucket_mb;
    doc["data_parallel"] = {{"replicas", dp.replicas},
                            {"launch", dp.launch},
                            {"communicator", dp.communicator},
                            {"interconnect", dp.interconnect},
                            {"global_batch", dp.global_batch},
                            {"buckets", dp.buckets},
                            {"replicas_identical", dp.replicas_identical},
                            {"replica_seconds", dp.replica_seconds}};
    if (!dp.replica_steps.empty())
      doc["data_parallel"]["replica_steps_origin_ms"] = dp.replica_steps_origin_ms;
    for (const ReplicaSteps& steps : dp.replica_steps)
      doc["data_parallel"]["replica_steps"].push_back(
          {{"start_ms", steps.start_ms}, {"ms", steps.ms}});
  }
  if (c.memory_limit_bytes > 0) doc["config"]["memory_limit_bytes"] = c.memory_limit_bytes;
  if (c.beam > 1) doc["config"]["beam"] = c.beam;       // absent: greedy, or no decoding
  if (!c.data.empty()) doc["config"]["data"] = c.data;  // absent: synthetic data
  if (!c.test_data.empty()) doc["config"]["test_data"] = c.test_data;
  if (!r.data_description.empty()) doc["data_description"] = r.data_description;
  for (const WordNeighbours& n : r.neighbours) {
    nlohmann::json nearest = nlohmann::json::array();
    for (const Neighbour& near : n.nearest)
      nearest.push_back({{"word", near.word}, {"cosine", near.cosine}});
    doc["neighbours"].push_back({{"word", n.word}, {"nearest", nearest}});
  }
  if (!r.peer.is_null()) doc["peer"] = r.peer;
  if (!r.interrupted.empty()) doc["interrupted"] = r.interrupted;
  if (r.measured_steps == 0) {
    // Stopped before its first measured step: no rate, and no step times or measured loss.
    doc["throughput_samples_per_s"] = nullptr;
    doc.erase("step_time_ms");
    doc.erase("loss");
  }
  // One step has no CV: the key is left out (readers take a missing key as unknown).
  if (doc.contains("step_time_ms") && !std::isfinite(r.step.cv)) doc["step_time_ms"].erase("cv");
  if (r.layer_profile) doc["layer_profile"] = to_json(*r.layer_profile);
  if (r.repeats) doc["repeats"] = repeats_json(*r.repeats);
  return doc;
}

}  // namespace dlbench::result
