// A largest-batch search as the store keeps it: one run of the searched model whose mode is
// "maxbatch train" or "maxbatch infer", whose batch is the largest that fit (0: not even batch 1)
// and whose throughput is the one measured at that batch, with dlbench.maxbatch/1 as its result
// and tagged metrics (max_batch/..., memory/...). No schema change: runs, metrics and their
// migrations already hold it, in SQLite and PostgreSQL alike.
#pragma once

#include <string>

#include "bench/result/max_batch.h"
#include "bench/store/records.h"

namespace dlbench::store {

// "maxbatch train"
std::string max_batch_mode(const std::string& mode);
bool is_max_batch(const RunRecord& run);
// "train" of "maxbatch train".
std::string searched_mode(const RunRecord& run);

RunRecord max_batch_record(const result::MaxBatchResult& result);

}  // namespace dlbench::store
