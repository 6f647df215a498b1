// dlbench run's result rows for noise: the throughput's repeats and the noise warnings
// (bench/result/noise.h), next to the numbers they qualify.
#pragma once

#include <string>

#include "bench/result/run_result.h"
#include "cli/text_table.h"

namespace dlbench::cli {

// After the throughput: " (median of 3 repeats)"; "" without repeats.
std::string median_note(const result::RunResult& run);
// "Repeats  min 40.10, max 42.50 samples/s: range 5.8 % of the median, stddev 2.9 % ..."
void add_repeats_row(Section& section, const result::RunResult& run);
// One "Warning" row per noise warning: "step time varies 8.2 % (CV), above 5 % [high-cv]".
void add_warning_rows(Section& section, const result::RunResult& run);

}  // namespace dlbench::cli
