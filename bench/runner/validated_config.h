// A run's configuration made runnable: defaults filled, every value checked against what the
// engine and the model can take (the model registry lives here, above the result types).
#pragma once

#include "bench/result/run_config.h"

namespace dlbench::runner {

// Fills defaults (after validation batch is set) and rejects impossible values with
// ConfigError: every number finite and in range, the model known and its input size one it
// takes, so a suite fails before its first run and nothing is stored for a run that cannot be.
result::RunConfig validated(result::RunConfig config);

// The batch a run of this configuration takes when none is given: the model's default for the
// mode. Throws a usage Error for an unknown model.
std::int64_t default_batch(const result::RunConfig& config);

}  // namespace dlbench::runner
