#include "bench/result/max_batch.h"

namespace dlbench::result {
namespace {

// The value where it is known; null where not (a reader takes null as "not measured").
template <class T>
nlohmann::json known_or_null(bool known, const T& value) {
  return known ? nlohmann::json(value) : nlohmann::json(nullptr);
}

nlohmann::json bytes_or_null(double bytes) {
  return known_or_null(bytes > 0, bytes);
}

}  // namespace

nlohmann::json to_json(const MaxBatchResult& r) {
  const RunConfig& c = r.config;
  nlohmann::json attempts = nlohmann::json::array();
  for (const BatchAttempt& a : r.attempts) {
    nlohmann::json one = {{"batch", a.batch},
                          {"fits", a.fits},
                          {"seconds", a.seconds},
                          {"throughput_samples_per_s", known_or_null(a.fits, a.throughput)},
                          {"peak_bytes", bytes_or_null(a.peak_bytes)}};
    if (!a.fits) one["error"] = a.error;
    attempts.push_back(std::move(one));
  }
  nlohmann::json config = {{"model", c.model},
                           {"mode", to_string(c.mode)},
                           {"precision", to_string(c.precision)},
                           {"device", to_string(c.launch.device)},
                           {"input_size", c.input_size},
                           {"warmup_steps", c.warmup_steps},
                           {"steps", c.steps},
                           {"graphs", c.graphs},
                           {"fusion", c.fusion},
                           {"max_batch", r.max_batch_cap}};
  config["memory_limit_bytes"] = known_or_null(c.memory_limit_bytes > 0, c.memory_limit_bytes);
  if (c.beam > 1) config["beam"] = c.beam;  // absent: greedy, or no decoding
  return {
      {"schema", "dlbench.maxbatch/1"},
      {"config", config},
      {"backend", r.backend},
      {"sample_unit", r.sample_unit},
      {"budget", {{"bytes", r.budget_bytes}, {"source", r.budget_source}}},
      {"prediction",
       {{"fixed_bytes", known_or_null(r.predicted, r.prediction.fixed_bytes)},
        {"per_sample_bytes", known_or_null(r.predicted, r.prediction.per_sample_bytes)},
        {"batch", known_or_null(r.predicted, r.predicted_batch)}}},
      // null: not even batch 1 fits.
      {"max_batch", known_or_null(r.batch > 0, r.batch)},
      {"capped", r.capped},
      {"smallest_failure", known_or_null(r.smallest_failure > 0, r.smallest_failure)},
      {"within_percent", r.within_percent},
      {"throughput_samples_per_s", known_or_null(r.batch > 0, r.throughput)},
      {"peak_bytes",
       {{"measured", bytes_or_null(r.measured_peak_bytes)},
        {"predicted", bytes_or_null(r.predicted_peak_bytes)}}},
      {"attempts", attempts},
      {"search_seconds", r.search_seconds},
  };
}

}  // namespace dlbench::result
