// A micro-benchmark's result as the store keeps it: one run whose workload (the model column)
// is "micro gemm", "micro bandwidth", ..., mode "micro", with the benchmark's JSON as its result
// and tagged metrics (gemm: per precision its best rate, read back by
// store::newest_measured_peak). A result with wrong elements is stored as failed, so no later
// run takes its figures for a peak.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/store/records.h"

namespace dlbench::micro {

struct MicroRecordInput {
  std::string benchmark;  // "gemm"
  std::string device;     // "cuda:0", "cpu", "4x cuda" (p2p)
  std::string precision;  // gemm: the precisions measured, "fp32,bf16"; others empty
  nlohmann::json result;  // the benchmark's to_json, with its "config"
  std::vector<store::MetricRecord> metrics;
  nlohmann::json environment;  // dlbench info --json of this machine
  std::int64_t wrong = 0;
};

store::RunRecord micro_record(const MicroRecordInput& input);

}  // namespace dlbench::micro
