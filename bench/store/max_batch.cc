#include "bench/store/max_batch.h"

#include <ctime>

#include "bench/store/run_record.h"

namespace dlbench::store {
namespace {

constexpr const char* kModePrefix = "maxbatch ";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

std::string max_batch_mode(const std::string& mode) {
  return kModePrefix + mode;
}

bool is_max_batch(const RunRecord& run) {
  return run.mode.rfind(kModePrefix, 0) == 0;
}

std::string searched_mode(const RunRecord& run) {
  return is_max_batch(run) ? run.mode.substr(std::string(kModePrefix).size()) : run.mode;
}

RunRecord max_batch_record(const result::MaxBatchResult& m) {
  const nlohmann::json doc = result::to_json(m);
  RunRecord r;
  r.created_unix_s = std::time(nullptr);
  r.model = m.config.model;
  r.mode = max_batch_mode(to_string(m.config.mode));
  r.precision = to_string(m.config.precision);
  r.device = to_string(m.config.launch.device);
  r.batch = m.batch;
  r.input_size = m.config.input_size;
  r.throughput = m.batch > 0 ? m.throughput : 0;
  r.config = doc["config"];
  r.result = doc;
  if (m.environment.contains("dlbench")) r.result["dlbench"] = m.environment["dlbench"];
  r.machine = machine_record(m.environment);
  auto add = [&](std::string tag, double value, std::string unit, std::string what) {
    r.metrics.push_back({std::move(tag), value, std::move(unit), std::move(what)});
  };
  add("max_batch/batch", double(m.batch), "samples",
      "the largest batch that completed its steps; 0: not even batch 1");
  if (m.predicted)
    add("max_batch/predicted_batch", double(m.predicted_batch), "samples",
        "the largest batch the planner's memory and the budget predicted");
  add("max_batch/budget_gib", m.budget_bytes / kGiB, "GiB",
      "the memory budget: " + m.budget_source);
  add("max_batch/attempts", double(m.attempts.size()), "runs", "batches tried");
  add("max_batch/search_s", m.search_seconds, "s", "wall time of the whole search");
  if (m.batch > 0) {
    add("throughput/samples_per_s", m.throughput, "samples/s", "at the largest batch");
    add("memory/allocated_peak_gib", m.measured_peak_bytes / kGiB, "GiB",
        "the allocator's peak over the measured steps at the largest batch");
    if (m.predicted)
      add("memory/predicted_peak_gib", m.predicted_peak_bytes / kGiB, "GiB",
          "what the planner predicted the trainer holds at the largest batch");
  }
  return r;
}

}  // namespace dlbench::store
