// Perf mode of the op harness (dlbench_ops --perf): times every case that matches a filter on
// one backend variant and precision, with the backend's DeviceTimer (CUDA events on CUDA, the
// host clock on the CPU), and prints ms per run(), TFLOP/s (where the case counts its FLOPs)
// and GB/s (the bytes of every tensor the case passes, read or written once). A tool, not a
// test: speed is measured by benchmarks.
#pragma once

#include <string>

namespace dlbench::op_harness {

struct PerfOptions {
  std::string backend = "cpu";
  std::string precision = "f32";
  std::string filter;  // a substring of ops/perf/<op>.<params>; empty: every case
  int repeats = 20;
  bool show_conv_routes = false;  // afterwards, each convolution's measured routes (CUDA)
};

// Returns the process exit status (2: a bad option value).
int run_perf(const PerfOptions& options);

}  // namespace dlbench::op_harness
