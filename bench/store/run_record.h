// From what a run measured to what the store keeps: the run's result, the machine it ran on
// (with a fingerprint that deduplicates machines), and the telemetry of its measured phase.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/result/run_result.h"
#include "bench/store/records.h"
#include "bench/telemetry/summary.h"

namespace dlbench::store {

// The machine of a `dlbench info --json` document. The fingerprint covers the hardware and the
// system software (host, GPUs, driver and libraries) but not dlbench's own build, which each
// run keeps in its result, nor what changes from minute to minute (the current PCIe link).
MachineRecord machine_record(const nlohmann::json& environment);

// With the telemetry of the measured phase when the run sampled it. An interrupted run
// (RunResult::interrupted) gets status "interrupted" and its note as the error.
RunRecord run_record(const result::RunResult& result);

// A run that failed before it measured anything: stored so a suite shows it, and so --resume
// runs it again.
RunRecord failed_run_record(const result::RunConfig& config, const nlohmann::json& environment,
                            const std::string& error);

// The configuration as the store's columns: model, mode, precision, device, batch, input.
void set_config_columns(RunRecord& record, const result::RunConfig& config);

}  // namespace dlbench::store
