// dlbench run's rows for what a training run on real data learned, measured after it: NCF's
// ranking of held-out items, U-Net's Dice on held-out cases, GNMT's BLEU on a test set, and the
// nearest words of Word2Vec's vectors; none for a run without them.
#pragma once

#include "bench/result/run_result.h"
#include "cli/text_table.h"

namespace dlbench::cli {

void add_quality_rows(Section& section, const result::RunResult& run);

}  // namespace dlbench::cli
