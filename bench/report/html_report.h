// The HTML report: one self-contained file (Chart.js, data and styles inline; nothing is
// fetched when it opens) with the charts of charts.h and the tables of report_data.h.
#pragma once

#include <ostream>

#include "bench/report/report_data.h"

namespace dlbench::report {

void write_html(const ReportData& data, std::ostream& out);

}  // namespace dlbench::report
