// The framework comparison: the same workload in dlbench's engine and in framework peers, side
// by side (dlbench compare --frameworks, and reports whose runs span frameworks).
#pragma once

#include <vector>

#include "bench/report/report_data.h"

namespace dlbench::report {

// One row per run, in the given order; ratio = throughput / native's throughput of the same
// workload. Failed runs keep their row with the error.
Table framework_table(const std::vector<store::RunRecord>& runs);

// True when the runs come from more than one framework.
bool spans_frameworks(const std::vector<store::RunRecord>& runs);

}  // namespace dlbench::report
