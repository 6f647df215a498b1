// What the report shows of a run's telemetry, in the order a GPU reviewer reads it: SM, tensor
// and DRAM activity, the SM and memory clocks, power against its limit, temperature, whether
// the clocks were throttled and for how long, then memory, kernel busy (which reads 100 % on
// any busy GPU and says little) and memory busy (NVML's, for GPUs without GPM); for CPU runs the
// process's CPU and memory.
#pragma once

#include <string>
#include <vector>

#include "bench/report/report_data.h"

namespace dlbench::report {

struct ShownMetric {
  std::string name;  // "sm_active" for a GPU metric (per GPU: "gpuN.sm_active"), else "process.cpu"
  bool per_gpu = true;
  std::string title;   // "SM clock"
  std::string unit;    // as shown: "MHz", "GiB", "°C"
  std::string column;  // a short table header with the unit: "SM clock MHz", "temp. max °C"
};

// The metrics the report shows, in order.
const std::vector<ShownMetric>& shown_metrics();
// The shown metric of a stored telemetry name ("gpu1.sm_clock" -> SM clock); nullptr for one
// the report does not show.
const ShownMetric* shown_metric(const std::string& telemetry_name);
// A stored value in the shown unit (bytes -> GiB).
double shown_value(const ShownMetric& metric, double stored);

// The highest power limit of the run's GPUs, from its machine's environment (NVML's power
// management limit when the run started); NaN when unknown.
double power_limit_w(const store::RunRecord& run);
// The highest maximum SM clock of the run's GPUs (NVML's max clock, in the machine's
// environment); NaN when unknown. The SM clock under load as a percentage of it is a percent of
// a peak the data really has.
double max_sm_clock_mhz(const store::RunRecord& run);
// The GPU index of a telemetry name ("gpu3.power" -> 3); -1 for a host metric.
int gpu_index(const std::string& telemetry_name);

// "throttled: power cap during 40 % of the run" (the clock-event reasons that slow the clocks:
// power cap, power brake, thermal and hardware slowdowns; the largest share over the run's
// GPUs); "not throttled" when the reasons were sampled and none of those was set; "" when
// the run has no clock-event telemetry.
std::string throttle_text(const store::RunRecord& run);
bool throttled(const store::RunRecord& run);

// True when any run has GPU telemetry with a value.
bool has_gpu_telemetry(const std::vector<store::RunRecord>& runs);

// One row per run: the shown metrics' means (temperature: max), power mean against its limit,
// and the throttle flag. Columns no run has a value for are left out.
Table telemetry_summary_table(const ReportData& data);

}  // namespace dlbench::report
