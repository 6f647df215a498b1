// `dlbench runs import FILE`: the inverse of `runs export --format json` (export.h), so runs
// measured on another machine can be stored here and compared with this one's.
//
// A run's identity across databases (ids are per database): its machine's fingerprint, its
// creation second, and its workload (framework, model, mode, precision, device, batch, input
// size). A run already stored with that identity is skipped, so importing a file twice stores
// it once.
#pragma once

#include <string>
#include <vector>

#include "bench/store/records.h"

namespace dlbench::store {

inline constexpr const char* kRunsSchema = "dlbench.runs/1";

// The runs of a `dlbench.runs/1` document, telemetry samples included where it has them.
// Throws dlbench::Error (usage) naming `origin` when the text is not JSON, has another schema
// or a run lacks what identifies it.
std::vector<RunRecord> parse_runs_json(const std::string& text, const std::string& origin);
// The same from a file; Error (resource) when it cannot be read.
std::vector<RunRecord> read_runs_file(const std::string& path);

// Whether two runs are the same run (the identity above).
bool same_run(const RunRecord& a, const RunRecord& b);

}  // namespace dlbench::store
