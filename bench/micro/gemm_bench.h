// dlbench micro gemm: dense matrix-product throughput per precision, over a sweep of square
// and model-like shapes. GPUs through cuBLASLt, choosing each shape's algorithm by timing
// cuBLASLt's heuristic candidates; CPUs through oneDNN's matmul.
//
// For each precision and shape (m x n x k: C[m,n] = A[m,k] B[k,n]): 2mnk operations per
// product; the rate is operations x timed products / their time (device events on GPUs, the
// wall clock on CPUs), in TFLOP/s (TOP/s for int8, whose operations are integer ones). Each
// precision's best shape is its measured peak, which runs store for MFU (gemm_best_tag).
//
// Every product is checked after it was timed: the inputs are refilled with small whole
// numbers (micro_pattern.h), so sampled entries can be compared with an exact float64
// reference; `wrong` counts the sampled entries outside the output format's rounding.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/store/records.h"
#include "engine/core/device.h"

namespace dlbench::micro {

enum class GemmPrecision { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kInt8 };
constexpr GemmPrecision kAllGemmPrecisions[] = {
    GemmPrecision::kFp64, GemmPrecision::kFp32, GemmPrecision::kTf32, GemmPrecision::kFp16,
    GemmPrecision::kBf16, GemmPrecision::kFp8,  GemmPrecision::kInt8};

const char* to_string(GemmPrecision p);  // "bf16"
// "TFLOP/s", or "TOP/s" for int8.
const char* rate_unit(GemmPrecision p);
// What the inputs, the output and the arithmetic are: "bf16 in, bf16 out, f32 accumulate".
std::string precision_detail(GemmPrecision p, DeviceType device);
// "all" or a comma list of precision names; Error(kUsage) naming --precision otherwise.
std::vector<GemmPrecision> parse_gemm_precisions(const std::string& text);
// The precisions a device's default run covers: all seven on GPUs, fp32 and bf16 on CPUs.
std::vector<GemmPrecision> default_gemm_precisions(DeviceType device);

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::string name;  // "square", "bert-large ffn1", or "" when given by the user
};
std::string dims_text(const GemmShape& s);  // "16384x8192x8192" (m x n x k)
// A comma list of "N" (N x N x N) or "MxNxK"; Error(kUsage) naming --shapes otherwise (also
// for sizes under 1 or over kMaxGemmDim, and for int8 sizes that are not multiples of 4).
std::vector<GemmShape> parse_gemm_shapes(const std::string& text);
constexpr std::int64_t kMaxGemmDim = std::int64_t{1} << 20;
// GPUs: squares 4096^3, 8192^3, 16384x8192x8192, a BERT-large feed-forward pair and
// ResNet-50 convolutions as implicit products. CPUs: the same kinds, scaled down.
std::vector<GemmShape> default_gemm_shapes(DeviceType device);

// 2mnk.
double gemm_ops(const GemmShape& s);
// ops / seconds / 1e12; 0 when seconds is not positive.
double tera_rate(double ops, double seconds);

// The dense peak a datasheet would state, derived from the GPU's properties:
// SMs x max SM clock x dense operations per SM per clock of the architecture.
struct DatasheetPeak {
  double tera = 0;    // TFLOP/s or TOP/s
  std::string basis;  // "132 SMs x 1980 MHz x 4096 per SM per clock"
};
// Known for compute capability 8.0 (A100) and 9.0 (H100, H200); nullopt elsewhere (say "not
// known"), and for fp8 on 8.0, which has none.
std::optional<DatasheetPeak> datasheet_peak(int cc_major, int cc_minor, int sm_count,
                                            double sm_clock_mhz, GemmPrecision p);

struct GemmConfig {
  std::vector<GemmPrecision> precisions;  // empty: default_gemm_precisions
  std::vector<GemmShape> shapes;          // empty: default_gemm_shapes
  int warmup = 5;                         // untimed products before the timed ones
  int iters = 20;                         // timed products, at least
  double min_seconds = 0.2;               // more timed products until they take this long
  int algos = 32;                         // cuBLASLt candidates timed per shape (GPUs)
  std::int64_t workspace_bytes = std::int64_t{64} << 20;  // cuBLASLt's scratch (GPUs)
  int samples = 64;                                       // output entries checked per shape
  std::uint64_t seed = 42;
};
// Error(kUsage) for what cannot run: iters, samples or algos under 1, warmup under 0.
void validate(const GemmConfig& config);

struct GemmRow {
  GemmPrecision precision = GemmPrecision::kFp32;
  GemmShape shape;
  std::string skipped;    // empty when measured; else why not ("not supported on this CPU")
  double time_us = 0;     // per product
  double rate = 0;        // TFLOP/s or TOP/s
  int iters = 0;          // timed products
  std::string algorithm;  // cuBLASLt: "algo 66 tile 25"; oneDNN: its implementation
  int candidates = 0;     // cuBLASLt candidates timed to choose it
  std::int64_t checked = 0, wrong = 0;
  double max_error = 0;  // largest |got - expected| of the sampled entries
};

struct GemmSummary {
  GemmPrecision precision = GemmPrecision::kFp32;
  std::string skipped;   // set when no shape of this precision ran
  double best_rate = 0;  // the best shape's rate: the measured peak
  GemmShape best_shape;
  std::optional<DatasheetPeak> datasheet;
};

struct GemmResult {
  std::string device;   // "cuda:0", "cpu"
  std::string backend;  // "cuda:0 (NVIDIA H100 80GB HBM3)"
  std::string library;  // "cuBLASLt 13.0.2", "oneDNN 2.6.3 matmul"
  // GPUs: what datasheet_peak needs (0 on CPUs).
  int cc_major = 0, cc_minor = 0, sm_count = 0;
  double sm_clock_mhz = 0;
  GemmConfig config;  // with the precisions and shapes filled in
  std::vector<GemmRow> rows;
  std::vector<GemmSummary> summary;  // one per precision, in config order
  std::int64_t checked = 0, wrong = 0;
};

struct GemmHooks {
  std::function<void(const GemmResult&)> on_start;  // library and config known, no rows yet
  std::function<void(const GemmRow&)> on_row;
};

// Fills the config's defaults, validates it, and runs every precision and shape on `device`.
// Error(kResource) when the device does not exist; Error(kUsage) for cuda in a CPU-only build.
GemmResult run_gemm_bench(const Device& device, GemmConfig config, const GemmHooks& hooks = {});

// Each precision's summary from the rows, in config order (run_gemm_bench calls it; tests too).
std::vector<GemmSummary> summarize(const GemmConfig& config, const std::vector<GemmRow>& rows);

// How many of the sampled entries are wrong: |got - expected| > tolerance(expected, abs_sum),
// where abs_sum is sum_k |a b| (NaN is always wrong).
double gemm_tolerance(GemmPrecision p, DeviceType device, double expected, double abs_sum);

nlohmann::json to_json(const GemmResult& result);
// The stored metrics: per precision its best rate (gemm_best_tag), each shape's rate, the
// datasheet peak where known; and the wrong count.
std::vector<store::MetricRecord> metrics(const GemmResult& result);

// ---- The two implementations (gemm_cpu.cc, gemm_cuda.cc); run_gemm_bench picks one. ----
GemmResult run_gemm_cpu(const GemmConfig& config, const GemmHooks& hooks);
GemmResult run_gemm_cuda(int device_index, const GemmConfig& config, const GemmHooks& hooks);
// Whether this CPU computes in bf16 natively (AVX512-BF16 or AMX-BF16, from /proc/cpuinfo).
bool cpu_has_bf16();

}  // namespace dlbench::micro
