// The top of the HTML report: the machine(s) the runs measured, as a reviewer would describe
// them (GPU model x count, memory, driver/CUDA/cuDNN, power limit, interconnect, CPU), with the
// run's headline numbers (the flagship model's throughput per precision), before any detail.
#pragma once

#include <ostream>
#include <string>

#include "bench/report/report_data.h"

namespace dlbench::report {

// The report's title: the machine's name, "A vs B" for two, "N machines" for more.
std::string machine_title(const ReportData& data);

// What `machine`'s own micro benchmarks measured, looked up in `store` (ReportData::measured).
MachineMeasured measured_on(store::Store& store, const store::MachineRecord& machine);

// One card per machine: its facts (with its measured compute per precision and memory
// bandwidth), and its headline throughputs as a small table.
void write_machine_cards(const ReportData& data, std::ostream& out);

}  // namespace dlbench::report
