// What a run on real data learned, beside how fast it ran: the quality measures a training run
// stores after scoring its data's held-out part (NCF's HR@10 and NDCG@10 against a popularity
// baseline, U-Net's Dice per class), one row per measure, with the data they were measured on.
#pragma once

#include <vector>

#include "bench/report/report_data.h"

namespace dlbench::report {

// Rows for the runs' "quality/..." metrics in run order; no rows when no run stored any.
Table quality_table(const std::vector<store::RunRecord>& runs);

}  // namespace dlbench::report
