// Where a run finds the measured peak of its precision (issue 19, MFU): the newest stored
// `dlbench micro gemm` of the same machine and device. The micro benchmark writes the metric
// named by gemm_best_tag; this reads it back, so writer and reader share one name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bench/store/store.h"

namespace dlbench::store {

// The workload column of a stored micro benchmark: "micro gemm", "micro bandwidth", ...
std::string micro_workload(const std::string& benchmark);
// "gemm/bf16/best": the best TFLOP/s (int8: TOP/s) of that precision over the shapes measured.
std::string gemm_best_tag(const std::string& precision);

struct MeasuredPeak {
  double value = 0;  // TFLOP/s, or TOP/s for int8
  std::string unit;
  std::string precision;  // "bf16"
  std::string device;     // "cuda:0"
  std::int64_t run_id = 0;
  std::int64_t created_unix_s = 0;
  std::string description;  // the metric's: which shape gave it
};

// The newest ok `micro gemm` run on `machine` (id, hostname or fingerprint prefix, as
// RunFilter) and `device` that measured `precision`; nullopt when none did, and when the store
// has no such machine (or the text names several).
std::optional<MeasuredPeak> newest_measured_peak(Store& store, const std::string& machine,
                                                 const std::string& device,
                                                 const std::string& precision);

// The newest ok `micro bandwidth` run on `machine` and `device`: its fastest test (copy or triad,
// "bandwidth/<test>/best" in GB/s; `precision` holds the test's name); nullopt when none.
std::optional<MeasuredPeak> newest_measured_bandwidth(Store& store, const std::string& machine,
                                                      const std::string& device);

}  // namespace dlbench::store
