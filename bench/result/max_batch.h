// The result of a largest-batch search (dlbench maxbatch): the planner's prediction, every
// attempt and what the largest batch that ran measured. The store and the report read it
// without the engine; bench/runner/max_batch.h finds it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/result/run_config.h"

namespace dlbench::result {

// One try at a batch: a whole short run (warm-up and measured steps), which either completes
// (fits) or fails with an out-of-memory error.
struct BatchAttempt {
  std::int64_t batch = 0;
  bool fits = false;
  double seconds = 0;     // wall time of the attempt, building the model included
  double throughput = 0;  // samples/s over its measured steps; 0 when it did not fit
  double peak_bytes = 0;  // the allocator's peak over its measured steps; 0 when it did not fit
  std::string error;      // the out-of-memory message when it did not fit
};

// The planner's memory at a batch: what the trainer holds before its first step (weights,
// optimizer, state, inputs, the planned activation arena), fitted as fixed + per sample x batch
// from two small probe batches. Library workspaces that steps add (cuDNN, cuBLASLt) are not in
// it, which is why the search confirms with real steps.
struct MemoryPrediction {
  double fixed_bytes = 0;
  double per_sample_bytes = 0;
  double at(std::int64_t batch) const { return fixed_bytes + per_sample_bytes * double(batch); }
};

struct MaxBatchResult {
  RunConfig config;  // what every attempt ran; its batch is the largest that fits (unset: none)
  std::string backend;
  std::string sample_unit;  // "images"
  std::int64_t max_batch_cap = 0;
  double budget_bytes = 0;    // the memory the prediction divides
  std::string budget_source;  // "--memory-limit", "free device memory", "available host memory"
  MemoryPrediction prediction;
  bool predicted = false;            // false when even the probes did not fit
  std::int64_t predicted_batch = 0;  // the prediction's largest batch (0: not even 1)
  // The largest batch that completed its steps; 0 when batch 1 did not.
  std::int64_t batch = 0;
  bool capped = false;  // the cap itself fit: the real largest batch may be larger
  // The smallest batch that ran out of memory (0: none did), and the resolution the search
  // stopped at: batches between `batch` and it were not tried.
  std::int64_t smallest_failure = 0;
  double within_percent = 0;
  double throughput = 0;
  double measured_peak_bytes = 0;      // at `batch`, over its measured steps
  double predicted_peak_bytes = 0;     // the prediction at `batch`
  std::vector<BatchAttempt> attempts;  // in the order they ran
  double search_seconds = 0;
  nlohmann::json environment = nlohmann::json::object();  // dlbench info --json
};

// dlbench.maxbatch/1: the configuration, the prediction, the attempts and the answer.
nlohmann::json to_json(const MaxBatchResult& r);

}  // namespace dlbench::result
