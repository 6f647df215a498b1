// The largest batch a model trains (or infers) at without running out of device memory.
//
// The planner knows what a trainer holds before its first step, so two small probe batches give
// memory as fixed + per sample x batch, and the budget (the --memory-limit, else the device's
// free memory, or on a CPU the host's available memory) gives a predicted largest batch. Real
// runs then confirm it: from the prediction the search gallops (steps that double) up while
// batches fit or down while they do not, then bisects between the largest batch that fit and
// the smallest that did not, until they are neighbours or within --within percent of each other
// (each attempt measures every convolution's algorithms anew at its batch, 26 s for VGG16 fp16
// near batch 2,500 on an H100, so 1 % saves about half the attempts there, while a search
// below batch 200 stays exact). An out-of-memory error is an answer, not an end: every attempt
// builds its own backend and trainer, and all of it is freed before the next (RAII), so the
// process and the device stay usable. On a GPU one unreported step at batch 1 comes first, so
// CUDA loads the model's kernels while the device has room (max_batch.cc says why); the
// search's time includes it.
#pragma once

#include <cstdint>
#include <functional>

#include "bench/result/max_batch.h"
#include "bench/result/run_config.h"

namespace dlbench::runner {

// Short runs are enough to show a batch fits: the warm-up step holds the one-off scratch of
// algorithm searches, the measured ones the steady state (and a throughput).
constexpr int kMaxBatchWarmupSteps = 1;
constexpr int kMaxBatchMeasuredSteps = 3;
// The largest batch searched when none is given: a GPU's search ends at its memory long before;
// a CPU's host memory can be large and its steps slow, so its search stays short by default.
constexpr std::int64_t kDefaultMaxBatchCap = 65536;
constexpr std::int64_t kDefaultCpuMaxBatchCap = 256;
// The planner's probes: two batches small enough to fit wherever the model fits at all.
constexpr std::int64_t kProbeBatchSmall = 1;
constexpr std::int64_t kProbeBatchLarge = 2;
// The first galloping step is this fraction of the first batch (at least 1), so a good
// prediction is confirmed in a few attempts.
constexpr std::int64_t kFirstStepDivisor = 8;
// The default resolution of the search, in percent of the largest batch that fits.
constexpr double kDefaultWithinPercent = 1.0;

struct MaxBatchSearch {
  result::RunConfig config;        // batch ignored; memory_limit_bytes honoured
  std::int64_t max_batch_cap = 0;  // 0: the device's default cap
  std::int64_t first_batch = 0;    // 0: start at the prediction
  // Stop once the smallest batch that failed is at most this percent above the largest that
  // fit (and always once they are neighbours); 0: exact.
  double within_percent = kDefaultWithinPercent;
};

struct MaxBatchHooks {
  // After the prediction, before the first attempt.
  std::function<void(const result::MaxBatchResult&)> on_predicted;
  std::function<void(std::int64_t batch)> on_attempt_start;
  std::function<void(const result::BatchAttempt&)> on_attempt;
};

// Single-device configurations only. Errors other than out of memory (kResource) end the search.
result::MaxBatchResult find_max_batch(const MaxBatchSearch& search,
                                      const MaxBatchHooks& hooks = {});

}  // namespace dlbench::runner
