// dlbench maxbatch results in a report: the "Largest batch" table and, per mode, a chart of the
// largest batch per model and precision. One row per machine, device, model, mode, precision and
// input: the newest search wins. A model that does not fit even at batch 1 says so in words.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/report/report_data.h"

namespace dlbench::report {

// What a search that fit nothing shows in place of a batch.
extern const char* const kDoesNotFit;

Table max_batch_table(const ReportData& data);
// Appends the charts (section "Largest batch") to `charts`; none without searches.
void max_batch_charts(const ReportData& data, nlohmann::json& charts);

}  // namespace dlbench::report
